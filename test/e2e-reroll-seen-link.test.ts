/**
 * A link someone has seen stays theirs (issue 46, finding 2), on the whole local stack with the
 * claim page on (the sandbox's Twitch viewer login, plain HTTP). The review's reproduction: erin
 * wins a link giveaway, opens the claim page and sees her link; `!giveaway reroll erin` names
 * dave; erin redeems the link she saw. Before the fix dave was handed erin's link (he got
 * GIFT_NOT_REDEEMABLE) and the history recorded dave as having redeemed it. Now: dave gets a NEW
 * link (a second giveaway-link package), erin's redemption is credited to erin in the delivery
 * state, the history and her claim page, and dave's claim page shows his own link, unredeemed.
 * (The two entrants are named by the draw's fair outcome: whoever wins plays erin.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/e2e-stack.js';
import { runMugGiveaway, startLinkStack, type LinkStack } from './support/e2e-link-stack.js';
import { claimPageAs } from './support/claim-login.js';

describe('a reroll of a winner whose link was seen', { timeout: 90_000 }, () => {
  let s: LinkStack;
  let base: string;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    s = await startLinkStack({
      env: { HTTP_PORT: String(port), GIFTDROP_PUBLIC_URL: base },
      settings: { delivery: { pollSeconds: 3600 } },
    });
  }, 60_000);

  afterAll(async () => {
    await s?.close(true);
  });

  it('gives the replacement a new link; the redemption of the seen link is credited to its holder', async () => {
    const record = await runMugGiveaway(s, ['erin', 'dave']);
    const erin = record.winners[0]!;
    const dave = ['erin', 'dave'].find((l) => l !== erin.login)!;
    const seenLink = erin.redeemUrl!;
    expect(seenLink).toMatch(/^https?:\/\//);
    // erin opens the claim page and sees her link
    expect(await claimPageAs(base, erin.login)).toContain(seenLink);

    // the streamer rerolls her: dave is named, with a link of his own
    const from = s.mark();
    s.say(s.mod, `!giveaway reroll ${erin.login}`);
    await s.nextBotLine(new RegExp(`@${erin.login} is replaced by @${dave}`), from);
    await s.idle();
    const after = await s.record(record.id);
    const replacement = after.winners[0]!;
    expect(replacement.login).toBe(dave);
    expect(replacement.redeemUrl).toMatch(/^https?:\/\//);
    expect(replacement.redeemUrl).not.toBe(seenLink);
    expect(replacement.giftId).not.toBe(erin.giftId);
    expect(s.requests('createGiveawayLinks').filter((r) => r.status === 200)).toHaveLength(2);
    expect(after.rerolls).toEqual([
      expect.objectContaining({ replacedLogin: erin.login, kept: { giftId: erin.giftId, redeemUrl: seenLink } }),
    ]);
    expect(after.source.extraPackageIds).toHaveLength(1);
    // the console got dave's new link, and never named him with erin's
    expect(s.operator.some((l) => l.includes(`@${dave}`) && l.includes(replacement.redeemUrl!))).toBe(true);
    expect(s.operator.some((l) => l.includes(`@${dave}`) && l.includes(seenLink))).toBe(false);
    // the draw still verifies
    expect((await s.verify(record.id)).code).toBe(0);

    // erin redeems the link she saw (an ORDER_PLACED with its gift id)
    const credited = new Promise<void>((resolve) => {
      const on = (drawId: string, userId: string) => {
        if (drawId !== record.id || userId !== erin.userId) return;
        s.bot.delivery.off('changed', on);
        resolve();
      };
      s.bot.delivery.on('changed', on);
    });
    s.fw.control.redeemGift(erin.giftId!);
    await credited;
    await s.idle();

    // credited to erin, never to dave
    const final = await s.record(record.id);
    expect(final.winners[0]!.delivery?.redeemedAt).toBeUndefined();
    expect(final.rerolls![0]!.delivery?.redeemedAt).toMatch(/^\d{4}-/);
    expect(s.bot.repo.deliveryOf(record.id, erin.userId)?.redeemedAt).toMatch(/^\d{4}-/);
    expect(s.bot.repo.deliveryOf(record.id, replacement.userId)?.redeemedAt).toBeUndefined();
    // the history export says the same
    const row = (await s.history()).find((r) => r.id === record.id)!;
    expect(row.winners.map((w) => w.login)).toEqual([dave]);
    // the claim pages: erin's prize is redeemed; dave's shows his own link, to redeem
    const erinPage = await claimPageAs(base, erin.login);
    expect(erinPage).toContain('Redeemed ✔');
    expect(erinPage).not.toContain(replacement.redeemUrl!);
    const davePage = await claimPageAs(base, dave);
    expect(davePage).toContain(replacement.redeemUrl!);
    expect(davePage).not.toContain(seenLink);
    expect(davePage).not.toContain('Redeemed ✔');
    // the dashboard's prizes waiting: dave's only
    const prizes = (await (
      await fetch(`${s.bot.http.localUrl}/dashboard/api/prizes`, {
        headers: { authorization: `Bearer ${s.bot.pages.token.token}` },
      })
    ).json()) as { prizes: { login: string; link?: string }[] };
    expect(prizes.prizes.map((p) => [p.login, p.link])).toEqual([[dave, replacement.redeemUrl]]);
  });
});
