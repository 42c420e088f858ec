/**
 * The public shop site of the Fourthwall sandbox, served under `shopUrl` without credentials:
 * the Google-merchant-style RSS product feed at `/.well-known/merchant-center/rss.xml`
 * (g:id, title, description, link, g:price, g:availability, g:image_link per public product),
 * tiny product and gift pages (a gift page redeems on POST), drawn product pictures
 * (product-art.ts), and the OAuth
 * connect page that redirects back with an authorization code. It renders; it owns no state.
 */
import { productArtSvg } from './product-art.js';
import { escapeHtml } from '../../shared/html.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SandboxAuth } from './auth.js';
import type { Gifting } from './gifting.js';
import { ApiError, sendText } from './http.js';
import type { ShopState } from './state.js';
import type { Product } from './types.js';

export interface SiteDeps {
  state: ShopState;
  gifting: Gifting;
  auth: SandboxAuth;
  shopUrl: string;
  clientId: string;
}

const xml = escapeHtml;

function inStock(p: Product): boolean {
  return p.state.type === 'AVAILABLE' && p.variants.some((v) => v.stock.type === 'UNLIMITED' || v.stock.inStock > 0);
}

/** Renders the RSS 2.0 feed with Google merchant (`g:`) fields. */
function renderFeed(state: ShopState, shopUrl: string): string {
  const items = [...state.products.values()]
    .filter((p) => p.access.type === 'PUBLIC')
    .map((p) => {
      const price = p.variants[0]?.unitPrice;
      const image = p.images[0];
      return [
        '    <item>',
        `      <g:id>${xml(p.id)}</g:id>`,
        `      <title>${xml(p.name)}</title>`,
        `      <description>${xml(p.description)}</description>`,
        `      <link>${xml(`${shopUrl}/products/${p.slug}`)}</link>`,
        price ? `      <g:price>${price.value.toFixed(2)} ${xml(price.currency)}</g:price>` : '',
        `      <g:availability>${inStock(p) ? 'in_stock' : 'out_of_stock'}</g:availability>`,
        image ? `      <g:image_link>${xml(image.url)}</g:image_link>` : '',
        `      <g:brand>${xml(state.shop.name)}</g:brand>`,
        '      <g:condition>new</g:condition>',
        '    </item>',
      ]
        .filter((l) => l !== '')
        .join('\n');
    });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0">',
    '  <channel>',
    `    <title>${xml(state.shop.name)}</title>`,
    `    <link>${xml(shopUrl)}</link>`,
    `    <description>${xml(`Products of ${state.shop.name}`)}</description>`,
    ...items,
    '  </channel>',
    '</rss>',
    '',
  ].join('\n');
}

function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${xml(title)}</title></head><body><h1>${xml(title)}</h1>${body}</body></html>`;
}

/** Serves a request under the shop path (`rest` is the path after it). */
export function serveSite(
  d: SiteDeps,
  req: IncomingMessage,
  res: ServerResponse,
  rest: string,
  query: URLSearchParams,
): void {
  const method = req.method ?? 'GET';
  if (method === 'GET' && rest === '/.well-known/merchant-center/rss.xml') {
    sendText(res, 200, 'application/rss+xml; charset=utf-8', renderFeed(d.state, d.shopUrl));
    return;
  }
  if (method === 'GET' && (rest === '' || rest === '/')) {
    const list = [...d.state.products.values()]
      .filter((p) => p.access.type === 'PUBLIC')
      .map((p) => `<li><a href="${xml(`${d.shopUrl}/products/${p.slug}`)}">${xml(p.name)}</a></li>`)
      .join('');
    sendText(res, 200, 'text/html; charset=utf-8', page(d.state.shop.name, `<ul>${list}</ul>`));
    return;
  }
  const product = /^\/products\/([^/]+)$/.exec(rest);
  if (method === 'GET' && product) {
    const p = [...d.state.products.values()].find((x) => x.slug === product[1]);
    if (!p) throw new ApiError(404, 'NOT_FOUND');
    sendText(res, 200, 'text/html; charset=utf-8', page(p.name, `<p>${xml(p.description)}</p>`));
    return;
  }
  const image = /^\/images\/([A-Za-z0-9_-]+)\.svg$/.exec(rest);
  if (method === 'GET' && image) {
    sendText(res, 200, 'image/svg+xml', productArtSvg(image[1] as string));
    return;
  }
  const gift = /^\/gifts\/(gft_[A-Za-z0-9_-]+)(\/redeem)?$/.exec(rest);
  if (gift) {
    const giftId = gift[1] as string;
    if (method === 'POST') {
      const order = d.gifting.redeem(giftId);
      sendText(
        res,
        200,
        'text/html; charset=utf-8',
        page('Gift redeemed', `<p>Order ${xml(order.friendlyId)} is on its way.</p>`),
      );
      return;
    }
    if (method === 'GET') {
      sendText(
        res,
        200,
        'text/html; charset=utf-8',
        page('You won a gift!', `<p>Gift ${xml(giftId)}</p><form method="post"><button>Redeem</button></form>`),
      );
      return;
    }
  }
  const connect = /^\/admin\/platform-apps\/([^/]+)\/connect$/.exec(rest);
  if (method === 'GET' && connect) {
    const redirectUri = query.get('redirect_uri');
    if (connect[1] !== d.clientId || !redirectUri) throw new ApiError(400, 'INVALID_PLATFORM_APP_REQUEST');
    let target: URL;
    try {
      target = new URL(redirectUri);
    } catch {
      throw new ApiError(400, 'INVALID_PLATFORM_APP_REQUEST');
    }
    target.searchParams.set('code', d.auth.issueAuthCode(redirectUri));
    const state = query.get('state');
    if (state !== null) target.searchParams.set('state', state);
    res.writeHead(302, { location: target.toString(), 'content-length': '0' });
    res.end();
    return;
  }
  throw new ApiError(404, 'NOT_FOUND');
}
