/**
 * The dashboard's entrant list with account rules in force (follow age, account age: checked with
 * Twitch only when the draw closes), against the whole local stack (Fourthwall sandbox, chat
 * server with its local Helix API, the real bot and its HTTP server on an OS-chosen port):
 * - the entrants API (a real request over 127.0.0.1 with the dashboard token) names the rules in
 *   plain words and says they are checked with Twitch at the close, while `eligible` stays the
 *   chat rules' verdict; it makes no Helix call; without account rules the answer has no such part;
 * - in headless Chromium, the count and the column header say the verdict is the chat rules' and
 *   name the rules Twitch checks at the close; a viewer's display name stays text;
 * - `describeAccountRules` words each rule set (none: undefined).
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { describeAccountRules } from '../src/giveaway/account-rules.js';
import { HAS_CHROMIUM, launchBrowser } from './support/browser.js';
import { entrantsReach, nextDrawOpened, startLinkStack, tempDir, type LinkStack } from './support/e2e-link-stack.js';

const RULES = { minFollowDays: 7, minAccountDays: 30 };
const RULES_TEXT = 'following for at least 7 days; account at least 30 days old';

const stacks: LinkStack[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of stacks.splice(0)) await s.close();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function stackWith(eligibility: Record<string, unknown>): Promise<LinkStack> {
  const dataDir = await tempDir();
  dirs.push(dataDir);
  const s = await startLinkStack({ dataDir, settings: { eligibility } });
  stacks.push(s);
  return s;
}

/** Opens a giveaway and has `logins` enter; resolves with the draw id once all are in. */
async function openWithEntrants(
  s: LinkStack,
  logins: readonly string[],
  names: Record<string, string> = {},
): Promise<string> {
  const opened = nextDrawOpened(s);
  s.say(s.mod, '!giveaway start giftdrop-mug 1 300');
  const { id } = await opened;
  const allIn = entrantsReach(s, id, logins.length);
  for (const l of logins) s.say(s.viewer(l, names[l] ? { displayName: names[l] } : {}), '!enter');
  await allIn;
  return id;
}

async function entrantsApi(s: LinkStack, id: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${s.bot.http.localUrl}/dashboard/api/entrants?draw=${encodeURIComponent(id)}`, {
    headers: { authorization: `Bearer ${s.bot.pages.token.token}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe('dashboard entrants with account rules', { timeout: 120_000 }, () => {
  it('the API names the account rules checked at the close, keeps eligible as the chat verdict, calls no Helix', async () => {
    const s = await stackWith({ ...RULES, excludeLogins: ['blocked'] });
    expect(new URL(s.bot.http.url).hostname).toBe('127.0.0.1');
    // 'blocked' fails a chat rule; whether the others follow is only known at the close.
    const id = await openWithEntrants(s, ['loyal', 'stranger', 'blocked']);
    const helixBefore = s.stack.helix.calls.length;
    const r = await entrantsApi(s, id);
    expect(r).toMatchObject({
      total: 3,
      eligible: 2,
      accountRules: { rules: RULES_TEXT, checked: 'with Twitch for the picks when the draw closes' },
    });
    expect(s.stack.helix.calls.length).toBe(helixBefore);

    const plain = await stackWith({});
    const id2 = await openWithEntrants(plain, ['alpha']);
    const r2 = await entrantsApi(plain, id2);
    expect(r2).toMatchObject({ total: 1, eligible: 1 });
    expect(r2).not.toHaveProperty('accountRules');
  });

  it.skipIf(!HAS_CHROMIUM)(
    'the page says the eligible count and column are the chat rules and names the rules checked at the close',
    async () => {
      const s = await stackWith({ ...RULES, excludeLogins: ['blocked'] });
      const id = await openWithEntrants(s, ['loyal', 'stranger', 'blocked'], { stranger: '<img/src=x>' });
      const browser = await launchBrowser();
      try {
        const page = await browser.context.newPage();
        await page.goto(`${s.bot.http.localUrl}/dashboard?token=${encodeURIComponent(s.bot.pages.token.token)}`);
        const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 15_000, interval: 50 });
        await poll(() => page.inputValue('#entrant-draw')).toBe(id);
        await poll(() => page.textContent('#entrant-count')).toBe(
          `3 entered, 2 eligible by the chat rules; checked with Twitch for the picks when the draw closes: ${RULES_TEXT}`,
        );
        expect(await page.textContent('#entrant-verdict')).toBe('eligible by the chat rules');
        expect(await page.textContent('#entrants tbody')).toContain('<img/src=x>');
        expect(await page.locator('#entrants img').count()).toBe(0);
      } finally {
        await browser.close();
      }
    },
  );
});

describe('describeAccountRules', () => {
  const r = (o: Partial<{ followersOnly: boolean; minFollowDays: number; minAccountDays: number }>) =>
    describeAccountRules({ followersOnly: false, minFollowDays: 0, minAccountDays: 0, uncheckable: 'allow', ...o });
  it('words each rule set', () => {
    expect(r({})).toBeUndefined();
    expect(r({ followersOnly: true })).toBe('following the channel');
    expect(r({ followersOnly: true, minFollowDays: 1 })).toBe('following for at least 1 day');
    expect(r({ minAccountDays: 30 })).toBe('account at least 30 days old');
    expect(r(RULES)).toBe(RULES_TEXT);
  });
});
