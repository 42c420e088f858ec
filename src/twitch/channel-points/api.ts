/**
 * Helix's channel points calls the bot makes, with the broadcaster's token (scope
 * channel:manage:redemptions), checked with zod at the edge:
 * `GET/POST/PATCH /channel_points/custom_rewards` (the bot's own reward: `only_manageable_rewards`,
 * so another app's reward is never even read) and `GET/PATCH
 * /channel_points/custom_rewards/redemptions` (pending redemptions, settled up to 50 at a time).
 *
 * Contract: Twitch's refusals come back as ChannelPointsRefusal with one plain sentence for the
 * streamer (not Affiliate or Partner, a title another reward has, 50 rewards already, a missing
 * scope); anything else is the HelixClient's error (retried there within its deadline). Each call
 * costs one point of the broadcaster's own Helix bucket (Twitch counts per client id and user).
 */
import { z } from 'zod';
import { GiftdropError } from '../../shared/errors.js';
import { HelixError, type HelixClient } from '../helix.js';

export class ChannelPointsRefusal extends GiftdropError {
  constructor(message: string) {
    super('TWITCH_CHANNEL_POINTS_REFUSED', message);
  }
}

const RewardSchema = z.looseObject({
  id: z.string(),
  title: z.string(),
  cost: z.number(),
  prompt: z.string().optional(),
  is_paused: z.boolean(),
  is_enabled: z.boolean(),
});
const RewardsSchema = z.object({ data: z.array(RewardSchema) });
const RedemptionSchema = z.looseObject({
  id: z.string(),
  user_id: z.string(),
  user_login: z.string(),
  user_name: z.string().optional(),
  status: z.string(),
  redeemed_at: z.string().optional(),
});
const RedemptionsSchema = z.object({
  data: z.array(RedemptionSchema),
  pagination: z.looseObject({ cursor: z.string().optional() }).optional(),
});

export interface Reward {
  id: string;
  title: string;
  cost: number;
  prompt: string;
  paused: boolean;
  enabled: boolean;
}

export interface Redemption {
  id: string;
  userId: string;
  login: string;
  displayName: string;
  /** ms since the epoch (undefined when Twitch did not say). */
  redeemedAt?: number;
}

export type SettleStatus = 'FULFILLED' | 'CANCELED';

/** How many redemptions one PATCH settles at most (Twitch's limit). */
export const SETTLE_BATCH = 50;

function reward(r: z.infer<typeof RewardSchema>): Reward {
  return { id: r.id, title: r.title, cost: r.cost, prompt: r.prompt ?? '', paused: r.is_paused, enabled: r.is_enabled };
}

export class ChannelPointsApi {
  constructor(
    private readonly helix: HelixClient,
    private readonly broadcasterId: string,
  ) {}

  /** The bot's own reward with this id, or undefined when it is gone. */
  async reward(id: string): Promise<Reward | undefined> {
    try {
      const q = new URLSearchParams({ broadcaster_id: this.broadcasterId, id, only_manageable_rewards: 'true' });
      const body = await this.helix.request('GET', '/channel_points/custom_rewards', {
        query: q,
        schema: RewardsSchema,
      });
      const r = body.data.find((x) => x.id === id);
      return r ? reward(r) : undefined;
    } catch (err) {
      if (err instanceof HelixError && err.status === 404) return undefined;
      throw refusal(err);
    }
  }

  async create(r: { title: string; cost: number; prompt: string; paused: boolean }): Promise<Reward> {
    try {
      const body = await this.helix.request('POST', '/channel_points/custom_rewards', {
        query: new URLSearchParams({ broadcaster_id: this.broadcasterId }),
        body: {
          title: r.title,
          cost: r.cost,
          prompt: r.prompt,
          is_enabled: true,
          is_paused: r.paused,
          should_redemptions_skip_request_queue: false,
        },
        schema: RewardsSchema,
      });
      return reward(body.data[0]!);
    } catch (err) {
      throw refusal(err, r.title);
    }
  }

  async update(
    id: string,
    patch: Partial<{ title: string; cost: number; prompt: string; is_paused: boolean }>,
  ): Promise<Reward> {
    try {
      const body = await this.helix.request('PATCH', '/channel_points/custom_rewards', {
        query: new URLSearchParams({ broadcaster_id: this.broadcasterId, id }),
        body: patch,
        schema: RewardsSchema,
      });
      return reward(body.data[0]!);
    } catch (err) {
      throw refusal(err, patch.title);
    }
  }

  /** Every UNFULFILLED redemption of the reward, oldest first (all pages). */
  async pending(rewardId: string): Promise<Redemption[]> {
    const out: Redemption[] = [];
    let after: string | undefined;
    for (let page = 0; page < 200; page++) {
      const q = new URLSearchParams({
        broadcaster_id: this.broadcasterId,
        reward_id: rewardId,
        status: 'UNFULFILLED',
        sort: 'OLDEST',
        first: '50',
      });
      if (after) q.set('after', after);
      const body = await this.helix.request('GET', '/channel_points/custom_rewards/redemptions', {
        query: q,
        schema: RedemptionsSchema,
      });
      for (const r of body.data) {
        const at = r.redeemed_at ? Date.parse(r.redeemed_at) : NaN;
        out.push({
          id: r.id,
          userId: r.user_id,
          login: r.user_login,
          displayName: r.user_name ?? r.user_login,
          ...(Number.isFinite(at) ? { redeemedAt: at } : {}),
        });
      }
      after = body.pagination?.cursor;
      if (!after || !body.data.length) break;
    }
    return out;
  }

  /**
   * Sets up to SETTLE_BATCH redemptions to `status`; the ids Twitch changed (the others were not
   * UNFULFILLED any more: settled by someone else meanwhile).
   */
  async settle(rewardId: string, ids: readonly string[], status: SettleStatus): Promise<Set<string>> {
    const q = new URLSearchParams({ broadcaster_id: this.broadcasterId, reward_id: rewardId });
    for (const id of ids.slice(0, SETTLE_BATCH)) q.append('id', id);
    try {
      const body = await this.helix.request('PATCH', '/channel_points/custom_rewards/redemptions', {
        query: q,
        body: { status },
        schema: RedemptionsSchema,
      });
      return new Set(body.data.map((r) => r.id));
    } catch (err) {
      if (err instanceof HelixError && err.status === 404) return new Set();
      throw refusal(err);
    }
  }
}

/** What Twitch requires of a channel for channel points (the refusal below and the setup page say it). */
export const AFFILIATE_ONLY = 'channel points need an Affiliate or Partner channel';

/** Twitch's refusal as one sentence for the streamer (the error as it was otherwise). */
function refusal(err: unknown, title?: string): unknown {
  if (!(err instanceof HelixError)) return err;
  const m = err.twitchMessage ?? '';
  if (err.status === 403 && /partner or affiliate/i.test(m))
    return new ChannelPointsRefusal(
      `Twitch refused the channel-point reward: ${AFFILIATE_ONLY}. Turn channelPoints off in the settings file.`,
    );
  if (err.status === 403)
    return new ChannelPointsRefusal(
      `Twitch refused to change the reward (${m || 'forbidden'}): only the application that created a reward may change it; giftdrop never touches another app's reward.`,
    );
  if (err.status === 400 && /DUPLICATE/i.test(m))
    return new ChannelPointsRefusal(
      `the channel already has a reward titled "${title ?? ''}" (made by another app or by hand; giftdrop never changes it): rename that one, or set channelPoints.title to another title.`,
    );
  if (err.status === 400 && /maximum number of custom rewards/i.test(m))
    return new ChannelPointsRefusal(
      "the channel already has 50 custom rewards, Twitch's maximum: delete one on Twitch so giftdrop can create its reward.",
    );
  if (err.status === 401)
    return new ChannelPointsRefusal(
      `Twitch refused the broadcaster's token (${m || 'unauthorized'}): log the broadcaster in again with the scope channel:manage:redemptions.`,
    );
  return err;
}
