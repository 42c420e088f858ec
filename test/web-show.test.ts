/**
 * The show on stream and the streamer's second screen (issue 47), in a real headless Chromium at
 * 1920x1080 and 390x844 against the whole local stack (Fourthwall sandbox sending signed webhooks,
 * chat server, the real bot on OS-chosen ports, its claim page on):
 * - no page lays out wider than the screen at either size: the overlay, the dashboard (signed in,
 *   with a draw open, winners, prizes waiting and history; and its sign-in form), the claim page,
 *   a verify page;
 * - at 390 px every dashboard control is reachable and visible: each button, field, select and
 *   link of the signed-in page, scrolled to, lies wholly inside the screen's width, has a size, and
 *   is the topmost element at its centre (nothing covers it);
 * - the overlay's DOM never holds a run of 16 or more hex digits (no commitment, digest, seed or
 *   draw id), while a draw is open, drawn, revealed and in the results band;
 * - an ORDER_PLACED webhook (a paid order at the sandbox, signed, over HTTP) shows its supporter
 *   alert on the overlay within 3 s, with the chosen username and the products, and never the
 *   buyer's e-mail, address, order id or friendly id;
 * - a failed draw (a gift draw nobody entered, handed back) is listed as failed with "nobody" on
 *   the dashboard, and its verify page says first that nobody won, and why;
 * - `/` on the streamer's own port leads to the dashboard, whose sign-in form names the real token
 *   file.
 * Screenshots of each page at both sizes go to the folder the test prints.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DrawRecord } from '../src/giveaway/model.js';
import { HAS_CHROMIUM, launchBrowser, screenshotDir, type TestBrowser } from './support/browser.js';
import { freePort } from './support/e2e-stack.js';
import {
  drawSettled,
  entrantsReach,
  nextDrawOpened,
  startLinkStack,
  type LinkStack,
} from './support/e2e-link-stack.js';

const SIZES = [
  { name: '1920', width: 1920, height: 1080 },
  { name: '390', width: 390, height: 844 },
] as const;

const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 15_000, interval: 50 });

/** The widest the page lays out (its scroll width) at `size`; a screenshot of it. */
async function widthAt(page: Page, name: string, size: (typeof SIZES)[number]): Promise<number> {
  await page.setViewportSize({ width: size.width, height: size.height });
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
  await page.screenshot({ path: join(screenshotDir(), `show-${name}-${size.name}.png`), fullPage: name !== 'overlay' });
  return page.evaluate<number>('Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)');
}

/** Every run of 16 or more hex digits in the page's whole DOM (text and attributes). */
const HEX_RUNS = '(document.documentElement.outerHTML.match(/[0-9a-fA-F]{16,}/g) || [])';

/**
 * Each visible control of the signed-in dashboard at the current size, scrolled into view: its
 * box, and whether it is the topmost element at its centre. Runs in the page, in one task (the
 * layout is read synchronously after each scroll), so the page's once-a-second re-render cannot
 * swap a control out from under the measurement.
 */
const CONTROLS = `(() => {
  const out = [];
  const all = [...document.querySelectorAll('#app button, #app input, #app select, #app a, #app summary')];
  for (const e of all) {
    if (!e.getClientRects().length || getComputedStyle(e).visibility === 'hidden') continue;
    e.scrollIntoView({ block: 'center', inline: 'nearest' });
    const b = e.getBoundingClientRect();
    const top = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
    out.push({
      what: e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ' ' + (e.textContent || e.getAttribute('placeholder') || e.getAttribute('type') || '').trim().slice(0, 30),
      left: b.left, right: b.right, width: b.width, height: b.height,
      topmost: !!top && (top === e || e.contains(top) || top.contains(e)),
    });
  }
  scrollTo(0, 0);
  return out;
})()`;

describe.skipIf(!HAS_CHROMIUM)('the show on stream and the second screen, in Chromium', { timeout: 240_000 }, () => {
  let browser: TestBrowser;
  let s: LinkStack;
  let base: string;
  let local: string;
  let won: DrawRecord;
  let handedBack: DrawRecord;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    s = await startLinkStack({
      env: { HTTP_PORT: String(port), GIFTDROP_PUBLIC_URL: base },
      settings: { overlay: { revealSeconds: 3, alertSeconds: 30 } },
    });
    local = s.bot.http.localUrl;
    browser = await launchBrowser();
    s.fw.control.setLive(true);
    // A link giveaway with two winners (prizes waiting, a history row, Reroll and Copy buttons).
    const opened = nextDrawOpened(s);
    s.say(s.mod, '!giveaway start mug 2 300');
    const open = await opened;
    const entered = entrantsReach(s, open.id, 4);
    s.enter(['ana', 'ben', 'cai', 'dee']);
    await entered;
    const settled = drawSettled(s, open.id);
    s.say(s.mod, '!giveaway end');
    won = (await settled).record;
    expect(won.winners).toHaveLength(2);
    // A gift draw nobody enters: handed back, failed, nobody won.
    const gift = nextDrawOpened(s);
    s.fw.control.simulateGiftPurchase({ quantity: 2, username: 'generous_fan', durationSeconds: 300 });
    const giftOpen = await gift;
    const failed = drawSettled(s, giftOpen.id);
    s.say(s.mod, '!giveaway end');
    handedBack = (await failed).record;
    expect(handedBack.status).toBe('failed');
    await s.idle();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await s?.close(true);
  });

  async function dashboard(): Promise<Page> {
    const page = await browser.context.newPage();
    await page.goto(`${local}/dashboard#token=${encodeURIComponent(s.bot.pages.token.token)}`);
    await page.locator('#status', { hasText: 'chat connected' }).waitFor();
    return page;
  }

  it('/ on the own port leads to the dashboard; its sign-in form names the real token file; no overflow', async () => {
    const page = await browser.context.newPage();
    const res = await page.goto(`${local}/`);
    expect(res!.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    await page.locator('#signin').waitFor();
    expect(await page.textContent('#token-where')).toBe(s.bot.pages.token.file);
    expect(s.bot.pages.token.file).toBe(join(s.dataDir, 'dashboard.token'));
    for (const size of SIZES)
      expect(await widthAt(page, 'signin', size), `sign-in at ${size.name}`).toBeLessThanOrEqual(size.width);
    await page.close();
  });

  it('the dashboard: no overflow at 1920 or 390; at 390 every control reachable, visible and on top; a failed draw listed as failed, nobody won', async () => {
    const page = await dashboard();
    // a draw open too (End, Cancel, the entrants picker and search)
    const opened = nextDrawOpened(s);
    s.say(s.mod, '!giveaway start hoodie 1 300');
    const open = await opened;
    // at 390 px (the size widthAt left): every control, with the draw open, then with none (the
    // product picker and Start, which apply only while no link giveaway runs)
    const everyControl = async (want: string[]) => {
      const controls =
        await page.evaluate<
          { what: string; left: number; right: number; width: number; height: number; topmost: boolean }[]
        >(CONTROLS);
      const names = controls.map((c) => c.what);
      for (const w of want)
        expect(
          names.some((n) => n.startsWith(w)),
          `${w} among ${names.join(', ')}`,
        ).toBe(true);
      for (const c of controls) {
        expect(c.left, `${c.what} starts on screen`).toBeGreaterThanOrEqual(-0.5);
        expect(c.right, `${c.what} ends on screen`).toBeLessThanOrEqual(390.5);
        expect(c.width * c.height, `${c.what} has a size`).toBeGreaterThan(0);
        expect(c.topmost, `${c.what} is not covered`).toBe(true);
      }
    };
    try {
      const entered = entrantsReach(s, open.id, 2);
      s.enter(['eve', 'fay']);
      await entered;
      await poll(() => page.textContent('#entrant-count')).toBe('2 entered, 2 eligible');
      await poll(() => page.locator('#prizes tbody tr').count()).toBe(2);
      await poll(() => page.locator('#history tbody tr').count()).toBe(3);
      await poll(() => page.locator('.product').count()).toBeGreaterThan(0);
      // the failed draw: failed, nobody won, its verify status says so
      const row = page.locator(`#history tr[data-id="${handedBack.id}"]`);
      expect(await row.locator('td[data-label="status"]').textContent()).toContain('failed');
      expect(await row.locator('td[data-label="winners"]').textContent()).toBe('nobody');
      await poll(() => row.locator('td[data-label="verify"]').textContent()).toBe(
        'nobody won (seed and list check out)',
      );
      for (const size of SIZES)
        expect(await widthAt(page, 'dashboard', size), `dashboard at ${size.name}`).toBeLessThanOrEqual(size.width);
      await everyControl([
        'button#go-',
        'button#logout',
        'button#end',
        'button#cancel',
        'select#entrant-draw',
        'input#entrant-search',
        'input#history-search',
        'select#history-status',
        'a#csv',
        'a#json',
        'button Copy',
        'button Remind',
        'button Reroll',
      ]);
    } finally {
      // (whatever happened above: the next test starts a link giveaway of its own)
      const cancelled = drawSettled(s, open.id);
      s.say(s.mod, '!giveaway cancel');
      await cancelled;
    }
    await poll(() => page.locator('#start').isVisible()).toBe(true);
    await everyControl(['button#start', 'button Giftdrop Mug', 'input#start-winners', 'input#start-seconds']);
    await page.close();
  });

  it("a failed draw's verify page says first that nobody won, and why; no overflow", async () => {
    const page = await browser.context.newPage();
    await page.goto(`${base}/verify/${encodeURIComponent(handedBack.id)}`);
    await page.waitForFunction("document.body.dataset.verdict !== 'pending'", undefined, { timeout: 30_000 });
    expect(await page.locator('body').getAttribute('data-verdict')).toBe('verified');
    expect(await page.locator('body').getAttribute('data-outcome')).toBe('nobody');
    const status = (await page.textContent('#status'))!;
    expect(status).toMatch(
      /^Nobody won this draw: no eligible entrant for 2 gifts; Fourthwall takes one winner per gift/,
    );
    expect(await page.textContent('#checks')).not.toMatch(/announced at close/);
    for (const size of SIZES)
      expect(await widthAt(page, 'verify-failed', size), `verify at ${size.name}`).toBeLessThanOrEqual(size.width);
    await page.close();
  });

  it('the claim page: no overflow at either size', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${base}/claim`);
    await page.locator('#login').waitFor();
    for (const size of SIZES)
      expect(await widthAt(page, 'claim', size), `claim at ${size.name}`).toBeLessThanOrEqual(size.width);
    await page.close();
  });

  it('the overlay: no hex run of 16+ at any stage, an ORDER_PLACED alert within 3 s and never an e-mail or order id, no overflow', async () => {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 1920, height: 1080 });
    await page.goto(`${local}/overlay`);
    const hexRuns: string[] = [];
    const look = async () => hexRuns.push(...(await page.evaluate<string[]>(HEX_RUNS)));
    // open, with entrants
    const opened = nextDrawOpened(s);
    s.say(s.mod, '!giveaway start mug 2 300');
    const open = await opened;
    const entered = entrantsReach(s, open.id, 3);
    s.enter(['gus', 'hal', 'ivy']);
    await entered;
    await poll(() => page.locator('.card .count').first().textContent()).toBe('3 entered');
    await look();
    // drawn: revealed in its card, then in the band (a 3 s reveal)
    const settled = drawSettled(s, open.id);
    s.say(s.mod, '!giveaway end');
    await settled;
    await poll(() => page.locator('.card .winners li').count()).toBe(2);
    await look();
    await poll(() => page.locator('#results .result').count()).toBeGreaterThanOrEqual(1);
    await look();
    // a paid order: its alert within 3 s of the webhook's send, in the overlay's words
    const sentAt = Date.now();
    const order = s.fw.control.shop.placeOrder({ username: 'merch_fan', email: 'private.person@example.com' });
    const alert = page.locator('.alert', { hasText: 'merch_fan' });
    await alert.waitFor({ timeout: 3_000 });
    expect(Date.now() - sentAt).toBeLessThanOrEqual(3_000);
    expect(await alert.locator('.a-title').textContent()).toBe('New order');
    expect(await alert.locator('.a-line').textContent()).toMatch(/^merch_fan bought \S/);
    await look();
    const html = await page.content();
    const state = await (await fetch(`${local}/overlay/state`)).text();
    for (const text of [html, state]) {
      expect(text).not.toContain('private.person@example.com');
      expect(text).not.toMatch(/@example\.com/);
      expect(text).not.toContain(order.id);
      expect(text).not.toContain(order.friendlyId);
    }
    expect(hexRuns).toEqual([]);
    for (const size of SIZES) {
      expect(await widthAt(page, 'overlay', size), `overlay at ${size.name}`).toBeLessThanOrEqual(size.width);
      expect(await page.evaluate<string[]>(HEX_RUNS)).toEqual([]);
    }
    await page.close();
  });
});
