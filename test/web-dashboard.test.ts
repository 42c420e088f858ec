/**
 * The dashboard in a real headless Chromium against the whole local stack: without the token every
 * API answers 401 and the page shows its sign-in form; `?token=` signs in (kept in the tab's
 * sessionStorage, sent as a header, no cookie; the token leaves the address bar); the product picker starts a link giveaway, viewers enter on the local chat
 * server, "End now" draws, a winner is rerolled from the page, and the CSV is downloaded: each
 * step is checked on screen, in the engine's own answer, in chat and in the history. A screenshot
 * of the dashboard goes to the folder the test prints. "Sign out" forgets the token: the page asks for it again.
 * (The cookie-theft reproduction and the sign-in form: test/web-operator-auth.test.ts.)
 */
import { overlayKey } from '../src/web/operator/overlay-view.js';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, launchBrowser, screenshotDir, type TestBrowser } from './support/browser.js';
import { logins, startInProcessStack, waitUntil, type InProcessStack } from './support/e2e-stack.js';

/** Polls `fn` until the matcher holds; generous, because CI runs many test files side by side. */
const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 15_000, interval: 50 });

describe.skipIf(!HAS_CHROMIUM)('dashboard in Chromium', { timeout: 120_000 }, () => {
  let browser: TestBrowser;
  let s: InProcessStack;

  beforeAll(async () => {
    browser = await launchBrowser();
    s = await startInProcessStack();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  it('refuses requests without the token', async () => {
    const base = s.bot.http.localUrl;
    for (const path of ['/dashboard/api/state', '/dashboard/api/history.csv']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(401);
    }
    const wrong = await fetch(`${base}/dashboard/api/end`, {
      method: 'POST',
      headers: { authorization: 'Bearer not-the-token-at-all', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(wrong.status).toBe(401);
    const page = await browser.context.newPage();
    // the shell holds no data: it loads, and asks for the token
    const answer = await page.goto(`${base}/dashboard?token=wrong-token-wrong-token`);
    expect(answer!.status()).toBe(200);
    await poll(() => page.textContent('#signin-problem')).toContain('refused');
    expect(await page.locator('#app').isHidden()).toBe(true);
    await page.close();
    // the generated token file is owner-only
    const file = join(s.config.dataDir, 'dashboard.token');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, 'utf8')).trim()).toBe(s.bot.pages.token.token);
  });

  it('starts a link giveaway, ends it, rerolls a winner and downloads the CSV', async () => {
    const base = s.bot.http.localUrl;
    const page = await browser.context.newPage();
    await page.goto(`${base}/dashboard?token=${encodeURIComponent(s.bot.pages.token.token)}`);
    expect(new URL(page.url()).search).toBe(''); // the token left the address bar
    await poll(() => page.textContent('#status')).toContain('chat');
    expect(await browser.context.cookies(base)).toEqual([]); // no cookie carries anything
    const csp = (
      await fetch(`${base}/dashboard`, { headers: { authorization: `Bearer ${s.bot.pages.token.token}` } })
    ).headers.get('content-security-policy');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');

    // a POST that is not JSON is refused even with the token; a GET never changes state
    const withToken = "{ authorization: 'Bearer ' + sessionStorage.getItem('giftdrop.dashboardToken') }";
    const refused = await page.evaluate(
      `fetch('/dashboard/api/end', { method: 'POST', body: 'x', headers: ${withToken} }).then((r) => r.status)`,
    );
    expect(refused).toBe(403);
    expect(await page.evaluate(`fetch('/dashboard/api/end', { headers: ${withToken} }).then((r) => r.status)`)).toBe(
      404,
    );

    // product picker: images and stock
    const mug = page.locator('.product', { hasText: 'Giftdrop Mug' });
    await mug.waitFor();
    await poll(() => mug.textContent()).toContain('unlimited');
    expect(
      await page.evaluate(
        "(() => { const i = [...document.querySelectorAll('.product')].find((b) => b.textContent.includes('Giftdrop Mug')).querySelector('img'); return i.complete && i.naturalWidth > 0; })()",
      ),
    ).toBe(true);
    await mug.click();
    await page.fill('#start-winners', '2');
    await page.fill('#start-seconds', '300');
    await page.click('#start');
    await poll(() => page.textContent('#answer')).toMatch(/^Link giveaway lnk_[0-9a-f]+ started\.$/);
    const id = /lnk_[0-9a-f]+/.exec((await page.textContent('#answer'))!)![0];
    await poll(() => page.textContent('#open')).toContain('Giftdrop Mug');
    await s.chatServer.waitFor(
      () => s.chatServer.botMessages().some((m) => m.includes('Giftdrop Mug')),
      5000,
      'giveaway announced',
    );

    const names = logins('viewer', 5);
    for (const n of names) s.chatServer.inject(s.chatServer.viewer(n), '!enter');
    await poll(() => page.textContent('#entrant-count')).toBe('5 entered, 5 eligible');
    expect(await page.textContent('#entrant-verdict')).toBe('eligible'); // no account rules: as before
    await page.fill('#entrant-search', 'viewer3');
    await poll(() => page.locator('#entrants tbody tr').count()).toBe(1);
    expect(await page.textContent('#entrants tbody')).toContain('viewer3');

    await page.click('#end');
    await poll(() => page.textContent('#answer')).toBe('Closed 1 draw; drawing the winners.');
    let rec = (await s.bot.repo.getDraw(id))!;
    await waitUntil(
      async () => (rec = (await s.bot.repo.getDraw(id))!).status === 'finished',
      15_000,
      'giveaway finished',
    );
    expect(rec.winners).toHaveLength(2);
    const recent = page.locator('#recent .draw', { hasText: 'Giftdrop Mug' });
    await poll(() => recent.locator('.link').allTextContents()).toEqual(rec.winners.map((w) => w.redeemUrl));
    expect(await recent.locator('button', { hasText: 'Copy' }).count()).toBe(2);

    // reroll the first winner from the page
    const first = rec.winners[0]!;
    // a destructive action asks once: the first click only asks, the second acts
    const rerollButton = recent.locator(`button[data-reroll="${first.login}"]`);
    await rerollButton.click();
    await poll(() => rerollButton.textContent()).toBe(`Confirm: replace @${first.login}`);
    expect(s.bot.engine.drawViews().find((v) => v.record.id === id)!.record.rerolls ?? []).toEqual([]);
    await rerollButton.click();
    await poll(() => page.textContent('#answer')).toBe(`Rerolled ${first.login}.`);
    await waitUntil(
      async () => ((rec = (await s.bot.repo.getDraw(id))!).rerolls?.length ?? 0) === 1,
      5000,
      'reroll saved',
    );
    expect(rec.winners.map((w) => w.login)).not.toContain(first.login);
    await poll(() => recent.textContent()).toContain(rec.winners[0]!.displayName);
    expect(await recent.textContent()).not.toContain(`@${first.login}`);
    await s.chatServer.waitFor(
      () =>
        s.chatServer
          .botMessages()
          .some(
            (m) =>
              m ===
              `🔁 Giftdrop Mug: @${first.login} is replaced by @${rec.winners[0]!.login} (rerolled by the broadcaster).`,
          ),
      5000,
      'reroll announced',
    );
    // the first winner's link had gone out: it stays theirs; the console gives the replacement a new one
    const newLink = rec.winners.find((w) => w.userId === rec.rerolls![0]!.newUserId)!.redeemUrl!;
    expect(newLink).not.toBe(first.redeemUrl);
    expect(
      s.operatorLines.some(
        (l) => l.includes(`@${rec.winners.find((w) => w.redeemUrl === newLink)!.login}`) && l.includes(newLink),
      ),
    ).toBe(true);
    expect(rec.rerolls![0]!.kept).toEqual({ giftId: first.giftId, redeemUrl: first.redeemUrl });

    // the overlay shows the replacement (and still no link)
    const overlay = await browser.context.newPage();
    await overlay.goto(`${base}/overlay`);
    const card = overlay.locator(`.card[data-key="${overlayKey(id)}"]`);
    await poll(() => card.locator('.note').textContent()).toBe(
      `${rec.winners.find((w) => w.userId === rec.rerolls![0]!.newUserId)!.displayName} replaces ${first.displayName}`,
    );
    expect(await card.locator('.winners li.replacement').count()).toBe(1);
    expect(await overlay.content()).not.toMatch(/https?:\/\/|gft_/);
    await overlay.close();

    // winner chat catch: what a winner says after the draw shows on the dashboard
    s.chatServer.inject(s.chatServer.viewer(rec.winners[0]!.login), 'thank you so much!');
    s.chatServer.inject(s.chatServer.viewer('viewer_not_won'), 'gg');
    await poll(() => page.textContent('#winner-chat')).toContain(
      `[Giftdrop Mug] ${rec.winners[0]!.displayName}: thank you so much!`,
    );
    expect(await page.textContent('#winner-chat')).not.toContain('gg');

    // the history on screen: the draw, its winners and its verify status
    const row = page.locator(`#history tr[data-id="${id}"]`);
    await poll(() => row.textContent()).toContain('verified');
    expect(await row.textContent()).toContain(rec.winners[0]!.displayName);
    await page.screenshot({ path: join(screenshotDir(), 'dashboard.png'), fullPage: true });

    // CSV download
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#csv')]);
    const csv = await readFile(await download.path(), 'utf8');
    expect(download.suggestedFilename()).toBe('giftdrop-history.csv');
    const lines = csv
      .trim()
      .split('\n')
      .filter((l) => l.includes(id));
    expect(lines).toHaveLength(2);
    for (const w of rec.winners) expect(csv).toContain(w.login);

    // Sign out: the tab forgets the token and asks for it again
    await page.click('#logout');
    await page.locator('#signin').waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await page.close();
  });
});
