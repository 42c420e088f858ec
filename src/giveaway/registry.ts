/**
 * Which draws the engine holds in memory: the active ones (open, picking, claim, finalizing),
 * the ids being opened right now, and a short list of recently closed ones kept for rerolls and
 * retries; plus the look-ups that fall back to storage.
 *
 * Contract: a session is either active or recent, never both; `retire` and `unretire` move it
 * synchronously. The recent list is newest first and holds at most RECENT_LIMIT sessions. A draw
 * loaded from storage is adopted once and reused afterwards. Does not: change a draw's phase or
 * record, persist, or talk to chat or the shop.
 */
import type { DrawRecord } from './model.js';
import type { DrawRepository } from './ports.js';
import { storedPhase, type DrawPhase } from './draw-machine.js';
import { DrawSession, type PhaseWatch } from './session.js';

/** Finished sessions kept in memory for rerolls and retries. */
export const RECENT_LIMIT = 20;

/** A draw whose links `!giveaway retry` would deliver: failed, not a gift draw, winners still without a link. */
export function awaitingLinks(r: DrawRecord): boolean {
  return r.status === 'failed' && r.kind !== 'gift-draw' && r.winners.length > 0 && r.winners.some((w) => !w.redeemUrl);
}

/** True when `login` (lower case) won draw `r`: still its winner, or replaced in it by a reroll. */
export function wonBy(r: Readonly<DrawRecord>, login: string): boolean {
  return (
    r.winners.some((w) => w.login.toLowerCase() === login) ||
    (r.rerolls ?? []).some((x) => x.replacedLogin.toLowerCase() === login)
  );
}

/**
 * The active sessions by record id, with `list()`: the same sessions as an array, rebuilt only
 * after a change. Every chat line walks the active draws (`!enter`); an indexed walk of an array
 * allocates nothing, a Map iterator does. `inClaim()` counts the active sessions in phase
 * 'claim' (each active session reports its phase changes here), so the winner chat catch asks
 * one number per chat line instead of walking the draws.
 */
export class ActiveSessions extends Map<string, DrawSession> implements PhaseWatch {
  #list: readonly DrawSession[] | undefined;
  #inClaim = 0;

  override set(id: string, s: DrawSession): this {
    this.#list = undefined;
    const old = super.get(id);
    if (old) this.#forget(old);
    s.phaseWatch = this;
    if (s.phase === 'claim-window') this.#inClaim++;
    return super.set(id, s);
  }

  override delete(id: string): boolean {
    this.#list = undefined;
    const s = super.get(id);
    if (s) this.#forget(s);
    return super.delete(id);
  }

  override clear(): void {
    this.#list = undefined;
    for (const s of super.values()) this.#forget(s);
    super.clear();
  }

  #forget(s: DrawSession): void {
    if (s.phaseWatch === this) s.phaseWatch = undefined;
    if (s.phase === 'claim-window') this.#inClaim--;
  }

  phaseChanged(from: DrawPhase, to: DrawPhase): void {
    if (from === 'claim-window') this.#inClaim--;
    if (to === 'claim-window') this.#inClaim++;
  }

  /** How many active sessions are in phase 'claim-window'. */
  inClaim(): number {
    return this.#inClaim;
  }

  /** The sessions in the order they became active (read-only; a new array after each change). */
  list(): readonly DrawSession[] {
    return (this.#list ??= [...this.values()]);
  }
}

export class DrawRegistry {
  /** Draws that are open or drawing, by record id. */
  readonly active = new ActiveSessions();
  /** Ids being opened right now (synchronous duplicate guard). */
  readonly opening = new Set<string>();
  /** Closed draws kept for rerolls and retries, newest first. */
  private readonly recent: DrawSession[] = [];

  constructor(private readonly repo: DrawRepository) {}

  /** Active sessions, in the order they became active. */
  activeSessions(): DrawSession[] {
    return [...this.active.values()];
  }

  /** Recently closed sessions, newest first (read-only view). */
  recentSessions(): readonly DrawSession[] {
    return this.recent;
  }

  /** True when `id` is active or being opened. */
  isKnownLive(id: string): boolean {
    return this.active.has(id) || this.opening.has(id);
  }

  /** Moves a session out of the active set into the recent list. */
  retire(s: DrawSession): void {
    this.active.delete(s.id);
    const i = this.recent.indexOf(s);
    if (i >= 0) this.recent.splice(i, 1);
    this.recent.unshift(s);
    this.recent.length = Math.min(this.recent.length, RECENT_LIMIT);
  }

  /** Moves a recent session back into the active set. */
  unretire(s: DrawSession): void {
    const i = this.recent.indexOf(s);
    if (i >= 0) this.recent.splice(i, 1);
    this.active.set(s.id, s);
  }

  /** A recent session by id. */
  findRecent(id: string): DrawSession | undefined {
    return this.recent.find((x) => x.id === id);
  }

  /**
   * The most recent draw (active first, then recent, then storage) that `login` won, whether they
   * are still its winner or were replaced in it (so a second reroll of one winner finds the draw
   * that says so, never an older win).
   */
  async findByWinner(login: string): Promise<DrawSession | undefined> {
    const has = (r: Readonly<DrawRecord>) => wonBy(r, login);
    const active = [...this.active.values()].reverse().find((s) => has(s.record));
    if (active) return active;
    const recent = this.recent.find((s) => has(s.record));
    if (recent) return recent;
    const records = await this.repo.listDraws({ limit: RECENT_LIMIT });
    const rec = records.find(has);
    return rec ? this.sessionFromRepo(rec.id) : undefined;
  }

  /** The latest failed purchase or link giveaway whose winners still lack links. */
  async findUndelivered(): Promise<DrawSession | undefined> {
    const waiting = awaitingLinks;
    const recent = this.recent.find((s) => waiting(s.record));
    if (recent) return recent;
    const records = await this.repo.listDraws({ limit: RECENT_LIMIT });
    const rec = records.find(waiting);
    return rec ? this.sessionFromRepo(rec.id) : undefined;
  }

  /** A stored draw (with its frozen entrant list) as a session; reuses one already in memory. */
  async sessionFromRepo(id: string): Promise<DrawSession | undefined> {
    const known = this.recent.find((s) => s.id === id) ?? this.active.get(id);
    if (known) return known;
    const rec = await this.repo.getDraw(id);
    return rec ? this.adopt(rec) : undefined;
  }

  /** A closed record from storage as an in-memory (done) session. */
  private adopt(rec: DrawRecord): DrawSession {
    const existing = this.recent.find((s) => s.id === rec.id) ?? this.active.get(rec.id);
    if (existing) return existing;
    const seedHex = rec.fairness.seed ?? rec.pendingSeed;
    const s = new DrawSession(rec, seedHex ? Buffer.from(seedHex, 'hex') : Buffer.alloc(32), [], storedPhase(rec));
    this.recent.unshift(s);
    this.recent.length = Math.min(this.recent.length, RECENT_LIMIT);
    return s;
  }
}
