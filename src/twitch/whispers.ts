/**
 * Whispers from the bot account: Helix `POST /whispers?from_user_id&to_user_id` with
 * `{ message }`, the bot's token (scope `user:manage:whispers`) and `Client-Id`.
 *
 * Contract (the delivery tracker's WhisperPort):
 * - `available()` is true once the token was validated with `user:manage:whispers` (and its user id
 *   is known): Twitch also needs the bot account to have a verified phone number, which only a
 *   refusal (403) tells;
 * - `send(to, text)` queues one whisper and resolves true once Twitch answered 204 (which is NOT
 *   proof of delivery: Twitch drops some whispers silently), false when Twitch refused it for good
 *   (400, 403, 404: logged with the status, never the text); the same text to the same viewer
 *   while one is still queued joins it (a restart's re-queue never whispers twice);
 * - Twitch's limits are kept on the injected clock, not discovered (whisper-budget.ts: 3 a second,
 *   100 a minute, 40 distinct recipients in any 24 hours). A whisper past a limit WAITS in the
 *   queue (in order; one to a recipient already whispered may pass one waiting for the daily
 *   budget); a 429 waits for the reset, a network error or 5xx is retried with growing backoff
 *   (about 1 s up to 60 s, shared/retry.ts): nothing is dropped. Texts are cut to 500 characters
 *   (Twitch's limit towards someone who never whispered the bot).
 * - With a `store` (delivery/whisper-file.ts, DATA_DIR/whispers.json) the queue and the budget
 *   survive a restart: every change is saved, the saved queue is loaded before the first send and
 *   goes out on its own (a whisper in flight at a crash is sent again: at least once).
 * - p-queue runs the sends, one at a time; the budget beside it says which queued whisper may go
 *   and when (p-queue's interval cannot: see whisper-budget.ts).
 * - `stop()` ends the queue: callers waiting get false, the queue stays saved for the next run;
 *   `idle()` resolves once the send in flight and the last save are done.
 */
import PQueue from 'p-queue';
import { undici } from '../http-client/undici.js';
import type { Logger } from '../logging/index.js';
import type { Clock, TimerHandle } from '../shared/clock.js';
import { backoffDelay, type Backoff } from '../shared/retry.js';
import type { HelixTokenSource } from './helix.js';
import { TWITCH_WHISPER_LIMITS, WhisperBudget, type SavedBudget, type WhisperLimits } from './whisper-budget.js';

export const WHISPER_SCOPE = 'user:manage:whispers';
export type { WhisperLimits } from './whisper-budget.js';

/** What survives a restart: the whispers waiting, in order, the earliest next send, the budget's counts. */
export interface WhisperState {
  queued: { to: string; text: string }[];
  notBefore: number;
  budget: SavedBudget;
}

/** Where the state is kept (delivery/whisper-file.ts); `load` is undefined when nothing was saved. */
export interface WhisperStore {
  load(): Promise<WhisperState | undefined>;
  save(state: WhisperState): Promise<void>;
}

export interface WhisperOptions {
  apiUrl: string;
  clientId: string;
  token: HelixTokenSource;
  /** The bot's user id and its token's scopes, once validated (undefined before). */
  identity: () => { userId: string; scopes: readonly string[] } | undefined;
  clock: Clock;
  logger: Logger;
  limits?: WhisperLimits;
  timeoutMs?: number;
  /** Keeps the queue and the budget across restarts. */
  store?: WhisperStore;
}

interface Job {
  to: string;
  text: string;
  /** Callers waiting for the outcome (none for a whisper restored from the store). */
  resolvers: ((ok: boolean) => void)[];
  failures: number;
  /** Handed to Twitch right now (kept in the queue until answered, so a crash re-sends it). */
  sending: boolean;
}

const MAX_CHARS = 500;
/** A network error or 5xx: about 1 s, 2 s, 4 s ... up to 60 s, with jitter (shared/retry.ts). */
const WHISPER_BACKOFF: Backoff = { baseMs: 1000, maxMs: 60_000 };

export class TwitchWhispers {
  private readonly queue: Job[] = [];
  private budget: WhisperBudget;
  private readonly log: Logger;
  /** Runs the sends, one at a time. */
  private readonly sender = new PQueue({ concurrency: 1 });
  private readonly loaded: Promise<void>;
  private timer: TimerHandle | undefined;
  private stopped = false;
  private notBefore = 0;
  private saving: Promise<void> = Promise.resolve();
  private saveQueued = false;
  /** Whispers Twitch accepted (204), for tests and the console. */
  accepted = 0;

  constructor(private readonly o: WhisperOptions) {
    const limits = o.limits ?? TWITCH_WHISPER_LIMITS;
    this.log = o.logger.child({ module: 'twitch.whispers' });
    this.budget = new WhisperBudget(limits);
    this.loaded = this.restore(limits);
  }

  available(): boolean {
    const id = this.o.identity();
    return !!id && id.scopes.includes(WHISPER_SCOPE);
  }

  /** Whispers waiting in the queue (not the one being sent). */
  waiting(): number {
    return this.queue.filter((j) => !j.sending).length;
  }

  async send(to: string, text: string): Promise<boolean> {
    await this.loaded;
    if (this.stopped) return false;
    const cut = [...text].slice(0, MAX_CHARS).join('');
    return new Promise((resolve) => {
      const same = this.queue.find((j) => j.to === to && j.text === cut);
      if (same) same.resolvers.push(resolve);
      else {
        this.queue.push({ to, text: cut, resolvers: [resolve], failures: 0, sending: false });
        this.save();
      }
      // A wait armed for another whisper (e.g. the daily budget) must not hold this one.
      if (this.sender.pending === 0) {
        this.timer?.cancel();
        this.timer = undefined;
      }
      this.pump();
    });
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    for (const j of this.queue) for (const r of j.resolvers.splice(0)) r(false);
  }

  /** Resolves once the send in flight and the last save are done. */
  async idle(): Promise<void> {
    await this.loaded;
    await this.sender.onIdle();
    await this.saving;
  }

  private async restore(limits: WhisperLimits): Promise<void> {
    const saved = await this.o.store?.load().catch((err: unknown) => {
      this.log.error({ err }, 'could not read the saved whisper queue; starting with an empty one');
      return undefined;
    });
    if (!saved) return;
    this.budget = new WhisperBudget(limits, saved.budget);
    this.notBefore = saved.notBefore;
    for (const q of saved.queued)
      this.queue.push({ to: q.to, text: q.text, resolvers: [], failures: 0, sending: false });
    if (saved.queued.length)
      this.log.info({ queued: saved.queued.length }, 'whispers left from before the restart are queued again');
    this.pump();
  }

  /** Saves the queue and the budget (one save at a time; changes meanwhile go in the next one). */
  private save(): void {
    const store = this.o.store;
    if (!store || this.saveQueued) return;
    this.saveQueued = true;
    this.saving = this.saving.then(async () => {
      this.saveQueued = false;
      const state: WhisperState = {
        queued: this.queue.map((j) => ({ to: j.to, text: j.text })),
        notBefore: this.notBefore,
        budget: this.budget.saved(),
      };
      await store.save(state).catch((err: unknown) => this.log.error({ err }, 'could not save the whisper queue'));
    });
  }

  /** How long until `job` may go under the limits (0: now). */
  private waitFor(job: Job, now: number): number {
    return Math.max(this.budget.waitMs(job.to, now), this.notBefore - now, 0);
  }

  private pump(): void {
    if (this.sender.pending > 0 || this.stopped || this.timer || this.queue.length === 0) return;
    const now = this.o.clock.now();
    // The first job that may go now (a known recipient can pass one waiting for the daily budget).
    let job: Job | undefined;
    let soonest = Infinity;
    for (const j of this.queue) {
      const w = this.waitFor(j, now);
      if (w === 0) {
        job = j;
        break;
      }
      soonest = Math.min(soonest, w);
    }
    if (!job) {
      this.timer = this.o.clock.setTimeout(() => {
        this.timer = undefined;
        this.pump();
      }, soonest);
      return;
    }
    const next = job;
    next.sending = true;
    void this.sender
      .add(() => this.attempt(next))
      .finally(() => {
        next.sending = false;
        this.pump();
      });
  }

  /** The job's outcome: resolves its callers and leaves the queue. */
  private settle(job: Job, ok: boolean): void {
    const i = this.queue.indexOf(job);
    if (i >= 0) this.queue.splice(i, 1);
    for (const r of job.resolvers.splice(0)) r(ok);
    this.save();
  }

  private async attempt(job: Job): Promise<void> {
    const id = this.o.identity();
    if (!id) {
      // Not validated yet: try again shortly.
      this.notBefore = this.o.clock.now() + 1000;
      return;
    }
    let status: number;
    let reset: number | undefined;
    try {
      ({ status, reset } = await this.post(id.userId, job));
    } catch (err) {
      // It may have reached Twitch: counted against the limits all the same.
      this.count(job);
      this.retry(job, `could not reach the Twitch API (${(err as { code?: string }).code ?? (err as Error).name})`);
      return;
    }
    this.count(job);
    if (status === 204 || status === 200) {
      this.accepted++;
      this.settle(job, true);
      return;
    }
    if (status === 429) {
      this.notBefore = Math.max(reset ?? 0, this.o.clock.now() + 1000);
      this.log.warn(
        { status, waitMs: this.notBefore - this.o.clock.now() },
        'Twitch rate-limited a whisper; it waits for the reset',
      );
      return;
    }
    if (status === 401 && job.failures === 0 && this.o.token.canRefresh()) {
      job.failures++;
      await this.o.token.refresh('whisper refused (401)').catch(() => undefined);
      return;
    }
    if (status >= 500) {
      this.retry(job, `Twitch answered HTTP ${status}`);
      return;
    }
    this.log.warn(
      { status, to: job.to },
      status === 403
        ? 'Twitch refused a whisper (403): the bot account needs a verified phone number, or the viewer does not accept whispers'
        : `Twitch refused a whisper (HTTP ${status})`,
    );
    this.settle(job, false);
  }

  /**
   * Counts a whisper against the limits at the time its answer came (never earlier than Twitch
   * counted it, so the windows here never let one more through than Twitch's).
   */
  private count(job: Job): void {
    this.budget.spend(job.to, this.o.clock.now());
    this.save();
  }

  private retry(job: Job, why: string): void {
    job.failures++;
    const delay = backoffDelay(WHISPER_BACKOFF, job.failures);
    this.log.warn({ to: job.to, attempt: job.failures, retryInMs: delay }, `whisper not sent: ${why}; trying again`);
    this.notBefore = this.o.clock.now() + delay;
  }

  private async post(from: string, job: Job): Promise<{ status: number; reset?: number }> {
    const { request } = await undici();
    const timeout = this.o.timeoutMs ?? 10_000;
    const q = new URLSearchParams({ from_user_id: from, to_user_id: job.to });
    const res = await request(`${this.o.apiUrl.replace(/\/+$/, '')}/whispers?${q.toString()}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${this.o.token.current()}`,
        'client-id': this.o.clientId,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ message: job.text }),
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
    await res.body.text();
    const r = Number(res.headers['ratelimit-reset']);
    return { status: res.statusCode, ...(Number.isFinite(r) && r > 0 ? { reset: r * 1000 } : {}) };
  }
}
