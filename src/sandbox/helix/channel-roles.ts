/**
 * The channel's subscribers and moderators as Twitch's API tells the broadcaster, on the Helix
 * sandbox: `GET /helix/subscriptions?broadcaster_id&user_id` (Get Broadcaster Subscriptions, scope
 * channel:read:subscriptions) and `GET /helix/moderation/moderators?broadcaster_id&user_id` (Get
 * Moderators, scope moderation:read or channel:manage:moderators), registered as routes
 * (`register`, local.ts).
 *
 * Twitch's rules as the sandbox plays them: the token must be the broadcaster's own
 * (`broadcaster_id` is the token's user, else 401 "The ID in broadcaster_id must match the user ID
 * found in the request's OAuth token"), a missing scope is 401 "Missing scope: <scope>", a missing
 * `broadcaster_id` 400; the answer lists the asked `user_id`s that subscribe (with a tier) or
 * moderate, `data: []` for none. Months subscribed are not in these answers (Twitch gives them only
 * in chat). Who subscribes or moderates is set by the test or the demo (`setSubscriber`, `setModerator`).
 */
import type { HelixRoute, HelixRouteCall } from './index.js';

const SUBSCRIPTIONS_SCOPE = 'channel:read:subscriptions';
const MODERATORS_SCOPES = ['moderation:read', 'channel:manage:moderators'];

export class SandboxChannelRoles {
  private readonly subscribers = new Map<string, { login: string; tier: string }>();
  private readonly moderators = new Map<string, string>();
  /** Requests answered per path (tests: how many lookups the bot made). */
  readonly calls = { subscriptions: 0, moderators: 0 };

  /** `user` subscribes (tier 1000, 2000 or 3000), or no longer does. A sandbox chat viewer (SimViewer) fits. */
  setSubscriber(user: { userId: string; login: string }, on = true, tier = '1000'): void {
    if (on) this.subscribers.set(user.userId, { login: user.login, tier });
    else this.subscribers.delete(user.userId);
  }

  setModerator(user: { userId: string; login: string }, on = true): void {
    if (on) this.moderators.set(user.userId, user.login);
    else this.moderators.delete(user.userId);
  }

  readonly route: HelixRoute = (call) => {
    if (call.method !== 'GET') return false;
    if (call.path === '/subscriptions') return this.answer(call, [SUBSCRIPTIONS_SCOPE], 'subscriptions');
    if (call.path === '/moderation/moderators') return this.answer(call, MODERATORS_SCOPES, 'moderators');
    return false;
  };

  private answer(call: HelixRouteCall, scopes: readonly string[], what: 'subscriptions' | 'moderators'): boolean {
    const broadcasterId = call.query.get('broadcaster_id');
    if (!broadcasterId) return (call.fail(400, 'Bad Request', 'Missing required parameter "broadcaster_id"'), true);
    if (!scopes.some((s) => call.caller.scopes.includes(s)))
      return (call.fail(401, 'Unauthorized', `Missing scope: ${scopes[0]}`), true);
    if (call.caller.userId !== broadcasterId)
      return (
        call.fail(
          401,
          'Unauthorized',
          "The ID in broadcaster_id must match the user ID found in the request's OAuth token.",
        ),
        true
      );
    this.calls[what]++;
    const ids = call.query.getAll('user_id');
    if (what === 'subscriptions') {
      const data = ids.flatMap((id) => {
        const s = this.subscribers.get(id);
        return s
          ? [
              {
                broadcaster_id: broadcasterId,
                user_id: id,
                user_login: s.login,
                user_name: s.login,
                tier: s.tier,
                is_gift: false,
                plan_name: 'Channel Subscription',
              },
            ]
          : [];
      });
      call.reply(200, { data, pagination: {}, total: this.subscribers.size, points: this.subscribers.size });
    } else {
      const data = ids.flatMap((id) => {
        const login = this.moderators.get(id);
        return login ? [{ user_id: id, user_login: login, user_name: login }] : [];
      });
      call.reply(200, { data, pagination: {} });
    }
    return true;
  }
}
