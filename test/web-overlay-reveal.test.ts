/**
 * The overlay's winner reveal in a real headless Chromium against the whole local stack (issue 37):
 * - a long winner name stays inside its card all through the reveal: the reveal's animations are
 *   paused at several points (Web Animations API) and the name's drawn box (Range over its text,
 *   transforms included) is measured against the card's;
 * - a reload restores what is on screen without replaying it: no pop, no reveal animation on the
 *   cards and winners already shown, every winner visible at once;
 * - what arrives after the reload (a rerolled winner) is revealed as usual, and fits too.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, launchBrowser, screenshotDir, type TestBrowser } from './support/browser.js';
import {
  drawSettled,
  entrantsReach,
  nextDrawOpened,
  startLinkStack,
  type LinkStack,
} from './support/e2e-link-stack.js';
import { overlayKey } from '../src/web/operator/overlay-view.js';

const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 15_000, interval: 50 });

/** Two entrants whose display names are as wide as the overlay may show (23 wide letters: no token-like run). */
const WIDE = { wwwwwwwwwwwwwwwwwwwwwww: 'WWWWWWWWWWWWWWWWWWWWWWW', mmmmmmmmmmmmmmmmmmmmmmm: 'MMMMMMMMMMMMMMMMMMMMMMM' };

/**
 * For each point of the reveal (fractions of each animation's duration, all paused there), how far
 * the winner names' drawn boxes reach past their card (px; 0: inside). Runs in the page.
 */
const OVERHANG = `(async () => {
  const out = [];
  const lis = [...document.querySelectorAll('.winners li')];
  const anims = document.getAnimations();
  for (const f of [0.1, 0.3, 0.5, 0.7, 0.9, 1]) {
    for (const a of anims) { a.pause(); a.currentTime = (a.effect.getTiming().delay || 0) + f * a.effect.getTiming().duration; }
    for (const li of lis) {
      const card = li.closest('.card').getBoundingClientRect();
      const range = document.createRange();
      range.selectNodeContents(li);
      const r = range.getBoundingClientRect();
      out.push(Math.max(0, card.left - r.left, r.right - card.right, card.top - r.top, r.bottom - card.bottom));
    }
  }
  for (const a of anims) a.finish();
  return out;
})()`;

/** Reveal and pop animations currently on the winners and cards. */
const REVEALS = "document.getAnimations().filter((a) => ['reveal', 'pop'].includes(a.animationName)).length";

describe.skipIf(!HAS_CHROMIUM)('overlay winner reveal in Chromium', { timeout: 120_000 }, () => {
  let browser: TestBrowser;
  let s: LinkStack;
  let page: Page;
  let id: string;

  beforeAll(async () => {
    browser = await launchBrowser();
    // (a long reveal: the test reads the revealed card at its own pace)
    s = await startLinkStack({ settings: { overlay: { revealSeconds: 600 } } });
    page = await browser.context.newPage();
    await page.goto(`${s.bot.http.localUrl}/overlay`);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await s?.close(true);
  });

  it('a long winner name stays inside its card all through the reveal', async () => {
    const opened = nextDrawOpened(s);
    s.say(s.mod, '!giveaway start mug 1 300');
    id = (await opened).id;
    const entered = entrantsReach(s, id, 2);
    for (const [login, displayName] of Object.entries(WIDE)) s.say(s.viewer(login, { displayName }), '!enter');
    await entered;
    const settled = drawSettled(s, id);
    s.say(s.mod, '!giveaway end');
    await settled;
    const li = page.locator(`.card[data-key="${overlayKey(id)}"] .winners li`);
    await li.waitFor({ state: 'attached' });
    expect(Object.values(WIDE)).toContain(await li.textContent());
    expect(await page.evaluate(REVEALS)).toBeGreaterThan(0); // the reveal runs for a winner announced while watching
    const overhang = await page.evaluate<number[]>(OVERHANG);
    expect(overhang.length).toBeGreaterThan(0);
    expect(Math.max(...overhang)).toBeLessThanOrEqual(0.5);
    // fitted by its font size, on one line (a Twitch name of 25 wide letters still fits unbroken)
    expect(
      await li.evaluate((e) =>
        (e as unknown as { classList: { contains(c: string): boolean } }).classList.contains('wrap'),
      ),
    ).toBe(false);
    await page.screenshot({ path: join(screenshotDir(), 'overlay-long-winner.png'), omitBackground: true });
  });

  it('a reload shows the winners as they stand, without replaying the reveal; a later reroll is revealed', async () => {
    await page.reload();
    const card = page.locator(`.card[data-key="${overlayKey(id)}"]`);
    await card.locator('.winners li').waitFor();
    expect(await page.evaluate(REVEALS)).toBe(0);
    expect(
      await card
        .locator('.winners li')
        .evaluate(
          (e) =>
            (globalThis as unknown as { getComputedStyle(x: unknown): { opacity: string } }).getComputedStyle(e)
              .opacity,
        ),
    ).toBe('1');
    // a reroll after the reload: the replacement is revealed (and fits)
    const winner = (await s.record(id)).winners[0]!;
    s.say(s.mod, `!giveaway reroll ${winner.login}`);
    await poll(() => card.locator('.winners li').textContent()).not.toBe(winner.displayName);
    expect(await page.evaluate(REVEALS)).toBeGreaterThan(0);
    expect(Math.max(...(await page.evaluate<number[]>(OVERHANG)))).toBeLessThanOrEqual(0.5);
  });
});
