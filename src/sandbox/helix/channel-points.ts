/**
 * The Helix sandbox's channel points (registered on SandboxHelix with `register`), with Twitch's
 * rules:
 * - `POST /channel_points/custom_rewards?broadcaster_id` `{ title, cost, prompt?, is_enabled?,
 *   is_paused?, should_redemptions_skip_request_queue? }` -> `{ data: [reward] }`; the token must
 *   be the broadcaster's with `channel:manage:redemptions` (401); an Affiliate or Partner channel
 *   only (403 "The broadcaster is not a partner or affiliate", see `setAffiliate`); a title of
 *   1-45 characters, unique on the channel (400 CREATE_CUSTOM_REWARD_DUPLICATE_REWARD); a cost of
 *   at least 1; at most 50 custom rewards (400);
 * - `GET /channel_points/custom_rewards?broadcaster_id[&id][&only_manageable_rewards]`;
 * - `PATCH` and `DELETE /channel_points/custom_rewards?broadcaster_id&id`: only by the client id
 *   that created the reward (403 "The ID in the Client-Id header must match ..."), 404 unknown;
 * - `GET /channel_points/custom_rewards/redemptions?broadcaster_id&reward_id&status|id[&sort][&first][&after]`
 *   (the creating client id only), paginated with a cursor;
 * - `PATCH /channel_points/custom_rewards/redemptions?broadcaster_id&reward_id&id (1-50)` `{ status:
 *   FULFILLED | CANCELED }`: only UNFULFILLED redemptions change (404 when none of them is);
 *   CANCELED gives the points back (counted in `refunds`, the viewer's balance restored).
 * `settleDown` makes that PATCH answer 503 (a fault for tests). `redeem()` plays a viewer redeeming a reward (refused while it is paused or disabled, or when the
 * viewer lacks the points); each redemption is announced through `onRedeemed` (the EventSub
 * sandbox publishes it). Time is the Helix sandbox's clock.
 */
import { randomUUID } from 'node:crypto';
import type { HelixRouteCall, SandboxHelix } from './index.js';

export interface SimReward {
  id: string;
  broadcasterId: string;
  broadcasterLogin: string;
  /** The client id that created it (only it may change the reward or its redemptions). */
  clientId: string;
  title: string;
  cost: number;
  prompt: string;
  isEnabled: boolean;
  isPaused: boolean;
  skipQueue: boolean;
}

export type RedemptionStatus = 'UNFULFILLED' | 'FULFILLED' | 'CANCELED';

export interface SimRedemption {
  id: string;
  rewardId: string;
  broadcasterId: string;
  userId: string;
  login: string;
  displayName: string;
  userInput: string;
  status: RedemptionStatus;
  redeemedAt: string;
}

const MAX_REWARDS = 50;
const MANAGE = 'channel:manage:redemptions';
const READ = 'channel:read:redemptions';

export class SandboxChannelPoints {
  readonly rewards = new Map<string, SimReward>();
  readonly redemptions = new Map<string, SimRedemption>();
  /** Redemptions CANCELED through the API (points given back). */
  refunds = 0;
  /** Redemptions FULFILLED through the API. */
  fulfilled = 0;
  /** While true, setting a redemption's status answers 503 (a Twitch outage for that call). */
  settleDown = false;
  private readonly nonAffiliates = new Set<string>();
  private readonly points = new Map<string, number>();
  private readonly listeners: ((r: SimRedemption, reward: SimReward) => void)[] = [];
  private readonly logins = new Map<string, string>();

  constructor(private readonly helix: SandboxHelix) {}

  /** Serves the routes on `helix`. */
  register(): void {
    this.helix.route((call) => this.route(call));
  }

  /** The channel is (not) an Affiliate or Partner: creating a reward is refused with 403. */
  setAffiliate(broadcasterId: string, affiliate: boolean): void {
    if (affiliate) this.nonAffiliates.delete(broadcasterId);
    else this.nonAffiliates.add(broadcasterId);
  }

  /** The channel's login (in the reward and redemption shapes). */
  setBroadcaster(broadcasterId: string, login: string): void {
    this.logins.set(broadcasterId, login);
  }

  /** A reward made by another application (or by hand): another client id. */
  addForeignReward(broadcasterId: string, title: string, cost = 100): SimReward {
    return this.make(broadcasterId, 'another-app-client-id', {
      title,
      cost,
      prompt: '',
      isEnabled: true,
      isPaused: false,
      skipQueue: false,
    });
  }

  /** Channel points a viewer holds (unlimited unless set). */
  setPoints(userId: string, points: number): void {
    this.points.set(userId, points);
  }

  pointsOf(userId: string): number | undefined {
    return this.points.get(userId);
  }

  onRedeemed(fn: (r: SimRedemption, reward: SimReward) => void): void {
    this.listeners.push(fn);
  }

  /** A viewer redeems a reward, as Twitch lets them: the redemption, or why it cannot be made. */
  redeem(
    rewardId: string,
    viewer: { id: string; login: string; displayName?: string },
    userInput = '',
  ): SimRedemption | 'paused' | 'disabled' | 'no-such-reward' | 'not-enough-points' {
    const reward = this.rewards.get(rewardId);
    if (!reward) return 'no-such-reward';
    if (!reward.isEnabled) return 'disabled';
    if (reward.isPaused) return 'paused';
    const balance = this.points.get(viewer.id);
    if (balance !== undefined) {
      if (balance < reward.cost) return 'not-enough-points';
      this.points.set(viewer.id, balance - reward.cost);
    }
    const r: SimRedemption = {
      id: randomUUID(),
      rewardId,
      broadcasterId: reward.broadcasterId,
      userId: viewer.id,
      login: viewer.login.toLowerCase(),
      displayName: viewer.displayName ?? viewer.login,
      userInput,
      status: reward.skipQueue ? 'FULFILLED' : 'UNFULFILLED',
      redeemedAt: new Date(this.helix.clock.now()).toISOString(),
    };
    this.redemptions.set(r.id, r);
    for (const fn of this.listeners) fn(r, reward);
    return r;
  }

  /** Redemptions of a reward with that status. */
  withStatus(rewardId: string, status: RedemptionStatus): SimRedemption[] {
    return [...this.redemptions.values()].filter((r) => r.rewardId === rewardId && r.status === status);
  }

  /** The EventSub `channel.channel_points_custom_reward_redemption.add` event of a redemption. */
  eventOf(r: SimRedemption): Record<string, unknown> {
    const reward = this.rewards.get(r.rewardId)!;
    return {
      id: r.id,
      broadcaster_user_id: r.broadcasterId,
      broadcaster_user_login: reward.broadcasterLogin,
      broadcaster_user_name: reward.broadcasterLogin,
      user_id: r.userId,
      user_login: r.login,
      user_name: r.displayName,
      user_input: r.userInput,
      status: r.status.toLowerCase(),
      reward: { id: reward.id, title: reward.title, cost: reward.cost, prompt: reward.prompt },
      redeemed_at: r.redeemedAt,
    };
  }

  private make(
    broadcasterId: string,
    clientId: string,
    r: Pick<SimReward, 'title' | 'cost' | 'prompt' | 'isEnabled' | 'isPaused' | 'skipQueue'>,
  ): SimReward {
    const reward: SimReward = {
      id: randomUUID(),
      broadcasterId,
      broadcasterLogin: this.logins.get(broadcasterId) ?? `user${broadcasterId}`,
      clientId,
      ...r,
    };
    this.rewards.set(reward.id, reward);
    return reward;
  }

  private shape(r: SimReward): Record<string, unknown> {
    return {
      broadcaster_id: r.broadcasterId,
      broadcaster_login: r.broadcasterLogin,
      broadcaster_name: r.broadcasterLogin,
      id: r.id,
      title: r.title,
      prompt: r.prompt,
      cost: r.cost,
      image: null,
      default_image: { url_1x: '', url_2x: '', url_4x: '' },
      background_color: '#9147FF',
      is_enabled: r.isEnabled,
      is_user_input_required: false,
      max_per_stream_setting: { is_enabled: false, max_per_stream: 0 },
      max_per_user_per_stream_setting: { is_enabled: false, max_per_user_per_stream: 0 },
      global_cooldown_setting: { is_enabled: false, global_cooldown_seconds: 0 },
      is_paused: r.isPaused,
      is_in_stock: true,
      should_redemptions_skip_request_queue: r.skipQueue,
      redemptions_redeemed_current_stream: null,
      cooldown_expires_at: null,
    };
  }

  private redemptionShape(r: SimRedemption): Record<string, unknown> {
    const reward = this.rewards.get(r.rewardId);
    return {
      broadcaster_id: r.broadcasterId,
      broadcaster_login: reward?.broadcasterLogin,
      broadcaster_name: reward?.broadcasterLogin,
      id: r.id,
      user_id: r.userId,
      user_login: r.login,
      user_name: r.displayName,
      user_input: r.userInput,
      status: r.status,
      redeemed_at: r.redeemedAt,
      reward: { id: r.rewardId, title: reward?.title ?? '', prompt: reward?.prompt ?? '', cost: reward?.cost ?? 0 },
    };
  }

  private route(call: HelixRouteCall): boolean {
    if (call.path !== '/channel_points/custom_rewards' && call.path !== '/channel_points/custom_rewards/redemptions')
      return false;
    const q = call.query;
    const broadcasterId = q.get('broadcaster_id') ?? '';
    const { caller } = call;
    if (!broadcasterId) return (call.fail(400, 'Bad Request', 'Missing required parameter "broadcaster_id"'), true);
    if (caller.userId !== broadcasterId)
      return (
        call.fail(
          401,
          'Unauthorized',
          "The ID in broadcaster_id must match the user ID found in the request's OAuth token.",
        ),
        true
      );
    const reads = call.method === 'GET';
    if (!caller.scopes.includes(MANAGE) && !(reads && caller.scopes.includes(READ)))
      return (call.fail(401, 'Unauthorized', `Missing scope: ${reads ? `${READ} or ${MANAGE}` : MANAGE}`), true);
    if (call.path === '/channel_points/custom_rewards') void this.rewardsRoute(call, broadcasterId);
    else void this.redemptionsRoute(call, broadcasterId);
    return true;
  }

  private async rewardsRoute(call: HelixRouteCall, broadcasterId: string): Promise<void> {
    const { caller, query: q } = call;
    const mine = [...this.rewards.values()].filter((r) => r.broadcasterId === broadcasterId);
    if (call.method === 'GET') {
      const ids = q.getAll('id');
      const manageable = q.get('only_manageable_rewards') === 'true';
      const list = mine.filter(
        (r) => (!ids.length || ids.includes(r.id)) && (!manageable || r.clientId === caller.clientId),
      );
      if (ids.length && !list.length) return call.fail(404, 'Not Found', 'The custom reward was not found');
      return call.reply(200, { data: list.map((r) => this.shape(r)) });
    }
    if (call.method === 'POST') {
      if (this.nonAffiliates.has(broadcasterId))
        return call.fail(403, 'Forbidden', 'The broadcaster is not a partner or affiliate.');
      const b = ((await call.body()) ?? {}) as Record<string, unknown>;
      const title = typeof b.title === 'string' ? b.title.trim() : '';
      if (!title || title.length > 45)
        return call.fail(400, 'Bad Request', 'The title field is required and may contain a maximum of 45 characters');
      if (typeof b.cost !== 'number' || !Number.isInteger(b.cost) || b.cost < 1)
        return call.fail(400, 'Bad Request', 'The cost field must be at least 1');
      const prompt = typeof b.prompt === 'string' ? b.prompt : '';
      if (prompt.length > 200)
        return call.fail(400, 'Bad Request', 'The prompt field may contain a maximum of 200 characters');
      if (mine.some((r) => r.title.toLowerCase() === title.toLowerCase()))
        return call.fail(400, 'Bad Request', 'CREATE_CUSTOM_REWARD_DUPLICATE_REWARD');
      if (mine.length >= MAX_REWARDS)
        return call.fail(400, 'Bad Request', 'The broadcaster has reached the maximum number of custom rewards (50)');
      const reward = this.make(broadcasterId, caller.clientId, {
        title,
        cost: b.cost,
        prompt,
        isEnabled: b.is_enabled !== false,
        isPaused: b.is_paused === true,
        skipQueue: b.should_redemptions_skip_request_queue === true,
      });
      return call.reply(200, { data: [this.shape(reward)] });
    }
    const reward = this.rewards.get(q.get('id') ?? '');
    if (!reward || reward.broadcasterId !== broadcasterId)
      return call.fail(404, 'Not Found', 'The custom reward was not found');
    if (reward.clientId !== caller.clientId)
      return call.fail(
        403,
        'Forbidden',
        'The ID in the Client-Id header must match the client ID used to create the custom reward.',
      );
    if (call.method === 'DELETE') {
      this.rewards.delete(reward.id);
      return call.reply(204);
    }
    if (call.method !== 'PATCH') return call.fail(405, 'Method Not Allowed', '');
    const b = ((await call.body()) ?? {}) as Record<string, unknown>;
    if (typeof b.title === 'string') {
      const title = b.title.trim();
      if (!title || title.length > 45)
        return call.fail(400, 'Bad Request', 'The title field may contain a maximum of 45 characters');
      if (mine.some((r) => r !== reward && r.title.toLowerCase() === title.toLowerCase()))
        return call.fail(400, 'Bad Request', 'CREATE_CUSTOM_REWARD_DUPLICATE_REWARD');
      reward.title = title;
    }
    if (typeof b.cost === 'number') {
      if (!Number.isInteger(b.cost) || b.cost < 1)
        return call.fail(400, 'Bad Request', 'The cost field must be at least 1');
      reward.cost = b.cost;
    }
    if (typeof b.prompt === 'string') reward.prompt = b.prompt;
    if (typeof b.is_enabled === 'boolean') reward.isEnabled = b.is_enabled;
    if (typeof b.is_paused === 'boolean') reward.isPaused = b.is_paused;
    return call.reply(200, { data: [this.shape(reward)] });
  }

  private async redemptionsRoute(call: HelixRouteCall, broadcasterId: string): Promise<void> {
    const { caller, query: q } = call;
    const reward = this.rewards.get(q.get('reward_id') ?? '');
    if (!reward || reward.broadcasterId !== broadcasterId)
      return call.fail(404, 'Not Found', 'The custom reward was not found');
    if (reward.clientId !== caller.clientId)
      return call.fail(
        403,
        'Forbidden',
        'The ID in the Client-Id header must match the client ID used to create the custom reward.',
      );
    const ids = q.getAll('id');
    if (call.method === 'GET') {
      const status = q.get('status');
      if (!status && !ids.length)
        return call.fail(
          400,
          'Bad Request',
          "The status query parameter is required if you didn't specify the id query parameter",
        );
      let list = [...this.redemptions.values()].filter(
        (r) => r.rewardId === reward.id && (!status || r.status === status) && (!ids.length || ids.includes(r.id)),
      );
      if (q.get('sort') === 'NEWEST') list = list.reverse();
      const first = Math.min(50, Math.max(1, Number(q.get('first') ?? '20') || 20));
      const from = Number(q.get('after') ?? '0') || 0;
      const page = list.slice(from, from + first);
      const next = from + first < list.length ? String(from + first) : undefined;
      return call.reply(200, {
        data: page.map((r) => this.redemptionShape(r)),
        pagination: next ? { cursor: next } : {},
      });
    }
    if (call.method !== 'PATCH') return call.fail(405, 'Method Not Allowed', '');
    if (this.settleDown) return call.fail(503, 'Service Unavailable', '');
    if (!ids.length || ids.length > 50)
      return call.fail(400, 'Bad Request', 'The id query parameter is required (at most 50)');
    const b = ((await call.body()) ?? {}) as Record<string, unknown>;
    if (b.status !== 'FULFILLED' && b.status !== 'CANCELED')
      return call.fail(400, 'Bad Request', 'The status field must be FULFILLED or CANCELED');
    const changed: SimRedemption[] = [];
    for (const id of ids) {
      const r = this.redemptions.get(id);
      if (!r || r.rewardId !== reward.id || r.status !== 'UNFULFILLED') continue;
      r.status = b.status;
      if (b.status === 'CANCELED') {
        this.refunds++;
        const balance = this.points.get(r.userId);
        if (balance !== undefined) this.points.set(r.userId, balance + reward.cost);
      } else this.fulfilled++;
      changed.push(r);
    }
    if (!changed.length) return call.fail(404, 'Not Found', 'No redemptions with an UNFULFILLED status were found');
    return call.reply(200, { data: changed.map((r) => this.redemptionShape(r)) });
  }
}
