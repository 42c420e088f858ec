/**
 * The shop's public product feed (`{shop_url}/.well-known/merchant-center/rss.xml`, a Google
 * Merchant Center RSS document) parsed into typed items with fast-xml-parser.
 *
 * Contract: `parseProductFeed(xml, call)` resolves to the channel title/link and one item per
 * `<item>`, reading both `g:`-prefixed and plain tags; the item id falls back to `<guid>` then
 * the link. A document without `rss.channel`, or an item with no id or title, raises
 * FourthwallSchemaError naming the field (e.g. `items[2].id`). Prices like `25.00 USD` become
 * `{ value: 25, currency: 'USD' }`.
 *
 * Deliberately not here: fetching (client.ts) and any caching.
 */
import type { XMLParser as XMLParserType } from 'fast-xml-parser';
import { z } from 'zod';
import type { FourthwallCallInfo } from './errors.js';
import { FourthwallSchemaError } from './errors.js';
import { parseWire } from './schemas.js';

const FeedItemSchema = z.object({
  id: z.string().min(1),
  title: z.string().min(1),
  link: z.string().optional(),
  description: z.string().optional(),
  imageLink: z.string().optional(),
  availability: z.string().optional(),
  price: z.object({ value: z.number(), currency: z.string() }).optional(),
  salePrice: z.object({ value: z.number(), currency: z.string() }).optional(),
  itemGroupId: z.string().optional(),
  brand: z.string().optional(),
  condition: z.string().optional(),
});

const FeedSchema = z.object({
  title: z.string().optional(),
  link: z.string().optional(),
  items: z.array(FeedItemSchema),
});

export type ProductFeedItem = z.infer<typeof FeedItemSchema>;
export type ProductFeed = z.infer<typeof FeedSchema>;

function text(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') {
    const s = String(v).trim();
    return s === '' ? undefined : s;
  }
  if (Array.isArray(v)) return text(v[0]);
  if (typeof v === 'object' && '#text' in v) return text((v as Record<string, unknown>)['#text']);
  return undefined;
}

function price(v: unknown): { value: number; currency: string } | undefined {
  const s = text(v);
  if (!s) return undefined;
  const m = /^([0-9]+(?:[.,][0-9]+)?)\s*([A-Za-z]{3})$/.exec(s);
  if (!m) return undefined;
  return { value: Number(m[1]!.replace(',', '.')), currency: m[2]!.toUpperCase() };
}

/** fast-xml-parser, loaded on the first feed (a link giveaway's product look-up), not at start-up. */
let XMLParserClass: typeof XMLParserType | undefined;
async function xmlParser(): Promise<typeof XMLParserType> {
  return (XMLParserClass ??= (await import('fast-xml-parser')).XMLParser);
}

/** Parses a merchant-center RSS document (see the module header). */
export async function parseProductFeed(xml: string, call: FourthwallCallInfo): Promise<ProductFeed> {
  const XMLParser = await xmlParser();
  const parser = new XMLParser({
    ignoreAttributes: true,
    removeNSPrefix: true,
    parseTagValue: false,
    trimValues: true,
    htmlEntities: false,
    isArray: (_name, jpath) => jpath === 'rss.channel.item',
  });
  let doc: Record<string, unknown>;
  try {
    doc = parser.parse(xml) as Record<string, unknown>;
  } catch {
    throw new FourthwallSchemaError('', ['<root>: feed is not well-formed XML'], call);
  }
  const rss = doc.rss as Record<string, unknown> | undefined;
  const channel = rss && typeof rss === 'object' ? (rss.channel as Record<string, unknown> | undefined) : undefined;
  if (!channel || typeof channel !== 'object')
    throw new FourthwallSchemaError('rss.channel', ['rss.channel: missing'], call);
  const rawItems = Array.isArray(channel.item) ? (channel.item as Record<string, unknown>[]) : [];
  const items = rawItems.map((it) => {
    const link = text(it.link);
    return {
      id: text(it.id) ?? text(it.guid) ?? link,
      title: text(it.title),
      link,
      description: text(it.description),
      imageLink: text(it.image_link),
      availability: text(it.availability),
      price: price(it.price),
      salePrice: price(it.sale_price),
      itemGroupId: text(it.item_group_id),
      brand: text(it.brand),
      condition: text(it.condition),
    };
  });
  return parseWire(
    FeedSchema,
    { title: text(channel.title), link: text(channel.link), items: items.map(dropUndefined) },
    call,
  );
}

function dropUndefined<T extends Record<string, unknown>>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}
