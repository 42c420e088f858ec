/**
 * What Twitch's API tells of a viewer's roles in the channel when they enter without chatting (a
 * channel-point redemption, bits): whether they subscribe (`GET /subscriptions?broadcaster_id&user_id`,
 * scope channel:read:subscriptions) and whether they moderate (`GET /moderation/moderators?
 * broadcaster_id&user_id`, scope moderation:read), with the broadcaster's token, asked only for the
 * role rules in force (`subscribersOnly`, `excludeModerators`).
 *
 * Contract: `of(userId)` resolves with what is known (`true`/`false`) and leaves the rest out: a
 * role no rule needs, one the token has no scope for, or one whose call failed within the Helix
 * client's deadline (logged) stays unknown, and the engine then refuses the entry for the rule that
 * needs it (giveaway/tickets.ts), never guessing. Never throws. Months subscribed are not in
 * Twitch's API for the broadcaster, so `minSubMonths` is decided from chat only. One Helix point
 * per role asked, from the broadcaster's own bucket.
 */
import { z } from 'zod';
import type { KnownRoles, RoleRule } from '../../giveaway/tickets.js';
import type { Logger } from '../../logging/index.js';
import type { HelixClient } from '../helix.js';
import { BROADCASTER_FEATURE_SCOPES } from '../scopes.js';

const Listed = z.object({ data: z.array(z.looseObject({ user_id: z.string() })) });

export interface ViewerRolesOptions {
  helix: HelixClient;
  broadcasterId: string;
  /** The broadcaster token's scopes (what it may ask). */
  scopes: readonly string[];
  /** The role rules in force (roleRulesOf). */
  rules: readonly RoleRule[];
  logger: Logger;
}

export class ViewerRoles {
  private readonly askSubscriber: boolean;
  private readonly askModerator: boolean;
  private readonly log: Logger;

  constructor(private readonly o: ViewerRolesOptions) {
    this.askSubscriber =
      o.rules.includes('subscribersOnly') && o.scopes.includes(BROADCASTER_FEATURE_SCOPES.subscriberLookup);
    this.askModerator =
      o.rules.includes('excludeModerators') && o.scopes.includes(BROADCASTER_FEATURE_SCOPES.moderatorLookup);
    this.log = o.logger.child({ module: 'twitch.viewer-roles' });
  }

  /** The role rules in force that this token cannot check (the setup page and the start line say so). */
  static unchecked(rules: readonly RoleRule[], scopes: readonly string[]): { rule: RoleRule; scope?: string }[] {
    const out: { rule: RoleRule; scope?: string }[] = [];
    if (rules.includes('subscribersOnly') && !scopes.includes(BROADCASTER_FEATURE_SCOPES.subscriberLookup))
      out.push({ rule: 'subscribersOnly', scope: BROADCASTER_FEATURE_SCOPES.subscriberLookup });
    if (rules.includes('excludeModerators') && !scopes.includes(BROADCASTER_FEATURE_SCOPES.moderatorLookup))
      out.push({ rule: 'excludeModerators', scope: BROADCASTER_FEATURE_SCOPES.moderatorLookup });
    if (rules.includes('minSubMonths')) out.push({ rule: 'minSubMonths' });
    return out;
  }

  /** True when some rule in force needs a lookup this token can make. */
  get asks(): boolean {
    return this.askSubscriber || this.askModerator;
  }

  async of(userId: string): Promise<KnownRoles> {
    const [subscriber, moderator] = await Promise.all([
      this.askSubscriber ? this.listed('/subscriptions', userId) : undefined,
      this.askModerator ? this.listed('/moderation/moderators', userId) : undefined,
    ]);
    return { ...(subscriber !== undefined ? { subscriber } : {}), ...(moderator !== undefined ? { moderator } : {}) };
  }

  /** Whether `userId` is in the broadcaster's list at `path`; undefined when Twitch could not tell. */
  private async listed(path: string, userId: string): Promise<boolean | undefined> {
    try {
      const q = new URLSearchParams({ broadcaster_id: this.o.broadcasterId, user_id: userId });
      const body = await this.o.helix.request('GET', path, { query: q, schema: Listed });
      return body.data.some((d) => d.user_id === userId);
    } catch (err) {
      this.log.warn(
        { userId, err: (err as Error).message },
        `could not look the viewer up (GET ${path}); the rule that needs it refuses the entry`,
      );
      return undefined;
    }
  }
}
