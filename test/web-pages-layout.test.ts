/**
 * The verify, claim and dashboard pages as a first-day streamer and their viewers see them, in a
 * real headless Chromium at 1920x1080 and 390x844 against the whole local stack (Fourthwall
 * sandbox, chat server with its Twitch viewer login, the real bot on OS-chosen ports):
 * - no word is broken mid-word: every word of every visible text node is measured in the page
 *   (Range.getClientRects over the word: boxes on two lines = broken), except hashes, hex and
 *   links (class hex / link), which may wrap anywhere; the check itself is shown to catch a word
 *   that `word-break: break-all` splits;
 * - only applicable buttons: no draw action with nothing open, one stream button, Reroll on no
 *   redeemed prize, on no prize the shop cancelled and on no replaced winner; the claim page offers "Redeem my prize" only for a
 *   prize not redeemed (nor for one the shop cancelled, which says so), and says how long the
 *   login lasts as long as its cookie does; its own Log out button works;
 * - Reroll is refused for a redeemed prize through the dashboard API, on the page (no button) and
 *   in chat (`!giveaway reroll`), and a second reroll of one winner is refused the same three ways;
 * - a giveaway link the shop cancelled (the sandbox's control, as Fourthwall's own dashboard does;
 *   the bot learns it from its redemption poll): no longer waiting (tracker, dashboard list,
 *   history export `delivery.closedAt`/`closedAs`), and Reroll refused the same three ways;
 * - the verify page says the data is embedded in the page (not "in this file"); hashes are set
 *   apart (verify-page.test.ts checks the sandbox beacon's name).
 * Screenshots of each page at both sizes go to the folder the test prints (looked at by hand).
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import type { DrawRecord, Winner } from '../src/giveaway/model.js';
import { runHistoryCli } from '../src/cli/history.js';
import { captureIo } from './support/cli-io.js';
import { HAS_CHROMIUM, launchBrowser, screenshotDir, type TestBrowser } from './support/browser.js';
import { freePort } from './support/e2e-stack.js';
import {
  deliveryReaches,
  drawSettled,
  entrantsReach,
  nextDrawOpened,
  startLinkStack,
  within,
  type LinkStack,
} from './support/e2e-link-stack.js';

const SIZES = [
  { name: '1920', width: 1920, height: 1080 },
  { name: '390', width: 390, height: 844 },
] as const;

const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 15_000, interval: 50 });

/**
 * The words shown split over two lines (run in the page; a string, as the test project has no DOM
 * types). Words are runs between spaces, hyphens, slashes and punctuation, where a line may break.
 */
const BROKEN_WORDS = `(() => {
  const out = [];
  const range = document.createRange();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.parentElement || n.parentElement.closest('.hex, .link, script, style')) continue;
    const re = /[^\\s\\-\\/·,;:()\\[\\]"'…]+/g;
    let m;
    while ((m = re.exec(n.data))) {
      range.setStart(n, m.index);
      range.setEnd(n, m.index + m[0].length);
      const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0 && r.height > 0).map((r) => Math.round(r.bottom)));
      if (lines.size > 1) out.push(m[0]);
    }
  }
  return out;
})()`;

/** The texts of the buttons (and button-like links) a person sees on the page now. */
async function visibleButtons(page: Page): Promise<string[]> {
  const out: string[] = [];
  for (const b of await page.locator('button, a.btn').all())
    if (await b.isVisible()) out.push(((await b.textContent()) ?? '').trim());
  return out;
}

/** Screenshot of `page` at each size, with the broken-word check at each; `name` names the files. */
async function atBothSizes(page: Page, name: string, check?: (size: string) => Promise<void>): Promise<void> {
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    expect({ page: name, size: size.name, broken: await page.evaluate(BROKEN_WORDS) }).toEqual({
      page: name,
      size: size.name,
      broken: [],
    });
    expect(
      await page.evaluate('document.documentElement.scrollWidth'),
      `${name} at ${size.name} is no wider than the screen`,
    ).toBeLessThanOrEqual(size.width);
    await check?.(size.name);
    await page.screenshot({ path: join(screenshotDir(), `${name}-${size.name}.png`), fullPage: true });
  }
}

describe.skipIf(!HAS_CHROMIUM)(
  'verify, claim and dashboard pages at 1920x1080 and 390x844',
  { timeout: 180_000 },
  () => {
    let browser: TestBrowser;
    let s: LinkStack;
    let base: string;
    let record: DrawRecord;
    let redeemed: Winner;
    let other: Winner;
    let cancelled: Winner;

    beforeAll(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      s = await startLinkStack({ env: { HTTP_PORT: String(port), GIFTDROP_PUBLIC_URL: base } });
      browser = await launchBrowser();
      // A three-winner link giveaway; the first winner redeems their prize at the shop, the shop
      // cancels the third one's link.
      const opened = nextDrawOpened(s);
      s.say(s.mod, '!giveaway start mug 3 300');
      const open = await opened;
      const logins = ['ana', 'ben', 'cai', 'dee', 'a_rather_long_login_name'];
      const entered = entrantsReach(s, open.id, logins.length);
      s.enter(logins);
      await entered;
      const settled = drawSettled(s, open.id);
      s.say(s.mod, '!giveaway end');
      record = (await settled).record;
      expect(record.status).toBe('finished');
      [redeemed, other, cancelled] = record.winners as [Winner, Winner, Winner];
      const done = deliveryReaches(s, redeemed.userId, (d) => !!d.redeemedAt);
      s.fw.control.redeemGift(redeemed.giftId!);
      await done;
      // No webhook tells of a cancelled link: the tracker's redemption poll (one round, now) finds it.
      const closed = deliveryReaches(s, cancelled.userId, (d) => !!d.closedAt);
      s.fw.control.closeGift(cancelled.giftId!);
      await s.bot.delivery.tick();
      await closed;
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await s?.close(true);
    });

    /** A dashboard page, signed in, once its first state is shown. */
    async function dashboard(): Promise<Page> {
      const page = await browser.context.newPage();
      await page.goto(`${s.bot.http.localUrl}/dashboard?token=${encodeURIComponent(s.bot.pages.token.token)}`);
      await page.locator('#status', { hasText: 'chat connected' }).waitFor();
      return page;
    }

    /** POST /dashboard/api/reroll from the signed-in page (the API the button calls). */
    function rerollApi(page: Page, login: string): Promise<{ ok: boolean; message?: string }> {
      return page.evaluate(
        `import('/dashboard/client.js').then((c) => c.authFetch('/dashboard/api/reroll', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: ${JSON.stringify(login)}, drawId: ${JSON.stringify(record.id)} }) })).then((r) => r.json())`,
      );
    }

    it('the broken-word check catches a word that break-all splits (so a pass means something)', async () => {
      const page = await browser.context.newPage();
      await page.setContent(
        '<p style="width:40px;word-break:break-all;font:16px sans-serif">announced</p><p style="width:40px;font:16px sans-serif">a b c</p>',
      );
      expect(await page.evaluate(BROKEN_WORDS)).toEqual(['announced']);
      await page.close();
    });

    it('a redeemed prize: Reroll refused by the API, not offered on the page, refused in chat', async () => {
      const page = await dashboard();
      const block = page.locator(`#recent .draw[data-id="${record.id}"]`);
      await poll(() => block.locator('.winner').count()).toBe(3);
      // the page: no Reroll for the redeemed prize (it says why), Reroll for the other winner
      await poll(() => block.locator(`button[data-reroll="${redeemed.login}"]`).count()).toBe(0);
      expect(await block.locator('.winner', { hasText: `@${redeemed.login}` }).textContent()).toContain('Redeemed ✔');
      expect(await block.locator(`button[data-reroll="${other.login}"]`).count()).toBe(1);
      // the API (what the button would call)
      const api = await rerollApi(page, redeemed.login);
      expect(api).toEqual({
        ok: false,
        message: `${redeemed.login} already redeemed the prize: nothing is left to pass on.`,
      });
      // chat
      const from = s.mark();
      s.say(s.mod, `!giveaway reroll ${redeemed.login}`);
      expect(await s.nextBotLine(/already redeemed/, from)).toContain(`${redeemed.login} already redeemed the prize`);
      expect((await s.record(record.id)).rerolls ?? []).toEqual([]);
      await page.close();
    });

    it("a gift draw's winner who redeemed: the dashboard says it in the claim page's words", async () => {
      // Each step is named: a hang under a loaded CI names the step it hung on (onTestFailed below).
      let step = 'start';
      onTestFailed(() => console.error(`the gift-draw redeemed test stopped at: ${step}`));
      const at = <T>(what: string, promise: Promise<T>): Promise<T> => ((step = what), within(promise, what));
      s.fw.control.setLive(true);
      const opened = nextDrawOpened(s);
      const { draw } = s.fw.control.simulateGiftPurchase({ quantity: 1, username: 'generous_fan' });
      const open = await at('the gift draw to open', opened);
      expect(open.source.drawId).toBe(draw['id']);
      const entered = entrantsReach(s, open.id, 1);
      s.enter(['gift_gina']);
      await at('the entrant', entered);
      const settled = drawSettled(s, open.id);
      const told = new Promise<void>((resolve) => {
        const on = (drawId: string) => drawId === open.id && (s.bot.delivery.off('changed', on), resolve());
        s.bot.delivery.on('changed', on);
      });
      s.say(s.mod, '!giveaway end');
      const gift = (await at('the draw to settle', settled)).record;
      expect(gift.status).toBe('finished');
      const winner = gift.winners[0]!;
      // the winner redeems once they were told (the delivery tracker knows the prize then)
      await at('the winner to be told', told);
      const done = deliveryReaches(s, winner.userId, (d) => !!d.redeemedAt);
      s.fw.control.redeemGift(winner.giftId!);
      const delivery = await at('the redemption to reach the delivery tracker', done);
      const page = await at('the dashboard to show its first state', dashboard());
      const row = page.locator(`#recent .draw[data-id="${gift.id}"] .winner`, { hasText: `@${winner.login}` });
      step = "the dashboard row to say 'Redeemed'";
      await poll(() => row.locator('.prize-state').textContent()).toBe(
        `Redeemed ✔ (order ${delivery.orderFriendlyId})`,
      );
      // the claim page, logged in as that winner, says the same words
      const claim = await at('a new browser page', browser.context.newPage());
      await at('the claim page', claim.goto(`${base}/claim`));
      await at(
        'the claim page to send the winner to Twitch',
        claim.click('#login').then(() => claim.waitForURL(/\/oauth2\/authorize/)),
      );
      await at('the Twitch login form', claim.fill('input#login', winner.login));
      await at(
        'Twitch to send the winner back to the claim page',
        claim.click('button#authorize').then(() => claim.waitForURL(`${base}/claim`)),
      );
      expect(await at('the claim card', claim.textContent(`.card[data-draw="${gift.id}"] .done`))).toBe(
        `Redeemed ✔ (order ${delivery.orderFriendlyId})`,
      );
      await at('Log out', claim.click('button:has-text("Log out")'));
      // logged out: the page's own login button is back. Closing a page while a navigation commits
      // can hang Chromium's close for good (crbug.com/536385539, playwright#41900), so the logout's
      // navigation ends first.
      await at('the logged-out claim page', claim.locator('#login').waitFor());
      expect(claim.url()).toBe(`${base}/claim`);
      await at('the pages to close', Promise.all([claim.close(), page.close()]));
    });

    it('a link the shop cancelled: no longer waiting; Reroll refused by the API, not offered on the page, refused in chat', async () => {
      // not waiting: off the tracker's and the dashboard's list; the history export says how it ended
      expect((await s.bot.delivery.waiting()).map((p) => p.login)).toEqual([other.login]);
      const link = s.fw.state.packages
        .get(record.source.packageId!)!
        .giveawayLinks.find((l) => l.id === cancelled.giftId)!;
      const row = (await s.history()).find((r) => r.id === record.id) as unknown as {
        winners: { login: string; delivery?: Record<string, unknown> }[];
      };
      expect(row.winners.find((w) => w.login === cancelled.login)?.delivery).toMatchObject({
        closedAs: 'CANCELLED',
        closedAt: link.cancelledAt,
      });
      const page = await dashboard();
      const prizes = await page.evaluate<{ prizes: { login: string }[] }>(
        "import('/dashboard/client.js').then((c) => c.authFetch('/dashboard/api/prizes')).then((r) => r.json())",
      );
      expect(prizes.prizes.map((p) => p.login)).toEqual([other.login]);
      const table = captureIo(s.dataDir);
      expect(await runHistoryCli([], table.io)).toBe(0);
      expect(table.out()).toMatch(/1 redeemed, 1 cancelled, 1 (announced|whispered, not opened)/);
      // the page: the state instead of Reroll
      const block = page.locator(`#recent .draw[data-id="${record.id}"]`);
      await poll(() => block.locator('.winner').count()).toBe(3);
      expect(await block.locator('.winner', { hasText: `@${cancelled.login}` }).textContent()).toContain(
        'Can no longer be redeemed: the shop says it was cancelled',
      );
      expect(await block.locator(`button[data-reroll="${cancelled.login}"]`).count()).toBe(0);
      expect(await block.locator(`button[data-reroll="${other.login}"]`).count()).toBe(1);
      // the API and chat
      const refusal = `${cancelled.login}'s prize can no longer be redeemed (Fourthwall says it was cancelled): nothing is left to pass on.`;
      expect(await rerollApi(page, cancelled.login)).toEqual({ ok: false, message: refusal });
      const from = s.mark();
      s.say(s.mod, `!giveaway reroll ${cancelled.login}`);
      expect(await s.nextBotLine(/can no longer be redeemed/, from)).toContain(refusal);
      expect((await s.record(record.id)).rerolls ?? []).toEqual([]);
      await page.close();
    });

    it('one reroll per winner: after the page rerolled a winner, the API and chat refuse a second one', async () => {
      const page = await dashboard();
      const button = page.locator(`#recent .draw[data-id="${record.id}"] button[data-reroll="${other.login}"]`);
      await button.click();
      await poll(() => button.textContent()).toBe(`Confirm: replace @${other.login}`);
      await button.click();
      await poll(() => page.textContent('#answer')).toBe(`Rerolled ${other.login}.`);
      await poll(async () => (await s.record(record.id)).rerolls?.length ?? 0).toBe(1);
      await poll(() => button.count()).toBe(0);
      expect(await rerollApi(page, other.login)).toEqual({
        ok: false,
        message: `${other.login} was already replaced in that giveaway; a winner is rerolled once.`,
      });
      const from = s.mark();
      s.say(s.mod, `!giveaway reroll ${other.login}`);
      expect(await s.nextBotLine(/already replaced/, from)).toContain(`${other.login} was already replaced`);
      expect((await s.record(record.id)).rerolls).toHaveLength(1);
      await page.close();
    });

    it('dashboard: no word broken, only the buttons that apply, one time format', async () => {
      const page = await dashboard();
      const state = await page.evaluate<{
        draws: { id: string; winners: { login: string; rerollRefusal: string | null }[] }[];
      }>("import('/dashboard/client.js').then((c) => c.authFetch('/dashboard/api/state')).then((r) => r.json())");
      const rerollable = state.draws.flatMap((d) =>
        d.winners.filter((w) => w.rerollRefusal === null).map((w) => w.login),
      );
      const block = page.locator(`#recent .draw[data-id="${record.id}"]`);
      await poll(() => block.locator('button[data-reroll]').count()).toBe(rerollable.length);
      await poll(() => page.locator('#history tbody tr').count()).toBe(2); // the link giveaway and the gift draw
      await atBothSizes(page, 'dashboard', async () => {
        const buttons = await visibleButtons(page);
        // nothing open: no draw action, no entrant picker; exactly one stream button
        for (const gone of ['End now and draw', 'Cancel link giveaway', 'Retry links'])
          expect(buttons).not.toContain(gone);
        expect(await page.locator('#entrants-box').isVisible()).toBe(false);
        expect(buttons.filter((b) => b.startsWith('Mark stream'))).toHaveLength(1);
        expect(buttons.filter((b) => b === 'Reroll')).toHaveLength(rerollable.length);
        expect(buttons).toContain('Start giveaway');
        expect(await block.locator(`button[data-reroll="${redeemed.login}"]`).count()).toBe(0);
        expect(await block.locator(`button[data-reroll="${other.login}"]`).count()).toBe(0);
        expect(await block.locator(`button[data-reroll="${cancelled.login}"]`).count()).toBe(0);
      });
      // one time format: every time shown (history, prizes, chat lines) reads like "Nov 27, 13:46:06"
      const times = await page
        .locator('#history tbody td:first-child, #prizes tbody td:nth-child(4)')
        .allTextContents();
      const lines = await page.locator('#transcript li').allTextContents();
      const format = await page.evaluate<string>(
        "new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' }).format(new Date())",
      );
      const shape = (t: string) => t.replace(/\d+/g, '9').replace(/[A-Za-z]+/g, 'a');
      expect(times.length).toBeGreaterThan(0);
      for (const t of times) expect(shape(t)).toBe(shape(format));
      for (const l of lines) expect(shape(l.slice(0, format.length))).toBe(shape(format));
      await page.close();
    });

    it('the History never says "drawing" while Recent winners lists the winners', async () => {
      const page = await dashboard();
      const opened = nextDrawOpened(s);
      s.say(s.mod, '!giveaway start mug 1 300');
      const open = await opened;
      await poll(() => page.locator('#open .draw').count()).toBe(1);
      // a link giveaway runs: no product picker, no Start, a line saying why
      expect(await page.locator('#products').isVisible()).toBe(false);
      expect(await page.locator('#start').isVisible()).toBe(false);
      expect(await page.textContent('#start-busy')).toContain('A link giveaway is running');
      expect(await page.locator('#entrants-box').isVisible()).toBe(true);
      const entered = entrantsReach(s, open.id, 2);
      s.enter(['eve', 'fay']);
      await entered;
      await poll(() => page.textContent('#entrant-count')).toBe('2 entered, 2 eligible');
      // the History tells the open giveaway as the engine has it: open, with its 2 entrants
      await poll(() => page.locator(`#history tr[data-id="${open.id}"] td:nth-child(5)`).textContent()).toBe('2');
      // while it is open: End and Cancel, no Start, no Retry; no word broken in the open draw and its entrants
      await atBothSizes(page, 'dashboard-open', async () => {
        const buttons = await visibleButtons(page);
        expect(buttons).toEqual(expect.arrayContaining(['End now and draw', 'Cancel link giveaway']));
        for (const gone of ['Start giveaway', 'Retry links']) expect(buttons).not.toContain(gone);
      });
      // watch the page from now on: at no render do Recent winners list the draw while History says drawing
      await page.evaluate(`(() => {
      window.__lag = [];
      new MutationObserver(() => {
        const recent = document.querySelector('#recent .draw[data-id="${open.id}"] .winner');
        const row = document.querySelector('#history tr[data-id="${open.id}"]');
        if (recent && row && !row.textContent.includes('finished')) window.__lag.push(row.textContent);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    })()`);
      const settled = drawSettled(s, open.id);
      s.say(s.mod, '!giveaway end');
      await settled;
      await poll(() => page.locator(`#history tr[data-id="${open.id}"]`).textContent()).toContain('finished');
      await poll(() => page.locator(`#recent .draw[data-id="${open.id}"] .winner`).count()).toBe(1);
      // the History followed within the render that listed the winners (no 5 s lag)
      expect(await page.evaluate('window.__lag')).toEqual([]);
      await page.close();
    });

    it('verify page: no word broken; the data embedded in the page', async () => {
      const page = await browser.context.newPage();
      await page.goto(`${base}/verify/${encodeURIComponent(record.id)}`);
      await page.waitForFunction("document.body.dataset.verdict !== 'pending'", undefined, { timeout: 30_000 });
      expect(await page.locator('body').getAttribute('data-verdict')).toBe('verified');
      const text = (await page.textContent('body')) ?? '';
      expect(text).toContain("from the draw's data embedded in this page");
      expect(text).not.toContain('this file');
      // hashes are set apart (and may wrap anywhere); the words around them never break
      expect(await page.locator('#checks .hex').count()).toBeGreaterThan(3);
      await atBothSizes(page, 'verify');
      await page.close();
    });

    it('claim page: no word broken; the login lasts as long as its cookie says; Redeem only for a prize not redeemed', async () => {
      await browser.context.clearCookies();
      const page = await browser.context.newPage();
      await page.goto(`${base}/claim`);
      expect(await page.textContent('main')).toContain(
        'This browser stays logged in for 60 minutes, or until you log out',
      );
      await atBothSizes(page, 'claim-login', async () => {
        expect(await visibleButtons(page)).toEqual(['Log in with Twitch']);
      });
      // the winner whose prize was redeemed: no redeem button; the session cookie lives 60 minutes
      await page.click('#login');
      await page.waitForURL(/\/oauth2\/authorize/);
      await page.fill('input#login', redeemed.login);
      await page.click('button#authorize');
      await page.waitForURL(`${base}/claim`);
      const session = (await browser.context.cookies(`${base}/claim`)).find((c) => c.name === 'giftdrop_claim')!;
      expect(Math.round((session.expires - Date.now() / 1000) / 60)).toBe(60);
      await atBothSizes(page, 'claim-redeemed', async () => {
        expect(await visibleButtons(page)).toEqual(['Log out']);
        expect(await page.textContent('.card')).toContain('Redeemed ✔');
      });
      // the winner whose link the shop cancelled: no redeem button, the card says why
      // (the page's own logout form: Chromium sends Origin "null" under its no-referrer policy)
      await page.click('button:has-text("Log out")');
      await page.locator('#login').waitFor();
      expect(page.url()).toBe(`${base}/claim`);
      await page.click('#login');
      await page.waitForURL(/\/oauth2\/authorize/);
      await page.fill('input#login', cancelled.login);
      await page.click('button#authorize');
      await page.waitForURL(`${base}/claim`);
      expect(await page.textContent('#viewer')).toBe(cancelled.displayName);
      expect(await visibleButtons(page)).toEqual(['Log out']);
      expect(await page.textContent('.card')).toContain('Can no longer be redeemed: the shop says it was cancelled.');
      await page.close();
    });
  },
);
