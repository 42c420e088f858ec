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
 *   (400, 403, 404: logged with the status, never the text);
 * - Twitch's limits are kept on the injected clock, not discovered: at most `perSecond` (3) a
 *   second and `perMinute` (100) a minute, and at most `newPerDay` (40) distinct recipients in any
 *   24 hours. A whisper past a limit WAITS in the queue (in order; one to a recipient already
 *   whispered may pass one waiting for the daily budget); a 429 waits for the reset, a network
 *   error or 5xx is retried with growing backoff (1 s up to 60 s): nothing is dropped. Texts are
 *   cut to 500 characters (Twitch's limit towards someone who never whispered the bot).
 * - `stop()` ends the queue: waiting whispers resolve false.
 */
import { undici } from '../http-client/undici.js';
import type { Logger } from '../logging/index.js';
import type { Clock, TimerHandle } from '../shared/clock.js';
import { backoffDelay, type Backoff } from '../shared/retry.js';
import type { HelixTokenSource } from './helix.js';

export const WHISPER_SCOPE = 'user:manage:whispers';

export interface WhisperLimits {
  perSecond: number;
  perMinute: number;
  newPerDay: number;
}

const TWITCH_WHISPER_LIMITS: WhisperLimits = { perSecond: 3, perMinute: 100, newPerDay: 40 };

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
}

interface Job {
  to: string;
  text: string;
  resolve: (ok: boolean) => void;
  failures: number;
}

const DAY_MS = 86_400_000;
/** A network error or 5xx: about 1 s, 2 s, 4 s ... up to 60 s, with jitter (shared/retry.ts). */
const WHISPER_BACKOFF: Backoff = { baseMs: 1000, maxMs: 60_000 };
const MAX_CHARS = 500;

export class TwitchWhispers {
  private readonly queue: Job[] = [];
  private readonly sent: number[] = [];
  /** Recipient -> when first whispered (rolling 24 h). */
  private readonly recipients = new Map<string, number>();
  private readonly limits: WhisperLimits;
  private readonly log: Logger;
  private timer: TimerHandle | undefined;
  private busy = false;
  private stopped = false;
  private notBefore = 0;
  /** Whispers Twitch accepted (204), for tests and the console. */
  accepted = 0;

  constructor(private readonly o: WhisperOptions) {
    this.limits = o.limits ?? TWITCH_WHISPER_LIMITS;
    this.log = o.logger.child({ module: 'twitch.whispers' });
  }

  available(): boolean {
    const id = this.o.identity();
    return !!id && id.scopes.includes(WHISPER_SCOPE);
  }

  /** Whispers waiting in the queue. */
  waiting(): number {
    return this.queue.length;
  }

  send(to: string, text: string): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      this.queue.push({ to, text: [...text].slice(0, MAX_CHARS).join(''), resolve, failures: 0 });
      // A wait armed for another whisper (e.g. the daily budget) must not hold this one.
      if (!this.busy) {
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
    for (const j of this.queue.splice(0)) j.resolve(false);
  }

  /** How long until `job` may go under the limits (0: now). */
  private waitFor(job: Job, now: number): number {
    for (const [id, at] of this.recipients) if (now - at >= DAY_MS) this.recipients.delete(id);
    while (this.sent.length && now - this.sent[0]! >= 60_000) this.sent.shift();
    let wait = Math.max(0, this.notBefore - now);
    const lastSecond = this.sent.filter((t) => now - t < 1000);
    if (lastSecond.length >= this.limits.perSecond) wait = Math.max(wait, lastSecond[lastSecond.length - this.limits.perSecond]! + 1000 - now);
    if (this.sent.length >= this.limits.perMinute) wait = Math.max(wait, this.sent[this.sent.length - this.limits.perMinute]! + 60_000 - now);
    if (!this.recipients.has(job.to) && this.recipients.size >= this.limits.newPerDay) {
      const oldest = Math.min(...this.recipients.values());
      wait = Math.max(wait, oldest + DAY_MS - now);
    }
    return wait;
  }

  private pump(): void {
    if (this.busy || this.stopped || this.timer || this.queue.length === 0) return;
    const now = this.o.clock.now();
    // The first job that may go now (a known recipient can pass one waiting for the daily budget).
    let best = -1;
    let soonest = Infinity;
    for (let i = 0; i < this.queue.length; i++) {
      const w = this.waitFor(this.queue[i]!, now);
      if (w === 0) {
        best = i;
        break;
      }
      soonest = Math.min(soonest, w);
    }
    if (best < 0) {
      this.timer = this.o.clock.setTimeout(() => {
        this.timer = undefined;
        this.pump();
      }, soonest);
      return;
    }
    const job = this.queue.splice(best, 1)[0]!;
    this.busy = true;
    void this.attempt(job).finally(() => {
      this.busy = false;
      this.pump();
    });
  }

  private async attempt(job: Job): Promise<void> {
    const id = this.o.identity();
    if (!id) {
      // Not validated yet: try again shortly.
      this.queue.unshift(job);
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
      job.resolve(true);
      return;
    }
    if (status === 429) {
      this.queue.unshift(job);
      this.notBefore = Math.max(reset ?? 0, this.o.clock.now() + 1000);
      this.log.warn({ status, waitMs: this.notBefore - this.o.clock.now() }, 'Twitch rate-limited a whisper; it waits for the reset');
      return;
    }
    if (status === 401 && job.failures === 0 && this.o.token.canRefresh()) {
      job.failures++;
      await this.o.token.refresh('whisper refused (401)').catch(() => undefined);
      this.queue.unshift(job);
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
    job.resolve(false);
  }

  /**
   * Counts a whisper against the limits at the time its answer came (never earlier than Twitch
   * counted it, so the windows here never let one more through than Twitch's).
   */
  private count(job: Job): void {
    const now = this.o.clock.now();
    this.sent.push(now);
    if (!this.recipients.has(job.to)) this.recipients.set(job.to, now);
  }

  private retry(job: Job, why: string): void {
    job.failures++;
    const delay = backoffDelay(WHISPER_BACKOFF, job.failures);
    this.log.warn({ to: job.to, attempt: job.failures, retryInMs: delay }, `whisper not sent: ${why}; trying again`);
    this.queue.unshift(job);
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
