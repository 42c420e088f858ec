/**
 * Account rules checked with Twitch for the picks: followers only, a minimum follow age and a
 * minimum account age. Only the picks the draw needs are looked up (winner-picks.ts walks the
 * pick sequence and asks this gate about the next few), never the whole crowd.
 *
 * Contract: `AccountGate.check` looks a batch of candidate picks up (one AccountInfoPort call,
 * bounded by `until`) and returns a verdict per candidate: passed (checked with Twitch, with the
 * answer's time), failed with its reason, or, when the lookup failed after its retries, whatever
 * `uncheckable` says (`allow`: passed as unchecked; `exclude`: failed as `unchecked`). A candidate
 * still unanswered when `until` came gets no verdict (the caller stops there). `report` announces
 * one chat line per close (picks set aside and why, how many picks could not be checked, prizes
 * not filled) and keeps it for `!giveaway`; `accountRecord` is what the history keeps under
 * `rules.account`. `describeAccountRules` says the rules in force in plain words (the dashboard
 * shows it). Does not: talk to Twitch itself (the port does), walk the pick sequence, or throw on
 * a lookup failure.
 */
import type { AccountInfo, AccountLookup, SetAsidePick, SetAsideReason } from './model.js';
import type { AccountInfoPort, ChatPort } from './ports.js';

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
function accountExclusion(info: AccountInfo, r: AccountRules, now: number): SetAsideReason | undefined {
  const needsFollow = r.followersOnly || r.minFollowDays > 0;
  if (needsFollow && info.followedAt === undefined) return 'not-follower';
  if (r.minFollowDays > 0 && now - info.followedAt! < r.minFollowDays * DAY_MS) return 'follow-age';
  // (Creation dates are always asked for with an account-age rule; none is never taken as old enough.)
  if (r.minAccountDays > 0 && (info.createdAt === undefined || now - info.createdAt < r.minAccountDays * DAY_MS))
    return 'account-age';
  return undefined;
}

/** Why a pick was set aside, in the words chat, the dashboard and the history use. */
export function setAsideReasonText(
  reason: SetAsideReason,
  r: Pick<AccountRules, 'minFollowDays' | 'minAccountDays'>,
): string {
  return REASON_TEXT[reason](r);
}

const REASON_TEXT: Record<SetAsideReason, (r: Pick<AccountRules, 'minFollowDays' | 'minAccountDays'>) => string> = {
  'not-follower': () => 'not following the channel',
  'follow-age': (r) => `following for less than ${r.minFollowDays} day${r.minFollowDays === 1 ? '' : 's'}`,
  'account-age': (r) => `account younger than ${r.minAccountDays} day${r.minAccountDays === 1 ? '' : 's'}`,
  unchecked: () => 'could not be checked with Twitch',
};

/** What the rules say about one candidate pick. */
export type PickVerdict =
  { ok: true; result: 'checked' | 'unchecked'; at: number } | { ok: false; reason: SetAsideReason; at: number };

/** One close's (or one replacement's) outcome, for the chat line and the record. */
export interface AccountOutcome {
  setAside: readonly SetAsidePick[];
  /** Picks whose lookup failed (let in or set aside by `uncheckable`). */
  unchecked: number;
  /** Picks checked with Twitch (passed or set aside by a rule). */
  checked: number;
  problem?: string;
  /** Prizes left without a winner (`count` of `of`, the draw's `prize`), and why. */
  unfilled?: { count: number; of: number; prize: string; why: 'time' | 'exhausted' };
}

export interface AccountGateOptions {
  port: AccountInfoPort;
  rules: AccountRules;
  chat: Pick<ChatPort, 'say'>;
  now: () => number;
}

export class AccountGate {
  private last: { drawId: string; line: string } | undefined;

  constructor(private readonly o: AccountGateOptions) {}

  get rules(): AccountRules {
    return this.o.rules;
  }

  /** True when a rule is set (otherwise the draw never asks). */
  get active(): boolean {
    return accountRulesActive(this.o.rules);
  }

  /**
   * The last close's summary for `!giveaway` (undefined when no pick was set aside or unchecked),
   * only when it concerns what the reply is about: with draws running (`running`: their ids), only
   * the summary of one of them (a claim window's); with none, the last close's.
   */
  summary(running: readonly string[] = []): string | undefined {
    if (!this.last) return undefined;
    return running.length === 0 || running.includes(this.last.drawId) ? this.last.line : undefined;
  }

  /** Verdicts for `userIds` (see the module contract); missing: not answered before `until`. */
  async check(
    userIds: readonly string[],
    until: number,
  ): Promise<{ verdicts: Map<string, PickVerdict>; problem?: string }> {
    const r = this.o.rules;
    const follows = r.followersOnly || r.minFollowDays > 0;
    // The port promises not to throw; if one does anyway, nobody was checked (never a failed draw).
    const looked = await this.o.port
      .lookup(userIds, { follows, created: r.minAccountDays > 0, until })
      .catch((err: unknown): AccountLookup => ({
        info: new Map(),
        unchecked: [...userIds],
        problem: (err as Error).message,
      }));
    const now = this.o.now();
    const unchecked = new Set(looked.unchecked);
    const verdicts = new Map<string, PickVerdict>();
    for (const id of userIds) {
      const info = looked.info.get(id);
      if (!info || unchecked.has(id)) {
        if (now >= until) continue; // the close's time ran out: no verdict, the pick stays undecided
        verdicts.set(
          id,
          r.uncheckable === 'exclude'
            ? { ok: false, reason: 'unchecked', at: now }
            : { ok: true, result: 'unchecked', at: now },
        );
        continue;
      }
      const at = info.answeredAt ?? now;
      const why = accountExclusion(info, r, now);
      verdicts.set(id, why ? { ok: false, reason: why, at } : { ok: true, result: 'checked', at });
    }
    return { verdicts, ...(looked.problem ? { problem: looked.problem } : {}) };
  }

  /** The `rules.account` part of the record: the rules in force and the close's counts. */
  accountRecord(o: AccountOutcome): Record<string, unknown> {
    const r = this.o.rules;
    return {
      followersOnly: r.followersOnly,
      minFollowDays: r.minFollowDays,
      minAccountDays: r.minAccountDays,
      uncheckable: r.uncheckable,
      checkedAt: new Date(this.o.now()).toISOString(),
      checked: o.checked,
      unchecked: o.unchecked,
      setAside: o.setAside.length,
      ...(o.problem && o.unchecked > 0 ? { problem: o.problem } : {}),
      ...(o.unfilled && o.unfilled.count > 0 ? { unfilled: o.unfilled.count, unfilledWhy: o.unfilled.why } : {}),
    };
  }

  /**
   * Keeps the outcome for `!giveaway` and says it in chat (one line, when there is anything to
   * say, unless `say` is false: the draw's own line covers it).
   */
  report(drawId: string, o: AccountOutcome, opts: { say?: boolean } = {}): void {
    const line = this.describe(drawId, o);
    this.last = line ? { drawId, line } : undefined; // a close with nothing to say clears the previous one
    if (line && opts.say !== false) this.o.chat.say(line);
  }

  private describe(drawId: string, o: AccountOutcome): string | undefined {
    const r = this.o.rules;
    const counts = new Map<SetAsideReason, number>();
    for (const p of o.setAside) if (p.reason !== 'unchecked') counts.set(p.reason, (counts.get(p.reason) ?? 0) + 1);
    const parts: string[] = [];
    if (counts.size > 0) {
      const why = [...counts].map(([reason, n]) => `${n} ${REASON_TEXT[reason](r)}`).join(', ');
      const n = [...counts.values()].reduce((a, b) => a + b, 0);
      parts.push(`${n} pick${n === 1 ? '' : 's'} set aside (${why})`);
    }
    if (o.unchecked > 0) {
      const fate = r.uncheckable === 'exclude' ? 'set aside' : 'let in';
      const cause = o.problem ? ` (${o.problem})` : '';
      parts.push(
        `${o.unchecked} pick${o.unchecked === 1 ? '' : 's'} could not be checked with Twitch${cause} and ${o.unchecked === 1 ? 'was' : 'were'} ${fate}`,
      );
    }
    if (o.unfilled && o.unfilled.count > 0) {
      const why =
        o.unfilled.why === 'time' ? 'the checks ran out of time before the deadline' : 'nobody eligible was left';
      const u = o.unfilled;
      parts.push(`${u.count} of ${u.of} prize${u.of === 1 ? '' : 's'} (${u.prize}) not filled: ${why}`);
    }
    if (parts.length === 0) return undefined;
    return `Draw ${drawId} entry check: ${parts.join('; ')}.`;
  }
}
