/**
 * The real bot behind a plain TCP tunnel (what `ssh -R` delivers: bytes copied to HTTP_PORT, no
 * header added): the streamer's pages are never answered there, even with `Host: localhost` and the
 * right dashboard token, while the public routes are; the overlay and dashboard at the URL the bot
 * printed at start-up answer on this machine; with 1,100 idle sockets held to HTTP_PORT the overlay
 * still answers within 2 s.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessStack, type InProcessStack } from './support/e2e-stack.js';
import { holdIdleSockets, startTcpForwarder, type TcpForwarder } from './support/tcp-forwarder.js';

/** A GET with exactly these headers, over a fresh connection: its status and body. */
function get(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the real bot behind a TCP tunnel to HTTP_PORT', { timeout: 90_000 }, () => {
  let s: InProcessStack;
  let tunnel: TcpForwarder;

  beforeAll(async () => {
    s = await startInProcessStack();
    tunnel = await startTcpForwarder(s.bot.http.port);
  }, 60_000);
  afterAll(async () => {
    await tunnel?.close();
    await s?.close();
  });

  it("never answers the streamer's pages through it, whatever the Host and with the right token", async () => {
    const token = s.bot.pages.token.token;
    for (const path of [
      '/overlay',
      '/overlay/state',
      '/overlay/events',
      '/dashboard',
      '/dashboard/api/state',
      `/dashboard?token=${token}`,
    ]) {
      for (const host of ['localhost', `localhost:${s.bot.http.port}`, '127.0.0.1', '[::1]']) {
        const r = await get(tunnel.port, path, {
          host,
          authorization: `Bearer ${token}`,
          cookie: `giftdrop_dashboard_${s.bot.http.port}=x`,
        });
        expect(r.status, `${path} Host ${host}`).not.toBe(200);
        expect(r.body).not.toContain('<html');
      }
    }
    // the public routes are what the tunnel carries
    expect((await get(tunnel.port, '/healthz', { host: 'giftdrop.tunnel.example' })).status).toBe(200);
  });

  it("the overlay and dashboard answer at the URLs the bot printed (the streamer's own port)", async () => {
    const line = s.logs.json().find((l) => typeof l.overlay === 'string');
    expect(line, 'the start-up line naming the overlay').toBeDefined();
    const overlay = new URL(String(line!.overlay));
    expect(overlay.pathname).toBe('/overlay');
    expect(Number(overlay.port)).toBe(s.bot.http.localPort);
    expect(Number(overlay.port)).not.toBe(s.bot.http.port);
    const page = await fetch(overlay);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<html');
    const dashboard = await fetch(`${String(line!.dashboard)}/api/state`, {
      headers: { authorization: `Bearer ${s.bot.pages.token.token}` },
    });
    expect(dashboard.status).toBe(200);
  });

  it('with 1,100 idle sockets held to HTTP_PORT the overlay answers within 2 s', async () => {
    const idle = await holdIdleSockets(s.bot.http.port, 1100);
    try {
      const started = Date.now();
      const overlay = await get(s.bot.http.localPort, '/overlay/state', { host: 'localhost' });
      expect(overlay.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      for (const sock of idle) sock.destroy();
    }
  });
});
