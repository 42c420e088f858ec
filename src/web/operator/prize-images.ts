/**
 * `GET /overlay/prize/<product id>`: the prize's image, fetched by the bot from the shop and served
 * from the bot's own origin, so the overlay page never holds an outside address (its CSP allows
 * same-origin images only).
 *
 * Contract: the product is looked up through the ShopPort (getProduct -> imageUrl); only http(s)
 * answers with an `image/*` type up to MAX_BYTES within TIMEOUT_MS are served; at most CACHE_SIZE
 * images are kept, and a miss is remembered for MISS_MS. Anything else answers 404. The image
 * response carries its own CSP (`sandbox`) so an SVG can never run script. Does not log URLs.
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from '../../logging/index.js';
import type { ShopPort } from '../../giveaway/ports.js';

const MAX_BYTES = 2 * 1024 * 1024;
const TIMEOUT_MS = 5_000;
const CACHE_SIZE = 32;
const MISS_MS = 60_000;

type Entry = { type: string; body: Buffer } | { missUntil: number };

export class PrizeImages {
  private readonly cache = new Map<string, Promise<Entry>>();

  constructor(
    private readonly shop: Pick<ShopPort, 'getProduct'>,
    private readonly logger: Logger,
  ) {}

  async handle(res: ServerResponse, productId: string): Promise<void> {
    let pending = this.cache.get(productId);
    const cached = pending ? await pending : undefined;
    if (!pending || (cached && 'missUntil' in cached && cached.missUntil < Date.now())) {
      pending = this.load(productId);
      this.cache.set(productId, pending);
      if (this.cache.size > CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    }
    const entry = await pending;
    if ('missUntil' in entry) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      res.end('no image\n');
      return;
    }
    res.writeHead(200, {
      'content-type': entry.type,
      'content-length': entry.body.length,
      'cache-control': 'max-age=300',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    });
    res.end(entry.body);
  }

  private async load(productId: string): Promise<Entry> {
    const miss = { missUntil: Date.now() + MISS_MS };
    try {
      const product = await this.shop.getProduct(productId);
      const url = product.imageUrl;
      if (!url || !/^https?:\/\//i.test(url)) return miss;
      const answer = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'follow' });
      const type = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (!answer.ok || !/^image\/[a-z0-9.+-]+$/.test(type) || !answer.body) {
        await answer.body?.cancel();
        return miss;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of answer.body as AsyncIterable<Uint8Array>) {
        size += chunk.length;
        if (size > MAX_BYTES) return miss;
        chunks.push(Buffer.from(chunk));
      }
      return { type, body: Buffer.concat(chunks, size) };
    } catch (err) {
      this.logger.debug({ productId, reason: (err as Error).message }, 'prize image not available');
      return miss;
    }
  }
}
