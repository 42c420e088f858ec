/**
 * The dashboard shows only the actions that apply, in a real headless Chromium against the whole
 * local stack (issue 32), one state after another of each draw kind:
 * - nothing open: no "End now and draw", "Cancel link giveaway" or "Retry links";
 * - a gift draw open: only "End now and draw"; once drawn: nothing, and no "Reroll" on its winners
 *   (Fourthwall settles a gift draw for good);
 * - a link giveaway open: "End now and draw" and "Cancel link giveaway"; cancelled: nothing;
 * - a link giveaway whose links Fourthwall refused: only "Retry links" (and Reroll on its winners);
 *   retried: nothing;
 * - a finished link giveaway: "Reroll" on its winners, nothing else;
 * - a gift purchase (`gifting.flow: "purchase"`, the bot runs the entry window) open: only "End now
 *   and draw"; drawn: nothing but "Reroll" on its winners (the bot, not Fourthwall, settles those);
 * - a link giveaway with a claim window (`claim.seconds`): open, "End" and "Cancel"; in its claim
 *   window, "Cancel" and "Reroll" (no "End"); claimed and finished, only "Reroll".
 * Each shown action is clicked where the state allows it, and the engine's answer is checked, so a
 * button shown is one the engine accepts. Also: /favicon.ico answers on every page's origin.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { HAS_CHROMIUM, launchBrowser, screenshotDir, type TestBrowser } from './support/browser.js';
import { logins, setShopLive, startInProcessStack, waitUntil, type InProcessStack } from './support/e2e-stack.js';

const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 15_000, interval: 50 });

const ACTIONS = ['#end', '#cancel', '#retry'] as const;

/** The ids of the action buttons a person sees now on `page`. */
async function actionsShown(page: Page): Promise<string[]> {
  const out: string[] = [];
  for (const id of ACTIONS) if (await page.locator(id).isVisible()) out.push(id);
  return out;
}

/** Clicks a destructive action's button twice: once to ask ("Confirm: ..."), once to act. */
async function confirmClick(page: Page, selector: string): Promise<void> {
  await page.click(selector);
  await page.locator(selector, { hasText: 'Confirm:' }).waitFor();
  await page.click(selector);
}

/** A new page on the stack's dashboard (with its token), once it says chat is connected. */
async function openDashboard(browser: TestBrowser, s: InProcessStack): Promise<Page> {
  const page = await browser.context.newPage();
  await page.goto(`${s.bot.http.localUrl}/dashboard?token=${encodeURIComponent(s.bot.pages.token.token)}`);
  await page.locator('#status', { hasText: 'chat connected' }).waitFor();
  return page;
}

describe.skipIf(!HAS_CHROMIUM)('dashboard actions in Chromium', { timeout: 120_000 }, () => {
  let browser: TestBrowser;
  let s: InProcessStack;
  let page: Page;

  const shown = () => actionsShown(page);
  const status = async (id: string) => (await s.bot.repo.getDraw(id))?.status;

  beforeAll(async () => {
    browser = await launchBrowser();
    s = await startInProcessStack();
    setShopLive({ fourthwall: s.fourthwall, chat: s.chatServer });
    page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('response', (r) => void (r.status() === 404 && errors.push(r.url())));
    (page as unknown as { notFound: string[] }).notFound = errors;
    await page.goto(`${s.bot.http.localUrl}/dashboard?token=${encodeURIComponent(s.bot.pages.token.token)}`);
    await page.locator('#status', { hasText: 'chat connected' }).waitFor();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  it('nothing open: no draw action is offered', async () => {
    expect(await page.textContent('#open')).toBe('No draw is open.');
    expect(await shown()).toEqual([]);
  });

  it('a gift draw open: only "End now and draw"; drawn: nothing, and no Reroll on its winners', async () => {
    const { draw } = s.fourthwall.control.simulateGiftPurchase({
      quantity: 1,
      username: 'kind_fan',
      durationSeconds: 300,
    });
    const id = draw['id'] as string;
    await poll(() => page.locator(`#open .draw[data-id="${id}"]`).count()).toBe(1);
    await poll(shown).toEqual(['#end']);
    expect(await page.textContent('#end')).toBe('End now and draw');
    for (const n of logins('gd', 3)) s.chatServer.inject(s.chatServer.viewer(n), '!enter');
    await waitUntil(() => /3 entered/.test(s.bot.engine.status()), 5000, 'three entrants');
    await page.click('#end');
    await poll(() => page.textContent('#answer')).toBe('Closed 1 draw; drawing the winners.');
    await waitUntil(async () => (await status(id)) === 'finished', 15_000, 'gift draw finished');
    const done = page.locator(`#recent .draw[data-id="${id}"]`);
    await poll(() => done.locator('.winner').count()).toBe(1);
    await poll(shown).toEqual([]);
    expect(await done.locator('button[data-reroll]').count()).toBe(0);
  });

  it('a link giveaway open: "End now and draw" and "Cancel link giveaway"; cancelled: nothing', async () => {
    s.chatServer.inject(s.chatServer.broadcaster, '!giveaway start giftdrop-mug 1 300');
    await poll(() => page.locator('#open .draw').count()).toBe(1);
    await poll(shown).toEqual(['#end', '#cancel']);
    await confirmClick(page, '#cancel');
    await poll(() => page.textContent('#answer')).toBe('Link giveaway cancelled.');
    await poll(shown).toEqual([]);
    expect(await page.textContent('#open')).toBe('No draw is open.');
  });

  it('two draws open at once: the end button says it ends both', async () => {
    const { draw } = s.fourthwall.control.simulateGiftPurchase({
      quantity: 1,
      username: 'second_fan',
      durationSeconds: 300,
    });
    s.chatServer.inject(s.chatServer.broadcaster, '!giveaway start giftdrop-mug 1 300');
    await poll(() => page.locator('#open .draw').count()).toBe(2);
    await poll(shown).toEqual(['#end', '#cancel']);
    expect(await page.textContent('#end')).toBe('End all 2 open draws now and draw');
    await page.screenshot({ path: join(screenshotDir(), 'dashboard-two-open.png'), fullPage: true });
    await confirmClick(page, '#cancel'); // the link giveaway
    await poll(shown).toEqual(['#end']);
    expect(await page.textContent('#end')).toBe('End now and draw');
    await page.click('#end'); // nobody entered the gift draw: it closes with no winner
    await waitUntil(
      async () => ['finished', 'failed', 'cancelled'].includes((await status(draw['id'] as string)) ?? ''),
      15_000,
      'gift draw closed',
    );
    await poll(shown).toEqual([]);
  });

  it('links refused: only "Retry links" (winners can be rerolled); retried: nothing', async () => {
    s.fourthwall.control.faults.fail('createGiveawayLinks', 1, 422);
    s.chatServer.inject(s.chatServer.broadcaster, '!giveaway start giftdrop-mug 1 300');
    await poll(() => page.locator('#open .draw').count()).toBe(1);
    const id = (await page.locator('#open .draw').getAttribute('data-id'))!;
    for (const n of logins('lf', 2)) s.chatServer.inject(s.chatServer.viewer(n), '!enter');
    await waitUntil(() => /2 entered/.test(s.bot.engine.status()), 5000, 'two entrants');
    await page.click('#end');
    await waitUntil(async () => (await status(id)) === 'failed', 15_000, 'links refused');
    await poll(shown).toEqual(['#retry']);
    // the history says so too (what shows the button for a giveaway no longer in memory, after a restart)
    const waiting = () =>
      page.evaluate(
        "import('/dashboard/client.js').then((c) => c.authFetch('/dashboard/api/history')).then((r) => r.json()).then((h) => h.linksWaiting)",
      );
    expect(await waiting()).toBe(true);
    const failed = page.locator(`#recent .draw[data-id="${id}"]`);
    await poll(() => failed.locator('button[data-reroll]').count()).toBe(1);
    await page.screenshot({ path: join(screenshotDir(), 'dashboard-retry-links.png'), fullPage: true });
    await page.click('#retry');
    await poll(() => page.textContent('#answer')).toBe('Links delivered.');
    await poll(shown).toEqual([]);
    expect(await waiting()).toBe(false);
  });

  it('a finished link giveaway: Reroll on its winners, no other action', async () => {
    s.chatServer.inject(s.chatServer.broadcaster, '!giveaway start giftdrop-mug 1 300');
    await poll(() => page.locator('#open .draw').count()).toBe(1);
    const id = (await page.locator('#open .draw').getAttribute('data-id'))!;
    for (const n of logins('lg', 3)) s.chatServer.inject(s.chatServer.viewer(n), '!enter');
    await waitUntil(() => /3 entered/.test(s.bot.engine.status()), 5000, 'three entrants');
    await page.click('#end');
    await waitUntil(async () => (await status(id)) === 'finished', 15_000, 'giveaway finished');
    const done = page.locator(`#recent .draw[data-id="${id}"]`);
    await poll(() => done.locator('button[data-reroll]').count()).toBe(1);
    await poll(shown).toEqual([]);
    const winner = (await done.locator('button[data-reroll]').getAttribute('data-reroll'))!;
    await confirmClick(page, `#recent .draw[data-id="${id}"] button[data-reroll]`);
    await poll(() => page.textContent('#answer')).toBe(`Rerolled ${winner}.`);
  });

  it('/favicon.ico answers (no 404 on any page)', async () => {
    const res = await fetch(`${s.bot.http.url}/favicon.ico`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/x-icon');
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.readUInt16LE(2)).toBe(1); // an icon file
    expect(body.readUInt16LE(4)).toBe(1); // one image
    // the browser asked for it on the dashboard and the overlay, and nothing answered 404
    const overlay = await browser.context.newPage();
    await overlay.goto(`${s.bot.http.localUrl}/overlay`);
    // (a string, not a function: the test project has no DOM types)
    const icon = await overlay.evaluate(
      "new Promise((resolve) => { const img = new Image(); img.onload = () => resolve(img.naturalWidth); img.onerror = () => resolve(-1); img.src = '/favicon.ico'; })",
    );
    expect(icon).toBe(32);
    await overlay.close();
    expect((page as unknown as { notFound: string[] }).notFound).toEqual([]);
  });
});

describe.skipIf(!HAS_CHROMIUM)('dashboard actions for a gift purchase in Chromium', { timeout: 120_000 }, () => {
  let browser: TestBrowser;
  let s: InProcessStack;

  beforeAll(async () => {
    browser = await launchBrowser();
    s = await startInProcessStack({ settings: { gifting: { flow: 'purchase', entrySeconds: 180 } } });
    setShopLive({ fourthwall: s.fourthwall, chat: s.chatServer });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  it('open: only "End now and draw"; drawn: no Reroll (its gift links went out and stay the winners\'), and it says why', async () => {
    const page = await openDashboard(browser, s);
    const shown = () => actionsShown(page);
    expect(await shown()).toEqual([]);
    const { purchase } = s.fourthwall.control.simulateGiftPurchase({ quantity: 1, username: 'generous_fan' });
    const id = purchase['id'] as string;
    await poll(() => page.locator(`#open .draw[data-id="${id}"]`).count()).toBe(1);
    expect(await page.locator(`#open .draw[data-id="${id}"]`).textContent()).toContain('gift-purchase');
    await poll(shown).toEqual(['#end']);
    for (const n of logins('gp', 3)) s.chatServer.inject(s.chatServer.viewer(n), '!enter');
    await waitUntil(() => /3 entered/.test(s.bot.engine.status()), 5000, 'three entrants');
    await page.click('#end');
    await waitUntil(async () => (await s.bot.repo.getDraw(id))?.status === 'finished', 15_000, 'gift purchase drawn');
    const done = page.locator(`#recent .draw[data-id="${id}"]`);
    await poll(() => done.textContent()).toContain('gift link already out: it stays theirs');
    expect(await done.locator('button[data-reroll]').count()).toBe(0);
    await poll(shown).toEqual([]);
    await page.close();
  });
});

describe.skipIf(!HAS_CHROMIUM)(
  'dashboard actions for a link giveaway with a claim window in Chromium',
  { timeout: 120_000 },
  () => {
    let browser: TestBrowser;
    let s: InProcessStack;

    beforeAll(async () => {
      browser = await launchBrowser();
      s = await startInProcessStack({ settings: { claim: { seconds: 300 } } });
    }, 90_000);

    afterAll(async () => {
      await browser?.close();
      await s?.close();
    });

    it('open: End and Cancel; in the claim window: Cancel and Reroll; claimed: only Reroll', async () => {
      const page = await openDashboard(browser, s);
      const shown = () => actionsShown(page);
      s.chatServer.inject(s.chatServer.broadcaster, '!giveaway start giftdrop-mug 1 300');
      await poll(() => page.locator('#open .draw').count()).toBe(1);
      const id = (await page.locator('#open .draw').getAttribute('data-id'))!;
      await poll(shown).toEqual(['#end', '#cancel']);
      const viewers = logins('cw', 3).map((n) => s.chatServer.viewer(n));
      for (const v of viewers) s.chatServer.inject(v, '!enter');
      await waitUntil(() => /3 entered/.test(s.bot.engine.status()), 5000, 'three entrants');
      await page.click('#end');
      const open = page.locator(`#open .draw[data-id="${id}"]`);
      await poll(() => open.textContent()).toContain('link-giveaway · claim');
      await poll(shown).toEqual(['#cancel']);
      await poll(() => open.locator('button[data-reroll]').count()).toBe(1);
      // the winner claims: the giveaway finishes
      const winner = (await open.locator('button[data-reroll]').getAttribute('data-reroll'))!;
      s.chatServer.inject(
        viewers.find((v) => v.login === winner)!,
        '!claim',
      );
      await waitUntil(
        async () => (await s.bot.repo.getDraw(id))?.status === 'finished',
        15_000,
        'claimed and finished',
      );
      const done = page.locator(`#recent .draw[data-id="${id}"]`);
      await poll(() => done.locator('button[data-reroll]').count()).toBe(1);
      await poll(shown).toEqual([]);
      await page.close();
    });
  },
);
