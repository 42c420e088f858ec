/**
 * The overlay's layout in a real headless Chromium (issues 32 and 47), after five draws in a row
 * through the local sandboxes: four link giveaways drawn one after another (their results stay on
 * screen for `overlay.winnersSeconds`), then a gift draw left open with its newest entrants, and
 * a paid order's supporter alert. At 1920x1080 and at 1280x720: the open draw's whole card is
 * inside the viewport and drawn on top (the topmost element at its corners is the card), the
 * results are a compact band (at most `overlay.maxResults`, default 3: the newest three, oldest on
 * top, each one line of prize and winners), nothing overlaps (card, band, alert), and nothing
 * visible is cut off by the page's edges. Screenshots of both sizes go to the folder the test
 * prints.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { overlayKey } from '../src/web/operator/overlay-view.js';
import { HAS_CHROMIUM, launchBrowser, screenshotDir, type TestBrowser } from './support/browser.js';
import { logins, setShopLive, startInProcessStack, waitUntil, type InProcessStack } from './support/e2e-stack.js';

const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 15_000, interval: 50 });

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
const inside = (b: Box, w: number, h: number) =>
  b.x >= -0.5 && b.y >= -0.5 && b.x + b.width <= w + 0.5 && b.y + b.height <= h + 0.5;

describe.skipIf(!HAS_CHROMIUM)('overlay layout in Chromium', { timeout: 180_000 }, () => {
  let browser: TestBrowser;
  let s: InProcessStack;
  const results: string[] = [];
  let openId: string;

  beforeAll(async () => {
    browser = await launchBrowser();
    // (a short reveal: every result is in the band when the test looks)
    s = await startInProcessStack({ settings: { overlay: { winnerChat: true, revealSeconds: 3, alertSeconds: 60 } } });
    setShopLive({ fourthwall: s.fourthwall, chat: s.chatServer });
    // four link giveaways, each drawn at once, one after another
    for (let i = 0; i < 4; i++) {
      const opened = new Promise<string>((resolve) => s.bot.engine.events.once('draw-opened', (r) => resolve(r.id)));
      s.chatServer.inject(s.chatServer.broadcaster, '!giveaway start giftdrop-mug 2 300');
      const id = await opened;
      for (const n of logins(`g${i}x`, 3)) s.chatServer.inject(s.chatServer.viewer(n), '!enter');
      await waitUntil(
        () => (s.bot.engine.drawViews().find((v) => v.record.id === id)?.entrants.size ?? 0) === 3,
        5000,
        'three entrants',
      );
      const finished = new Promise<void>((resolve) => {
        const on = (r: { id: string }) => r.id === id && (s.bot.engine.events.off('draw-finished', on), resolve());
        s.bot.engine.events.on('draw-finished', on);
      });
      s.chatServer.inject(s.chatServer.broadcaster, '!giveaway end');
      await finished;
      results.push(id);
    }
    // the fifth: a gift draw, open, with more entrants than its card lists
    const { draw } = s.fourthwall.control.simulateGiftPurchase({
      quantity: 3,
      username: 'generous_fan',
      durationSeconds: 300,
    });
    openId = draw['id'] as string;
    await waitUntil(
      () => s.bot.engine.drawViews().some((v) => v.record.id === openId && v.active),
      10_000,
      'the gift draw open',
    );
    for (const n of logins('open_fan_longname_', 9)) s.chatServer.inject(s.chatServer.viewer(n), '!enter');
    await waitUntil(
      () => (s.bot.engine.drawViews().find((v) => v.record.id === openId)?.entrants.size ?? 0) === 9,
      5000,
      'nine entrants',
    );
    s.fourthwall.control.shop.placeOrder({ username: 'merch_enjoyer' });
  }, 150_000);

  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  async function check(page: Page, width: number, height: number): Promise<void> {
    await page.setViewportSize({ width, height });
    await page.goto(`${s.bot.http.localUrl}/overlay`);
    const open = page.locator(`.card[data-key="${overlayKey(openId)}"]`);
    await open.waitFor();
    await poll(() => open.locator('.count').textContent()).toBe('9 entered');
    // the newest three results in the band, oldest on top; the oldest of the four has left
    await poll(() => page.locator('#results .result').count()).toBe(3);
    const band = await page.locator('#results .result').evaluateAll((rows) =>
      rows.map((r) => ({
        key: (r as unknown as { dataset: { key: string } }).dataset.key,
        top: (r as unknown as { getBoundingClientRect(): { top: number } }).getBoundingClientRect().top,
      })),
    );
    expect(band.sort((a, b) => a.top - b.top).map((r) => r.key)).toEqual(
      [results[1], results[2], results[3]].map((id) => overlayKey(id!)),
    );
    expect(
      await page
        .locator('.card')
        .evaluateAll((cards) => cards.map((c) => (c as unknown as { dataset: { key: string } }).dataset.key)),
    ).toEqual([overlayKey(openId)]);
    // each result is one compact line: prize above, winners below, one row no taller than 90 px at 1080
    for (const row of await page.locator('#results .result').all()) {
      expect((await row.boundingBox())!.height).toBeLessThanOrEqual((90 * height) / 1080);
      expect(await row.locator('.r-winners').textContent()).toMatch(/^g\dx\d+ · g\dx\d+$/);
    }
    await page.locator('.alert').waitFor();
    // once the pop animations are over, the open card is wholly inside the viewport
    await poll(async () => inside((await open.boundingBox())!, width, height)).toBe(true);
    const box = (await open.boundingBox())!;
    expect(box.width).toBeGreaterThan(width * 0.2);
    // and on top: near each of its corners (inside the rounded border) the topmost element belongs to it
    for (const [x, y] of [
      [box.x + 24, box.y + 24],
      [box.x + box.width - 24, box.y + 24],
      [box.x + 24, box.y + box.height - 24],
      [box.x + box.width - 24, box.y + box.height - 24],
    ] as const) {
      const owner = await page.evaluate(
        `(() => { const e = document.elementFromPoint(${x}, ${y}); const c = e && e.closest('.card'); return c ? c.dataset.key : null; })()`,
      );
      expect(owner, `the element at ${x},${y}`).toBe(overlayKey(openId));
    }
    // nothing visible is cut off by the page's edges, and nothing overlaps
    const boxes: (Box & { what: string })[] = [];
    for (const sel of ['.card', '#results .result', '.alert']) {
      for (const e of await page.locator(sel).all()) {
        if (
          (await e.evaluate((x) =>
            (x as unknown as { classList: { contains(c: string): boolean } }).classList.contains('offscreen'),
          )) === true
        )
          continue;
        const b = (await e.boundingBox())!;
        expect(inside(b, width, height), `${sel} inside ${width}x${height}`).toBe(true);
        boxes.push({ ...b, what: sel });
      }
    }
    expect(boxes.length).toBe(5);
    const overlap = (a: Box, b: Box) =>
      a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++)
        expect(overlap(boxes[i]!, boxes[j]!), `${boxes[i]!.what} and ${boxes[j]!.what} overlap`).toBe(false);
    await page.screenshot({
      path: join(screenshotDir(), `overlay-five-draws-${width}x${height}.png`),
      omitBackground: true,
    });
  }

  it('1920x1080: the open draw whole and on top, the three newest results in the band, an alert, none cut off or overlapping', async () => {
    const page = await browser.context.newPage();
    await check(page, 1920, 1080);
    await page.close();
  });

  it('1280x720: the same, scaled', async () => {
    const page = await browser.context.newPage();
    await check(page, 1280, 720);
    await page.close();
  });
});
