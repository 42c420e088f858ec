/**
 * The two HTTP surfaces and who a request comes from (docs/security.md). Each surface has its own
 * listener (server.ts): the public one on HTTP_PORT, the one a tunnel carries
 * (`POST /webhooks/fourthwall`, `/claim...`, `/verify...`, `/healthz`), and the streamer's own on
 * GIFTDROP_LOCAL_PORT, bound to loopback (`/dashboard...`, `/overlay...`, their APIs and event
 * streams, `/healthz`). Being local is decided by the socket first (which listener accepted it);
 * the Host and forwarding-header checks here are the second fence on the streamer's listener.
 *
 * Contract: `surfaceOf` says which surface a path belongs to; `isLocalRequest` whether a request
 * is the streamer's own machine; `OverlayKey` lets a remote overlay in by `?key=` on every request
 * (no cookie: a cookie of 127.0.0.1 reaches every local port); `clientKeyOf` names the client from
 * what the proxy named in GIFTDROP_TRUST_PROXY wrote, never from a header the client chooses;
 * `overLimit` spends one token of that client. Every public request is limited (the public
 * listener has no "local" request: a tunnel agent connects from this machine too). The dashboard
 * is never remote. Does not route or answer requests other than the refusals.
 */
import { sameSecret } from '../shared/constant-time.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { answer429, type RateLimiter } from './rate-limit.js';

export type Surface = 'public' | 'own';

const OWN_PREFIXES = ['/dashboard', '/overlay'];
/** What the tunnel must carry (docs/security.md); every path not the streamer's own is public. */
export const PUBLIC_PREFIXES = ['/webhooks/fourthwall', '/claim', '/verify', '/healthz'] as const;
const FORWARDING_HEADERS = [
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'forwarded',
  'via',
  'x-real-ip',
  'cf-connecting-ip',
  'true-client-ip',
] as const;
const ALWAYS_LOCAL = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** 'own' for /dashboard and /overlay (and below), 'public' for every other path. */
export function surfaceOf(path: string): Surface {
  for (const p of OWN_PREFIXES) if (path === p || path.startsWith(`${p}/`)) return 'own';
  return 'public';
}

/**
 * The surface of a request target, judged on the raw path AND on the path as the WHATWG URL
 * parser normalises it (`/x/../overlay` is `/overlay` to the routes, which parse it that way):
 * own when either is. A target that does not parse is treated as own.
 */
export function surfaceOfTarget(target: string): Surface {
  const raw = target.split('?')[0] ?? '/';
  if (surfaceOf(raw) === 'own') return 'own';
  try {
    return surfaceOf(new URL(target, 'http://localhost').pathname);
  } catch {
    return 'own';
  }
}

/**
 * The Host header split into a lower-case name and its port ('' when there is none), or undefined
 * when the request has no Host, more than one, or one that is not `name`, `name:digits`,
 * `[v6]` or `[v6]:digits`.
 */
function hostOf(req: IncomingMessage): { name: string; port: string } | undefined {
  const all = req.headersDistinct.host;
  if (!all || all.length !== 1) return undefined;
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(all[0]!.trim().toLowerCase());
  return m ? { name: m[1]!, port: m[2] ?? '' } : undefined;
}

function forwarded(req: IncomingMessage): boolean {
  return FORWARDING_HEADERS.some((h) => req.headers[h] !== undefined);
}

/**
 * True only when the socket's peer is this machine through loopback (127.0.0.0/8, ::1,
 * ::ffff:127.x: with a non-loopback GIFTDROP_LOCAL_BIND, a LAN request saying `Host: 127.0.0.1` is
 * NOT local), the request has exactly one Host header whose name is exactly 127.0.0.1, localhost,
 * [::1] or one of `localHosts`, with no port or the port it arrived on, AND it carries no
 * forwarding header (X-Forwarded-*, Forwarded, Via, X-Real-IP, CF-Connecting-IP, True-Client-IP).
 * `[::1].evil.com`, `localhost:evil`, a second Host header: not local.
 */
export function isLocalRequest(req: IncomingMessage, localHosts: ReadonlySet<string>): boolean {
  // The socket first: a peer beyond loopback is another machine, whatever its Host says.
  if (!isLoopback(socketAddress(req))) return false;
  if (forwarded(req)) return false;
  const host = hostOf(req);
  if (!host) return false;
  if (host.port !== '' && Number(host.port) !== req.socket.localPort) return false;
  return ALWAYS_LOCAL.has(host.name) || localHosts.has(host.name);
}

/** GIFTDROP_TRUST_PROXY, parsed: who writes the client's address (clientKeyOf). */
export type TrustProxy =
  { kind: 'none' } | { kind: 'cloudflare' } | { kind: 'hops'; hops: number; loopbackOnly: boolean };

/** The setting's value, or undefined when it is not none, cloudflare, ngrok, last-hop or 1-5 (unset: none). */
export function parseTrustProxy(setting: string | undefined): TrustProxy | undefined {
  const s = (setting ?? '').trim().toLowerCase();
  if (s === '' || s === 'none') return { kind: 'none' };
  if (s === 'last-hop' || s === 'ngrok') return { kind: 'hops', hops: 1, loopbackOnly: true };
  if (s === 'cloudflare') return { kind: 'cloudflare' };
  if (/^[1-5]$/.test(s)) return { kind: 'hops', hops: Number(s), loopbackOnly: false };
  return undefined;
}

const DEFAULT_TRUST: TrustProxy = { kind: 'none' };

/** The tunnel a public URL's host names, when it is one of the well-known ones (a hint only). */
function tunnelOf(publicUrl: string | undefined): 'cloudflared' | 'ngrok' | undefined {
  let host: string;
  try {
    host = new URL(publicUrl ?? '').hostname.toLowerCase();
  } catch {
    return undefined;
  }
  if (host.endsWith('.trycloudflare.com')) return 'cloudflared';
  if (/\.ngrok(-free)?\.(app|dev|io)$/.test(host)) return 'ngrok';
  return undefined;
}

/**
 * Which client addresses are in force, in one sentence for the start line and `npm run setup`
 * (with a hint when GIFTDROP_PUBLIC_URL names a tunnel that writes a header the bot could trust).
 */
export function describeClientKeys(setting: string | undefined, publicUrl?: string): string {
  const trust = parseTrustProxy(setting) ?? DEFAULT_TRUST;
  const name = (setting ?? '').trim().toLowerCase() || 'none';
  if (trust.kind === 'none') {
    const tunnel = tunnelOf(publicUrl);
    const hint =
      tunnel === 'cloudflared'
        ? '; your tunnel looks like cloudflared: set GIFTDROP_TRUST_PROXY=cloudflare to tell visitors apart'
        : tunnel === 'ngrok'
          ? '; your tunnel looks like ngrok: set GIFTDROP_TRUST_PROXY=ngrok to tell visitors apart'
          : '';
    return `client addresses: each connection's own (GIFTDROP_TRUST_PROXY=none${setting ? '' : ', the default'}): no header is trusted, so through a tunnel every visitor counts as one client${hint}`;
  }
  if (trust.kind === 'cloudflare')
    return 'client addresses: CF-Connecting-IP, written by Cloudflare (GIFTDROP_TRUST_PROXY=cloudflare: only for a Cloudflare tunnel or proxy in front of HTTP_PORT)';
  if (trust.loopbackOnly)
    return `client addresses: the last X-Forwarded-For entry, appended by the tunnel agent on this machine (GIFTDROP_TRUST_PROXY=${name}: only for ngrok or a proxy that appends it)`;
  return `client addresses: X-Forwarded-For entry ${trust.hops} from the end (GIFTDROP_TRUST_PROXY=${name}: that many proxies of yours in front of HTTP_PORT, each appending it)`;
}

function socketAddress(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
}

function isLoopback(address: string): boolean {
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/** An address a proxy wrote: only a well-formed IP is taken (anything else is not a key). */
function headerAddress(value: string | undefined): string | undefined {
  const v = (value ?? '').trim();
  return v && v.length <= 45 && isIP(v) ? v : undefined;
}

/**
 * One key per client, not per address a client can pick: an IPv4-mapped address is its IPv4, an
 * IPv6 address counts by its /64 (one subscriber's network hands out the rest freely).
 */
function keyOf(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (isIP(address) !== 6) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * The client a request comes from, from what the named proxy wrote:
 * - `none` (the default, also when unset): the socket's address. The default trusts no header,
 *   because behind a plain TCP tunnel (`ssh -R`) every connection comes from this machine and any
 *   header is the client's own: nothing tells it apart from a tunnel agent's. Behind a tunnel,
 *   every visitor is then one client (the limits bound the whole tunnel);
 * - `cloudflare`: CF-Connecting-IP (Cloudflare writes it on every request), else the socket's;
 * - `ngrok` (or `last-hop`, the same): when the socket is this machine (the tunnel agent), the
 *   last X-Forwarded-For entry (the one the agent appended); a socket from another machine is
 *   keyed by its own address (nobody in front);
 * - a number N (1-5): the N-th X-Forwarded-For entry from the end (N proxies of yours in front).
 * Trusting a header is always an explicit setting for the proxy the streamer runs;
 * `describeClientKeys` is the sentence the start line and `npm run setup` say about it. A request
 * whose header is missing or has too few entries is keyed by its socket address.
 */
export function clientKeyOf(req: IncomingMessage, trust: TrustProxy = DEFAULT_TRUST): string {
  return keyOf(addressOf(req, trust));
}

function addressOf(req: IncomingMessage, trust: TrustProxy): string {
  const socket = socketAddress(req);
  if (trust.kind === 'none') return socket;
  if (trust.kind === 'cloudflare') {
    // Cloudflare writes it on every request (replacing the client's); without it, no Cloudflare.
    const cf = req.headersDistinct['cf-connecting-ip'];
    return (cf?.length === 1 ? headerAddress(cf[0]) : undefined) ?? socket;
  }
  if (trust.loopbackOnly && !isLoopback(socket)) return socket;
  const entries = (req.headersDistinct['x-forwarded-for'] ?? []).join(',').split(',');
  if (entries.length < trust.hops) return socket;
  return headerAddress(entries[entries.length - trust.hops]) ?? socket;
}

const clients = new WeakMap<IncomingMessage, string>();

/** The listener records who a request is from, once, before any route sees it. */
export function recordClient(req: IncomingMessage, key: string): void {
  clients.set(req, key);
}

/** Who a request is from, as its listener decided (the socket's address if none did). */
export function clientOf(req: IncomingMessage): string {
  return clients.get(req) ?? socketAddress(req);
}

/** The remote overlay's key check: `?key=` on each request, no cookie (a cookie of 127.0.0.1 reaches every port). */
export class OverlayKey {
  constructor(private readonly key: string) {}

  /** True when the request's query carries the key. */
  check(req: IncomingMessage): boolean {
    const q = new URL(req.url ?? '/', 'http://x').searchParams.get('key');
    return !!q && sameSecret(q, this.key);
  }
}

/** The overlay's script and style: no data, served to a remote overlay without its key. */
export function isOverlayShellAsset(path: string): boolean {
  return path === '/overlay/overlay.js' || path === '/overlay/overlay.css' || path === '/overlay/client.js';
}

function plain(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(body);
}

/** The streamer's listener's answer to a request that is not local (and has no overlay key). */
export function refuseOwn(res: ServerResponse): void {
  plain(
    res,
    403,
    "giftdrop: this page answers only on the streamer's own machine (http://127.0.0.1 or localhost on GIFTDROP_LOCAL_PORT, or a name in GIFTDROP_LOCAL_HOSTS), never through a proxy or tunnel\n",
  );
}

/** The public listener's answer to a request for the streamer's pages: they are not served there. */
export function notOnPublic(res: ServerResponse): void {
  plain(res, 404, "not found (the streamer's overlay and dashboard are not served on this port)\n");
}

/** True when the request was refused (429) for being over its client's limit (one token a request). */
export function overLimit(limiter: RateLimiter, req: IncomingMessage, res: ServerResponse): boolean {
  const verdict = limiter.take(clientOf(req));
  if (verdict.ok) return false;
  answer429(res, verdict.retryAfterSeconds);
  return true;
}
