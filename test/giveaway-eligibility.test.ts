import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { noRoles, type ChatRoles } from '../src/shared/chat.js';
import { applyEligibility, ticketWeight } from '../src/giveaway/eligibility.js';
import { defaultGiveawaySettings, mergeGiveawaySettings, GiveawaySettingsError } from '../src/giveaway/settings.js';
import { verifyDraw } from '../src/fairness/verify.js';
import type { DrawRecord, Entrant } from '../src/giveaway/model.js';
import { chatMsg, type Harness } from './support/giveaway-fakes.js';
import { harnessPerTest } from './support/giveaway-harness.js';

const id = { channelLogin: 'streamer', channelId: '1000', botLogin: 'giftbot' };

function entrant(login: string, roles: Partial<ChatRoles> = {}, userId = `u-${login}`): Entrant {
  return { userId, login, displayName: login, weight: 1, roles: { ...noRoles, ...roles }, enteredAt: 0 };
}

function eligibleLogins(
  list: Entrant[],
  eligibility: Partial<typeof defaultGiveawaySettings.eligibility>,
  recent = new Set<string>(),
) {
  const settings = mergeGiveawaySettings({ eligibility });
  return applyEligibility(list, settings, id, recent);
}

describe('eligibility rules', () => {
  const everyone = [
    entrant('plain'),
    entrant('mod', { moderator: true }),
    entrant('sub1', { subscriber: true, subMonths: 1 }),
    entrant('sub12', { subscriber: true, subMonths: 12 }),
    entrant('newbie', { firstMessage: true }),
    entrant('streamer', { broadcaster: true }, '1000'),
    entrant('giftbot'),
    entrant('streamer_alt', {}, '1000'),
  ];

  it('always excludes the broadcaster (by role, login or channel id) and the bot', () => {
    const r = eligibleLogins(everyone, {});
    expect(r.eligible.map((e) => e.login)).toEqual(['plain', 'mod', 'sub1', 'sub12', 'newbie']);
    expect(r.excluded).toEqual({ broadcaster: 2, bot: 1 });
    expect(r.rules).toMatchObject({ excludeBroadcaster: true, excludeBot: true });
  });

  it.each([
    [{ excludeModerators: true }, ['plain', 'sub1', 'sub12', 'newbie'], 'moderator'],
    [{ subscribersOnly: true }, ['sub1', 'sub12'], 'not-subscriber'],
    [{ minSubMonths: 6 }, ['sub12'], 'sub-months'],
    [{ excludeLogins: ['@PLAIN', 'sub1'] }, ['mod', 'sub12', 'newbie'], 'excluded-login'],
    [{ excludeFirstTimeChatters: true }, ['plain', 'mod', 'sub1', 'sub12'], 'first-time-chatter'],
  ] as const)('%o', (rule, logins, reason) => {
    const r = eligibleLogins(everyone, rule as Partial<typeof defaultGiveawaySettings.eligibility>);
    expect(r.eligible.map((e) => e.login)).toEqual(logins);
    expect(r.excluded[reason]).toBe(5 - logins.length);
    expect(r.rules).toMatchObject(rule);
  });

  it('winner cooldown excludes recent winners by user id', () => {
    const r = eligibleLogins(everyone, { winnerCooldownHours: 24 }, new Set(['u-plain', 'u-mod']));
    expect(r.eligible.map((e) => e.login)).toEqual(['sub1', 'sub12', 'newbie']);
    expect(r.excluded['winner-cooldown']).toBe(2);
  });

  it('luck: subscriber multiplier and month tiers (highest matching tier wins)', () => {
    const luck = {
      subscriberMultiplier: 2,
      tiers: [
        { minMonths: 6, weight: 4 },
        { minMonths: 24, weight: 8 },
        { minMonths: 12, weight: 6 },
      ],
    };
    expect(ticketWeight({ ...noRoles }, luck)).toBe(1);
    expect(ticketWeight({ ...noRoles, subscriber: true, subMonths: 1 }, luck)).toBe(2);
    expect(ticketWeight({ ...noRoles, subscriber: true, subMonths: 7 }, luck)).toBe(4);
    expect(ticketWeight({ ...noRoles, subscriber: true, subMonths: 13 }, luck)).toBe(6);
    expect(ticketWeight({ ...noRoles, subscriber: true, subMonths: 30 }, luck)).toBe(8);
    expect(ticketWeight({ ...noRoles, subscriber: false, subMonths: 30 }, luck)).toBe(1);
  });

  it('settings: bad values are named; defaults are valid and frozen', () => {
    expect(() => mergeGiveawaySettings()).not.toThrow();
    expect(Object.isFrozen(defaultGiveawaySettings.eligibility.excludeLogins)).toBe(true);
    try {
      mergeGiveawaySettings({
        purchaseEntrySeconds: 5,
        luck: { subscriberMultiplier: 1.5 },
        claim: { seconds: -1, maxRerolls: 1 },
      });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(GiveawaySettingsError);
      const problems = (err as GiveawaySettingsError).problems.join('\n');
      expect(problems).toContain('purchaseEntrySeconds');
      expect(problems).toContain('luck.subscriberMultiplier');
      expect(problems).toContain('claim.seconds');
    }
  });
});

describe('eligibility in the service', () => {
  const make = harnessPerTest();
  async function drawWith(
    h: Harness,
    gifts: number,
    msgs: ReturnType<typeof chatMsg>[],
    drawId?: string,
  ): Promise<DrawRecord> {
    await h.svc.handleGiftDrawStarted(
      h.shop.addDraw({ gifts, createdAt: h.clock.now(), ...(drawId ? { id: drawId } : {}) }),
    );
    for (const m of msgs) h.svc.enter(m);
    // A gift draw short of winners is handed back (draw-failed); one with its winners finishes.
    const done = Promise.race([once(h.svc.events, 'draw-finished'), once(h.svc.events, 'draw-failed')]);
    h.clock.advance(60_000);
    const [rec] = (await done) as [DrawRecord];
    return (await h.repo.getDraw(rec.id))!;
  }

  it('only eligible entrants can win; the rules and exclusions are recorded', async () => {
    const h = await make({
      settings: { eligibility: { excludeModerators: true, subscribersOnly: true, excludeLogins: ['banned'] } },
    });
    const rec = await drawWith(h, 1, [
      chatMsg('plain'),
      chatMsg('mod', { roles: { moderator: true, subscriber: true, subMonths: 3 } }),
      chatMsg('banned', { roles: { subscriber: true, subMonths: 3 } }),
      chatMsg('sub', { roles: { subscriber: true, subMonths: 3 } }),
    ]);
    expect(rec.entrants).toBe(4);
    expect(rec.winners.map((w) => w.login)).toEqual(['sub']);
    expect(rec.frozenEntrants!.map((e) => e.login)).toEqual(['sub']);
    expect(rec.rules).toMatchObject({
      excludeModerators: true,
      subscribersOnly: true,
      excludeLogins: ['banned'],
      excluded: { moderator: 1, 'not-subscriber': 1, 'excluded-login': 1 },
    });
  });

  it('an entrant entered when chat read its line (receivedAt), or at the engine clock for a message without one', async () => {
    const h = await make();
    await h.svc.handleGiftDrawStarted(h.shop.addDraw({ gifts: 1, createdAt: h.clock.now() }));
    const readAt = h.clock.now() - 1_234;
    h.svc.enter({ ...chatMsg('read'), receivedAt: readAt });
    h.svc.enter(chatMsg('made'));
    const entrants = h.svc.drawViews().find((v) => v.active)!.entrants;
    expect([entrants.get('u-read')?.enteredAt, entrants.get('u-made')?.enteredAt]).toEqual([readAt, h.clock.now()]);
  });

  it('the broadcaster and the bot never enter, whatever the case of the login chat shows', async () => {
    const h = await make();
    await h.svc.handleGiftDrawStarted(h.shop.addDraw({ gifts: 1, createdAt: h.clock.now() }));
    expect(h.svc.enter(chatMsg('StReAmEr', { userId: 'u-other-id' }))).toBe(0);
    expect(h.svc.enter(chatMsg('GIFTBOT'))).toBe(0);
    expect(h.svc.enter(chatMsg('viewer', { userId: '1000' }))).toBe(0); // the channel's id
    expect(h.svc.enter(chatMsg('Viewer'))).toBe(1);
    expect(
      [
        ...h.svc
          .drawViews()
          .find((v) => v.active)!
          .entrants.values(),
      ].map((e) => e.login),
    ).toEqual(['viewer']);
  });

  it('winner cooldown across two draws', async () => {
    const h = await make({ settings: { eligibility: { winnerCooldownHours: 24 } } });
    const people = () => [chatMsg('alice'), chatMsg('bob')];
    const first = await drawWith(h, 1, people(), 'gdr_one');
    const second = await drawWith(h, 1, people(), 'gdr_two');
    expect(second.winners).toHaveLength(1);
    expect(second.winners[0]!.userId).not.toBe(first.winners[0]!.userId);
    expect(second.rules).toMatchObject({ winnerCooldownHours: 24, excluded: { 'winner-cooldown': 1 } });
    h.clock.advance(25 * 3_600_000);
    const third = await drawWith(h, 2, people(), 'gdr_three');
    expect(third.winners).toHaveLength(2);
    expect((third.rules!.excluded as Record<string, number>)['winner-cooldown']).toBeUndefined();
  });

  it('luck weights are recorded in the frozen entrant list and verify', async () => {
    const h = await make({ settings: { luck: { subscriberMultiplier: 3, tiers: [{ minMonths: 12, weight: 5 }] } } });
    const rec = await drawWith(h, 1, [
      chatMsg('plain'),
      chatMsg('sub', { roles: { subscriber: true, subMonths: 2 } }),
      chatMsg('veteran', { roles: { subscriber: true, subMonths: 14 } }),
    ]);
    const weights = Object.fromEntries(rec.frozenEntrants!.map((e) => [e.login, e.weight]));
    expect(weights).toEqual({ plain: 1, sub: 3, veteran: 5 });
    expect(rec.rules).toMatchObject({ luck: { subscriberMultiplier: 3, tiers: [{ minMonths: 12, weight: 5 }] } });
    expect(verifyDraw(rec)).toMatchObject({ ok: true });
  });

  it('first-time chatters are excluded when configured', async () => {
    const h = await make({ settings: { eligibility: { excludeFirstTimeChatters: true } } });
    const rec = await drawWith(h, 1, [chatMsg('fresh', { roles: { firstMessage: true } }), chatMsg('regular')]);
    expect(rec.winners.map((w) => w.login)).toEqual(['regular']);
  });

  it('minimum sub months', async () => {
    const h = await make({ settings: { eligibility: { minSubMonths: 6 } } });
    const rec = await drawWith(h, 1, [
      chatMsg('short', { roles: { subscriber: true, subMonths: 2 } }),
      chatMsg('long', { roles: { subscriber: true, subMonths: 8 } }),
      chatMsg('none'),
    ]);
    expect(rec.winners.map((w) => w.login)).toEqual(['long']);
  });

  it('nobody eligible: no finish call, handed back to Fourthwall, chat is told in one line', async () => {
    const h = await make({ settings: { eligibility: { subscribersOnly: true } } });
    const rec = await drawWith(h, 1, [chatMsg('plain')]);
    expect(rec.winners).toEqual([]);
    expect(rec.status).toBe('failed');
    expect(h.shop.count('finishDraw')).toBe(0);
    expect(h.chat.matching(/no eligible entrant for 1 gift,/)).toHaveLength(1);
  });
});
