/**
 * The two HTTP surfaces on one port, over real sockets (startHttpServer with the real /verify route
 * over a real draw repository): the streamer's own pages refuse a foreign Host or anything that came
 * through a proxy/tunnel (forwarding headers) and answer 127.0.0.1, localhost (any port) and
 * GIFTDROP_LOCAL_HOSTS names; the overlay key opens /overlay (never /dashboard) to another machine;
 * public routes stay answered whatever the Host. Bounds: a /verify flood from 10 clients is built
 * once (cache) and answered 429 past each client's burst while /healthz and webhooks still answer;
 * /healthz has its own per-client limit; at most N webhook bodies are read at once (503 above);
 * an event older than the accepted age is not handed on. Clocks are injected (no timing luck).
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type BotHttpServer } from '../src/http/server.js';
import { VERIFY_CSP, verifyRoute, type VerifyRoute } from '../src/http/verify-route.js';
import { PUBLIC_PREFIXES, surfaceOf } from '../src/http/surfaces.js';
import { silentLogger } from '../src/logging/index.js';
import type { WebhookEvent } from '../src/fourthwall/webhooks.js';
import { FileDrawRepository } from '../src/storage/index.js';
import { finishedRecord } from './support/fairness-records.js';
import { tempDataDir } from './support/storage-helpers.js';
import { postWebhook } from './support/e2e-stack.js';

const SECRET = 'surface-test-secret';
const KEY = 'overlay-key-0123456789abcdef';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A GET with exactly these headers (Host included), over a fresh connection. */
function get(port: number, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

let dir: string;
let cleanup: () => Promise<void>;
let repo: FileDrawRepository;
let http: BotHttpServer;
let verify: VerifyRoute;
let clock = Date.UTC(2026, 5, 1);
const handed: WebhookEvent[] = [];

beforeAll(async () => {
  ({ dir, cleanup } = await tempDataDir());
  repo = await FileDrawRepository.open(dir);
  await repo.saveDraw(finishedRecord({ id: 'big-draw', entrants: 5000, winners: 3 }));
  for (const id of ['other-1', 'other-2', 'other-3']) await repo.saveDraw(finishedRecord({ id, entrants: 50, winners: 1 }));
  const localHosts = new Set(['streampc.lan']);
  verify = verifyRoute(repo, silentLogger(), { now: () => clock, localHosts, buildLimit: { perSecond: 0.5, burst: 3 } });
  http = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    logger: silentLogger(),
    secrets: { webhookSecret: SECRET },
    onEvent: (e) => void handed.push(e),
    seenEvent: () => false,
    health: () => ({ status: 'ok', mode: 'live', chat: 'connected', openDraws: 0 }),
    routes: [
      verify,
      (req, res) => {
        const path = (req.url ?? '/').split('?')[0]!;
        if (!path.startsWith('/overlay') && !path.startsWith('/dashboard') && !path.startsWith('/claim')) return false;
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`own page ${path}`);
        return true;
      },
    ],
    localHosts,
    overlayKey: KEY,
    maxConcurrentBodies: 2,
    now: () => clock,
  });
}, 60_000);

afterAll(async () => {
  await http?.close();
  await repo?.close();
  await cleanup?.();
});

describe('the streamer\'s own pages', () => {
  it('refuse a foreign Host (DNS rebinding) and anything that came through a proxy or tunnel', async () => {
    for (const path of ['/dashboard', '/dashboard/api/state', '/overlay', '/overlay/events', '/overlay/state']) {
      const evil = await get(http.port, path, { host: 'evil.example' });
      expect(evil.status, path).toBe(403);
      expect(evil.body).not.toContain('own page');
      for (const h of ['x-forwarded-for', 'forwarded', 'cf-connecting-ip']) {
        const tunneled = await get(http.port, path, { host: '127.0.0.1', [h]: h === 'forwarded' ? 'for=203.0.113.9' : '203.0.113.9' });
        expect(tunneled.status, `${path} ${h}`).toBe(403);
      }
    }
  });

  it('a path that only normalises to theirs (dot segments) is judged the same', async () => {
    for (const path of ['/x/../overlay', '/verify/../dashboard/api/state', '/./dashboard', '/x/%2e%2e/overlay/state']) {
      const r = await get(http.port, path, { host: 'evil.example' });
      expect(r.status, path).toBe(403);
    }
  });

  it('answer 127.0.0.1, localhost on any port and a GIFTDROP_LOCAL_HOSTS name', async () => {
    for (const host of [`127.0.0.1:${http.port}`, 'localhost', 'localhost:1234', 'LOCALHOST:8787', 'streampc.lan:8787']) {
      const ok = await get(http.port, '/dashboard', { host });
      expect(ok.status, host).toBe(200);
      expect(ok.body).toBe('own page /dashboard');
    }
    expect((await get(http.port, '/overlay', { host: 'streampc.lan.evil.example' })).status).toBe(403);
  });

  it('the overlay key opens the overlay (not the dashboard) to another machine, then by cookie', async () => {
    const first = await get(http.port, `/overlay?key=${KEY}`, { host: 'obs-pc.example', 'x-forwarded-for': '198.51.100.7' });
    expect(first.status).toBe(200);
    const cookie = String(first.headers['set-cookie']).split(';')[0]!;
    expect(cookie).toMatch(new RegExp(`^giftdrop_overlay_${http.port}=`));
    expect(cookie).not.toContain(KEY);
    expect((await get(http.port, '/overlay/state', { host: 'obs-pc.example', cookie })).status).toBe(200);
    expect((await get(http.port, '/overlay/state', { host: 'obs-pc.example', cookie: `${cookie}x` })).status).toBe(403);
    expect((await get(http.port, `/overlay?key=${KEY}x`, { host: 'obs-pc.example' })).status).toBe(403);
    expect((await get(http.port, `/dashboard?key=${KEY}`, { host: 'obs-pc.example', cookie })).status).toBe(403);
  });

  it('public routes answer whatever the Host', async () => {
    for (const path of ['/claim', '/claim/callback?code=x']) {
      const claim = await get(http.port, path, { host: 'tunnel.example', 'cf-connecting-ip': '203.0.113.1' });
      expect(claim.status, path).toBe(200);
      expect(claim.body).toBe(`own page ${path.split('?')[0]}`); // (the test's catch-all route answered: it was let through)
    }
    expect((await get(http.port, '/healthz', { host: 'tunnel.example', 'cf-connecting-ip': '203.0.113.1' })).status).toBe(200);
    const page = await get(http.port, '/verify/big-draw', { host: 'tunnel.example', 'cf-connecting-ip': '203.0.113.1' });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toBe(VERIFY_CSP);
    expect(VERIFY_CSP).toContain("frame-ancestors 'none'");
    expect((await get(http.port, '/verify/nope', { host: 'tunnel.example' })).headers['content-security-policy']).toBe(VERIFY_CSP);
  });
});

it('classifies the tunnel\'s paths as public and only /dashboard and /overlay as the streamer\'s own', () => {
  for (const p of PUBLIC_PREFIXES) {
    expect(surfaceOf(p)).toBe('public');
    expect(surfaceOf(`${p}/x`)).toBe('public');
  }
  for (const p of ['/dashboard', '/dashboard/api/state', '/overlay', '/overlay/events']) expect(surfaceOf(p)).toBe('own');
  for (const p of ['/overlayx', '/dashboards', '/', '/favicon.ico']) expect(surfaceOf(p)).toBe('public');
});

describe('public routes are bounded', () => {
  it('a /verify flood from 10 clients: one build, 429 past each burst, /healthz and webhooks still answered', async () => {
    clock += 3_600_000; // fresh buckets
    verify.forget('big-draw');
    const buildsBefore = verify.builds;
    const perClient = 25;
    const statuses = new Map<number, number>();
    const health: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async (_, c) => {
        for (let i = 0; i < perClient; i++) {
          const r = await get(http.port, '/verify/big-draw', { host: 'tunnel.example', 'x-forwarded-for': `10.0.0.1, 203.0.113.${c}` });
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          if (i % 5 === 0) health.push((await get(http.port, '/healthz', { host: 'tunnel.example', 'cf-connecting-ip': `198.51.100.${c}` })).status);
        }
      }),
    );
    // the clock does not move: each client gets exactly its burst of 4, the rest are 429
    expect(Object.fromEntries(statuses)).toEqual({ 200: 40, 429: 210 });
    expect(verify.builds - buildsBefore).toBe(1);
    expect(health.every((s) => s === 200)).toBe(true);
    const hook = await postWebhook(`${http.url}/webhooks/fourthwall`, '{}', { secret: 'wrong' });
    expect(hook.status).toBe(401);
    // time refills the bucket: one more page every 5 s
    // (the same address by either header is the same client)
    expect((await get(http.port, '/verify/big-draw', { host: 'x', 'cf-connecting-ip': '203.0.113.0' })).status).toBe(429);
    clock += 4_000;
    expect((await get(http.port, '/verify/big-draw', { host: 'x', 'x-forwarded-for': '203.0.113.0' })).status).toBe(429);
    clock += 1_000;
    expect((await get(http.port, '/verify/big-draw', { host: 'x', 'x-forwarded-for': '203.0.113.0' })).status).toBe(200);
    const limited = await get(http.port, '/verify/big-draw', { host: 'x', 'x-forwarded-for': '203.0.113.0' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // this machine (no tunnel) is not limited
    for (let i = 0; i < 15; i++) expect((await get(http.port, '/verify/big-draw', { host: '127.0.0.1' })).status).toBe(200);
    expect(verify.builds - buildsBefore).toBe(1);
  });

  it('page builds are bounded for everyone together: cycling through draw ids gets 503, cached pages still answer', async () => {
    clock += 3_600_000; // full buckets
    const before = verify.builds;
    const statuses: number[] = [];
    for (const [c, id] of ['other-1', 'other-2', 'other-3', 'big-draw'].entries()) {
      verify.forget(id);
      statuses.push((await get(http.port, `/verify/${id}`, { host: 't.example', 'cf-connecting-ip': `192.0.2.${c}` })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 503]);
    expect(verify.builds - before).toBe(3);
    const busy = await get(http.port, '/verify/big-draw', { host: 't.example', 'cf-connecting-ip': '192.0.2.9' });
    expect(busy.status).toBe(503);
    expect(busy.headers['retry-after']).toBe('5');
    // a built page is still served from the cache
    expect((await get(http.port, '/verify/other-1', { host: 't.example', 'cf-connecting-ip': '192.0.2.10' })).status).toBe(200);
    clock += 2_000;
    expect((await get(http.port, '/verify/big-draw', { host: 't.example', 'cf-connecting-ip': '192.0.2.11' })).status).toBe(200);
    expect(verify.builds - before).toBe(4);
  });

  it('/healthz: 40 at once per client, then 429', async () => {
    clock += 3_600_000;
    const codes: number[] = [];
    for (let i = 0; i < 45; i++) codes.push((await get(http.port, '/healthz', { host: 't.example', 'cf-connecting-ip': '192.0.2.50' })).status);
    expect(codes.filter((c) => c === 200)).toHaveLength(40);
    expect(codes.slice(40)).toEqual([429, 429, 429, 429, 429]);
    expect((await get(http.port, '/healthz', { host: 't.example', 'cf-connecting-ip': '192.0.2.51' })).status).toBe(200);
  });

  it('reads at most 2 webhook bodies at once (503 above), and reads again once they end', async () => {
    const slow = [0, 1].map(
      () =>
        new Promise<{ sock: ReturnType<typeof connect>; answer: Promise<string> }>((resolve) => {
          const sock = connect(http.port, '127.0.0.1', () => {
            sock.write(`POST /webhooks/fourthwall HTTP/1.1\r\nhost: t.example\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"a":`);
            const answer = new Promise<string>((done) => {
              let text = '';
              sock.on('data', (d) => (text += d.toString()));
              sock.on('close', () => done(text));
              sock.on('end', () => done(text));
            });
            resolve({ sock, answer });
          });
        }),
    );
    const held = await Promise.all(slow);
    // wait until the server is reading both bodies (the third is refused only then)
    let third = await postWebhook(`${http.url}/webhooks/fourthwall`, '{}', { secret: SECRET });
    for (let i = 0; i < 100 && third.status !== 503; i++) {
      await new Promise((r) => setTimeout(r, 20));
      third = await postWebhook(`${http.url}/webhooks/fourthwall`, '{}', { secret: SECRET });
    }
    expect(third.status).toBe(503);
    for (const h of held) h.sock.end(`${' '.repeat(994)}}`);
    const answers = await Promise.all(held.map((h) => h.answer));
    for (const a of answers) expect(a).toMatch(/^HTTP\/1.1 401/); // (unsigned: read, then refused)
    const after = await postWebhook(`${http.url}/webhooks/fourthwall`, '{}', { secret: SECRET });
    expect(after.status).toBe(400); // read and verified; not an envelope
  });

  it('an event older than the accepted age is answered but not handed on; a fresh one is', async () => {
    const envelope = (id: string, createdAt: string) =>
      JSON.stringify({ testMode: false, id, webhookId: 'wcon_1', shopId: 'sh_1', type: 'SOMETHING_NEW', apiVersion: 'V1', createdAt, data: {} });
    const old = await postWebhook(`${http.url}/webhooks/fourthwall`, envelope('weve_old', new Date(clock - 16 * 60_000).toISOString()), { secret: SECRET });
    expect(old.status).toBe(200);
    expect(JSON.parse(old.text)).toEqual({ ok: true, ignored: 'too old' });
    const fresh = await postWebhook(`${http.url}/webhooks/fourthwall`, envelope('weve_fresh', new Date(clock - 60_000).toISOString()), { secret: SECRET });
    expect(fresh.status).toBe(200);
    await http.idle();
    expect(handed.map((e) => e.id)).toEqual(['weve_fresh']);
  });
});
