/**
 * The Helix sandbox's channel points keep Twitch's rules, over real HTTP with the broadcaster's
 * token: at most 50 custom rewards, titles unique, Affiliate/Partner only, another client id's
 * reward refused (403), redemption status changed only from UNFULFILLED (404 otherwise), refunds
 * counted and the points given back, a paused reward not redeemable.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SandboxChannelPoints } from '../src/sandbox/helix/channel-points.js';
import { ManualClock } from '../src/shared/clock.js';
import { ChannelPointsApi, ChannelPointsRefusal } from '../src/twitch/channel-points/api.js';
import { BROADCASTER_ID, eventSubRig, type EventSubRig } from './support/eventsub-rig.js';

const rigs: EventSubRig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0)) await r.close();
});

async function rig() {
  const r = await eventSubRig({ clock: new ManualClock(Date.now()) });
  rigs.push(r);
  const points = new SandboxChannelPoints(r.helix);
  points.register();
  return { r, points, api: new ChannelPointsApi(r.broadcasterHelix, BROADCASTER_ID) };
}

describe('sandbox channel points', () => {
  it('50 rewards at most, unique titles, Affiliate/Partner only', async () => {
    const { points, api } = await rig();
    for (let i = 0; i < 49; i++) points.addForeignReward(BROADCASTER_ID, `Other ${i}`);
    await expect(api.create({ title: 'other 3', cost: 10, prompt: '', paused: true })).rejects.toThrow(
      /already has a reward titled "other 3"/,
    );
    const mine = await api.create({ title: 'Enter the giveaway', cost: 10, prompt: '', paused: true });
    expect(mine).toMatchObject({ title: 'Enter the giveaway', cost: 10, paused: true });
    await expect(api.create({ title: 'One more', cost: 10, prompt: '', paused: true })).rejects.toThrow(
      /already has 50 custom rewards/,
    );
    points.setAffiliate(BROADCASTER_ID, false);
    points.rewards.clear();
    const refused = await api.create({ title: 'Enter', cost: 10, prompt: '', paused: true }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ChannelPointsRefusal);
    expect((refused as Error).message).toMatch(/channel points need an Affiliate or Partner channel/);
  });

  it("another app's reward is refused, read as absent, and its redemptions are not ours", async () => {
    const { points, api } = await rig();
    const foreign = points.addForeignReward(BROADCASTER_ID, 'Hydrate!');
    expect(await api.reward(foreign.id)).toBeUndefined(); // only_manageable_rewards
    await expect(api.update(foreign.id, { is_paused: true })).rejects.toThrow(
      /only the application that created a reward may change it/,
    );
    await expect(api.pending(foreign.id)).rejects.toMatchObject({ status: 403 });
    expect(foreign.isPaused).toBe(false);
  });

  it('status changes only from UNFULFILLED; CANCELED refunds (counted, points back); a paused reward cannot be redeemed', async () => {
    const { points, api } = await rig();
    const reward = await api.create({ title: 'Enter', cost: 100, prompt: '', paused: false });
    points.setPoints('2001', 150);
    const r1 = points.redeem(reward.id, { id: '2001', login: 'ann' });
    expect(points.redeem(reward.id, { id: '2001', login: 'ann' })).toBe('not-enough-points');
    expect(points.pointsOf('2001')).toBe(50);
    if (typeof r1 === 'string') throw new Error(r1);
    expect((await api.pending(reward.id)).map((x) => x.id)).toEqual([r1.id]);
    expect(await api.settle(reward.id, [r1.id], 'CANCELED')).toEqual(new Set([r1.id]));
    expect(points.refunds).toBe(1);
    expect(points.pointsOf('2001')).toBe(150);
    expect(await api.settle(reward.id, [r1.id], 'FULFILLED')).toEqual(new Set()); // 404: not UNFULFILLED any more
    expect(points.redemptions.get(r1.id)!.status).toBe('CANCELED');
    await api.update(reward.id, { is_paused: true });
    expect(points.redeem(reward.id, { id: '2002', login: 'bo' })).toBe('paused');
  });
});
