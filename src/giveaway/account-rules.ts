/**
 * Account rules checked with Twitch at close: followers only, a minimum follow age and a minimum
 * account age. Only the entrants that passed the chat rules are looked up (one AccountInfoPort
 * call per close); entrants that could not be checked are allowed or excluded by `uncheckable`.
 *
 * Contract: `AccountGate.apply` takes the chat-rule result and returns it narrowed, with the
 * exclusion counts merged into `excluded` and `rules.account` recording the rules in force, how
 * many were checked / unchecked and every excluded entrant (user id, login, reason), so the
 * history shows who was left out and why beside the frozen list (`npm run verify` recomputes the
 * picks from that frozen list). It announces one chat line when anyone was excluded or could not
 * be checked, and keeps one summary line per draw for `!giveaway`. No rule set: a no-op, nothing
 * is looked up. `describeAccountRules` says the rules in force in plain words (the dashboard shows
 * it). Does not: talk to Twitch itself (the port does), pick winners, or throw on a lookup failure.
 */
import type { EligibilityResult, ExclusionReason } from './eligibility.js';
import type { AccountInfo, AccountInfoPort, AccountLookup, ChatPort, Entrant } from './ports.js';

export interface AccountRules {
  followersOnly: boolean;
  /** Days an entrant must have followed the channel (0: off). Implies following. */
  minFollowDays: number;
  /** Days since the account was created (0: off). */
  minAccountDays: number;
  /** Entrants the API could not check: let them in (`allow`) or leave them out (`exclude`). */
  uncheckable: 'allow' | 'exclude';
}

const DAY_MS = 86_400_000;

export function accountRulesActive(r: AccountRules): boolean {
  return r.followersOnly || r.minFollowDays > 0 || r.minAccountDays > 0;
}

const days = (n: number) => `${n} day${n === 1 ? '' : 's'}`;

/** The rules in force in plain words, e.g. "following for at least 7 days; account at least 30 days old"; undefined when none. */
export function describeAccountRules(r: AccountRules): string | undefined {
  const parts: string[] = [];
  if (r.minFollowDays > 0) parts.push(`following for at least ${days(r.minFollowDays)}`);
  else if (r.followersOnly) parts.push('following the channel');
  if (r.minAccountDays > 0) parts.push(`account at least ${days(r.minAccountDays)} old`);
  return parts.length ? parts.join('; ') : undefined;
}

/** Why `info` fails the rules at `now`, or undefined. */
export function accountExclusion(info: AccountInfo, r: AccountRules, now: number): ExclusionReason | undefined {
  const needsFollow = r.followersOnly || r.minFollowDays > 0;
  if (needsFollow && info.followedAt === undefined) return 'not-follower';
  if (r.minFollowDays > 0 && now - info.followedAt! < r.minFollowDays * DAY_MS) return 'follow-age';
  if (r.minAccountDays > 0 && now - info.createdAt < r.minAccountDays * DAY_MS) return 'account-age';
  return undefined;
}

const REASON_TEXT: Partial<Record<ExclusionReason, (r: AccountRules) => string>> = {
  'not-follower': () => 'not following the channel',
  'follow-age': (r) => `following for less than ${r.minFollowDays} day${r.minFollowDays === 1 ? '' : 's'}`,
  'account-age': (r) => `account younger than ${r.minAccountDays} day${r.minAccountDays === 1 ? '' : 's'}`,
  unchecked: () => 'could not be checked with Twitch',
};

export interface AccountGateOptions {
  port: AccountInfoPort;
  rules: AccountRules;
  chat: Pick<ChatPort, 'say'>;
  now: () => number;
}

export class AccountGate {
  private lastLine: string | undefined;

  constructor(private readonly o: AccountGateOptions) {}

  get rules(): AccountRules {
    return this.o.rules;
  }

  /** The last close's summary for `!giveaway` (undefined when nobody was excluded by these rules). */
  summary(): string | undefined {
    return this.lastLine;
  }

  async apply(base: EligibilityResult, drawId: string): Promise<EligibilityResult> {
    const r = this.o.rules;
    if (!accountRulesActive(r) || base.eligible.length === 0) return base;
    const now = this.o.now();
    const follows = r.followersOnly || r.minFollowDays > 0;
    const ids = base.eligible.map((e) => e.userId);
    // The port promises not to throw; if one does anyway, nobody was checked (never a failed draw).
    const looked = await this.o.port.lookup(ids, { follows }).catch(
      (err: unknown): AccountLookup => ({ info: new Map(), unchecked: ids, problem: (err as Error).message }),
    );
    const unchecked = new Set(looked.unchecked);
    const eligible: Entrant[] = [];
    const excludedUsers: Array<{ userId: string; login: string; reason: ExclusionReason }> = [];
    const counts: Partial<Record<ExclusionReason, number>> = {};
    let allowedUnchecked = 0;
    for (const e of base.eligible) {
      const info = looked.info.get(e.userId);
      let why: ExclusionReason | undefined;
      if (!info || unchecked.has(e.userId)) {
        if (r.uncheckable === 'exclude') why = 'unchecked';
        else allowedUnchecked++;
      } else why = accountExclusion(info, r, now);
      if (why) {
        counts[why] = (counts[why] ?? 0) + 1;
        excludedUsers.push({ userId: e.userId, login: e.login, reason: why });
      } else eligible.push(e);
    }
    const excluded = { ...base.excluded };
    for (const [k, n] of Object.entries(counts) as Array<[ExclusionReason, number]>) excluded[k] = (excluded[k] ?? 0) + n;
    const uncheckedCount = base.eligible.filter((e) => unchecked.has(e.userId) || !looked.info.has(e.userId)).length;
    const account = {
      followersOnly: r.followersOnly,
      minFollowDays: r.minFollowDays,
      minAccountDays: r.minAccountDays,
      uncheckable: r.uncheckable,
      checkedAt: new Date(now).toISOString(),
      checked: base.eligible.length - uncheckedCount,
      unchecked: uncheckedCount,
      ...(looked.problem && uncheckedCount > 0 ? { problem: looked.problem } : {}),
      excludedUsers,
    };
    this.lastLine = this.describe(drawId, counts, uncheckedCount, allowedUnchecked, looked.problem);
    if (this.lastLine) this.o.chat.say(this.lastLine);
    return { eligible, excluded, rules: { ...base.rules, excluded, account } };
  }

  private describe(
    drawId: string,
    counts: Partial<Record<ExclusionReason, number>>,
    unchecked: number,
    allowed: number,
    problem: string | undefined,
  ): string | undefined {
    const parts = (Object.entries(counts) as Array<[ExclusionReason, number]>).map(
      ([why, n]) => `${n} ${REASON_TEXT[why]?.(this.o.rules) ?? why}`,
    );
    if (allowed > 0) parts.push(`${allowed} could not be checked with Twitch and were let in`);
    if (parts.length === 0) return undefined;
    const cause = unchecked > 0 && problem ? ` (${problem})` : '';
    return `Draw ${drawId} entry check: ${parts.join(', ')}${cause}.`;
  }
}
