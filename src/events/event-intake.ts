/**
 * EventIntake: the one door through which a Fourthwall event reaches the giveaway engine, whether
 * it arrived as a webhook or was found by the catch-up poll of `GET /webhook-events`
 * (event-poll.ts).
 *
 * Contract:
 * - one dedupe by envelope id for both paths: an id being handled, waiting for a retry, or
 *   durably recorded as processed is never handled a second time (`isKnown` is synchronous, so
 *   the HTTP server can answer a duplicate delivery at once);
 * - an event is recorded as processed only after its handling succeeded, or after it was set
 *   aside on purpose: a `testMode` event in live mode, an event of another shop than the pinned
 *   one, or with no shop id at all (docs/operating.md, "Missed webhooks are caught up", says why
 *   those are still answered 200); a type no feature acts on is remembered in memory only (its
 *   redelivery after a restart is just set aside again, at no file write);
 * - a handling failure (a save that fails, the shop id not readable yet, ...) leaves the event
 *   unprocessed and retried in-process with backoff on the injected clock (1 s doubling to 60 s)
 *   until it succeeds or the bot stops; the catch-up poll finds it again after a restart. It is
 *   never swallowed;
 * - a webhook (`receive`) is answered only from what is on disk (see `receive`).
 * Does not: verify signatures or parse HTTP bodies (http/server.ts, fourthwall/webhooks.ts), or
 * know what a draw is (the `handle` callback does).
 */
import type { WebhookEvent } from '../fourthwall/index.js';
import type { Logger } from '../logging/index.js';
import type { Clock, TimerHandle } from '../shared/clock.js';
import { backoffDelay } from '../shared/retry.js';

export type IntakeSource = 'webhook' | 'poll' | 'retry';
export type IntakeOutcome = 'handled' | 'duplicate' | 'ignored' | 'refused' | 'failed';

interface ProcessedEventStore {
  isEventProcessed(eventId: string): Promise<boolean>;
  markEventProcessed(eventId: string): Promise<boolean>;
}

export interface EventIntakeOptions {
  mode: 'live' | 'sandbox';
  /** Acts on an event of a handled type; throws when the event could not be handled. */
  handle(event: WebhookEvent): Promise<void>;
  /** Event types the bot acts on; every other type is acknowledged and set aside. */
  handledTypes: ReadonlySet<string>;
  store: ProcessedEventStore;
  /** The bot's own shop id (pinned from `GET /shops/current`); throws while it cannot be read. */
  shopId(): Promise<string>;
  clock: Clock;
  logger: Logger;
  /** First retry delay (default 1000 ms); doubles per attempt up to `retryMaxMs` (default 60 s). */
  retryBaseMs?: number;
  retryMaxMs?: number;
}

/** The event's shop: the envelope's `shopId`, else its data's (every event the bot acts on has one). */
function shopIdOf(event: WebhookEvent): string | undefined {
  if (event.shopId) return event.shopId;
  const data = event.data as { shopId?: unknown } | null | undefined;
  return data && typeof data === 'object' && typeof data.shopId === 'string' && data.shopId ? data.shopId : undefined;
}

interface Pending {
  event: WebhookEvent;
  attempt: number;
  timer?: TimerHandle;
  /** The attempt under way (absent while waiting for a retry). */
  running?: Promise<IntakeOutcome>;
  /** Why the last attempt failed, and when the next one runs. */
  lastError?: unknown;
  retryInMs?: number;
}

/** A webhook's event that is not safe to acknowledge: its handling (or a sync) failed. */
export class NotAcknowledged extends Error {
  constructor(
    readonly eventId: string,
    override readonly cause: unknown,
    /** When the intake tries it again in-process. */
    readonly retryInMs: number | undefined,
  ) {
    super(`event ${eventId} could not be handled and saved: ${reasonOf(cause)}`);
    this.name = 'NotAcknowledged';
  }
}

/** `CODE: message` of an error (the file system's EIO, ENOSPC, ...), or its message. */
function reasonOf(err: unknown): string {
  const e = err as NodeJS.ErrnoException | undefined;
  const message = e instanceof Error ? e.message : String(err);
  return e?.code && !message.startsWith(e.code) ? `${e.code}: ${message}` : message;
}

/** How many handled ids are remembered in memory (the durable store keeps its own bound). */
const MEMORY_LIMIT = 10_000;

export class EventIntake {
  private readonly log: Logger;
  private readonly active = new Map<string, Pending>();
  private readonly done = new Set<string>();
  private readonly work = new Set<Promise<unknown>>();
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private stopped = false;

  constructor(private readonly o: EventIntakeOptions) {
    this.log = o.logger.child({ module: 'events' });
    this.retryBaseMs = o.retryBaseMs ?? 1000;
    this.retryMaxMs = o.retryMaxMs ?? 60_000;
  }

  /** True when the id is being handled, waits for a retry, or was handled by this run. */
  isKnown(eventId: string): boolean {
    return this.active.has(eventId) || this.done.has(eventId);
  }

  /** Events whose handling failed and waits for a retry. */
  get retrying(): number {
    return [...this.active.values()].filter((p) => p.timer !== undefined).length;
  }

  /**
   * Takes an event in. The id is claimed synchronously, before the first await, so a concurrent
   * delivery of the same id is a duplicate. Never rejects.
   */
  submit(event: WebhookEvent, source: IntakeSource): Promise<IntakeOutcome> {
    if (this.stopped) return Promise.resolve('failed');
    if (this.isKnown(event.id)) return Promise.resolve('duplicate');
    const pending: Pending = { event, attempt: 0 };
    this.active.set(event.id, pending);
    return this.attempt(pending, source);
  }

  /**
   * A webhook's event: resolves with the outcome once the event is safe to acknowledge (handled,
   * its draw and seed saved and its id synced; set aside and its id synced; a type nothing acts on;
   * processed before), rejects with a NotAcknowledged when it is not (the handling or a sync failed:
   * the event stays unprocessed, retried as above). A redelivery of an id still being handled waits
   * for that same attempt; one waiting for its retry runs the retry at once (Fourthwall's
   * redelivery is as good a moment as the timer). Never logs the failure itself: the HTTP server
   * says it, in one line, with its answer.
   */
  async receive(event: WebhookEvent): Promise<IntakeOutcome> {
    if (this.stopped) throw new NotAcknowledged(event.id, new Error('the bot is stopping'), undefined);
    if (this.done.has(event.id)) return 'duplicate';
    let p = this.active.get(event.id);
    let outcome: IntakeOutcome;
    if (!p) {
      p = { event, attempt: 0 };
      this.active.set(event.id, p);
      outcome = await this.attempt(p, 'webhook', true);
    } else if (p.running) {
      outcome = await p.running;
    } else {
      p.timer?.cancel();
      p.timer = undefined;
      outcome = await this.attempt(p, 'webhook', true);
    }
    if (outcome !== 'failed') return outcome;
    throw new NotAcknowledged(
      event.id,
      p.lastError ?? new Error('the bot is stopping'),
      p.timer ? p.retryInMs : undefined,
    );
  }

  /**
   * Runs one attempt of `p` (tracked as work in flight, and as `p.running` while it runs);
   * `quiet`: its failure is said by the caller (receive's HTTP answer), not logged here.
   */
  private attempt(p: Pending, source: IntakeSource, quiet = false): Promise<IntakeOutcome> {
    const running = this.track(this.run(p, source, quiet));
    p.running = running;
    const clear = () => {
      if (p.running === running) p.running = undefined;
    };
    running.then(clear, clear);
    return running;
  }

  /** Resolves when nothing is being handled right now (retries may still be scheduled). */
  async idle(): Promise<void> {
    while (this.work.size) await Promise.allSettled([...this.work]);
  }

  /** Cancels scheduled retries and waits for handling in flight; the events stay unprocessed. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const p of this.active.values()) p.timer?.cancel();
    await this.idle();
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.work.add(p);
    const drop = () => void this.work.delete(p);
    p.then(drop, drop);
    return p;
  }

  private async run(p: Pending, source: IntakeSource, quiet: boolean): Promise<IntakeOutcome> {
    const { event } = p;
    const ids = { eventId: event.id, type: event.type, source };
    try {
      if (await this.o.store.isEventProcessed(event.id)) {
        // The poll lists every recent event again after a restart: only a webhook is worth a line.
        if (source === 'webhook') this.log.info(ids, 'webhook already processed before; ignored');
        else this.log.debug(ids, 'event already processed before; ignored');
        this.finish(event.id);
        return 'duplicate';
      }
      if (!event.known || !this.o.handledTypes.has(event.type)) {
        this.log.debug(ids, 'event type not used by the bot; ignored');
        this.finish(event.id); // in memory only: see the module contract
        return 'ignored';
      }
      const setAside = await this.setAside(event);
      if (setAside) {
        await this.o.store.markEventProcessed(event.id);
        this.finish(event.id);
        return setAside;
      }
      await this.o.handle(event);
      // Marked only once handled (the draw is saved by then). A crash in between lets the event
      // through again, and the engine ignores a draw id it already has.
      await this.o.store.markEventProcessed(event.id);
      this.finish(event.id);
      if (source !== 'webhook') this.log.info({ ...ids, attempt: p.attempt + 1 }, 'event handled');
      return 'handled';
    } catch (err) {
      p.lastError = err;
      // A received webhook's failure is said by the HTTP server with its answer (one line).
      this.scheduleRetry(p, err, !quiet);
      return 'failed';
    }
  }

  /** Why an event of a handled type is deliberately not acted on, if it is not. */
  private async setAside(event: WebhookEvent): Promise<'ignored' | 'refused' | undefined> {
    const ids = { eventId: event.id, type: event.type };
    if (event.testMode && this.o.mode === 'live') {
      this.log.info(ids, 'test-mode event (a dashboard "test" webhook) ignored in live mode');
      return 'ignored';
    }
    const shopId = shopIdOf(event);
    if (shopId === undefined) {
      this.log.warn(
        ids,
        "event without a shop id (neither shopId nor data.shopId) refused: it cannot be checked as this shop's",
      );
      return 'refused';
    }
    const mine = await this.o.shopId();
    if (shopId !== mine) {
      this.log.warn({ ...ids, shopId, ourShopId: mine }, "event of another shop refused: it is not this bot's shop");
      return 'refused';
    }
    return undefined;
  }

  private finish(eventId: string): void {
    this.active.delete(eventId);
    this.done.add(eventId);
    if (this.done.size > MEMORY_LIMIT) this.done.delete(this.done.values().next().value as string);
  }

  private scheduleRetry(p: Pending, err: unknown, log: boolean): void {
    // No jitter: what fails here is this bot's own handling (a save, the shop id), not a shared server.
    const ms = backoffDelay({ baseMs: this.retryBaseMs, maxMs: this.retryMaxMs, jitter: 'none' }, p.attempt + 1);
    p.attempt += 1;
    p.retryInMs = ms;
    if (log) {
      this.log.error(
        { err, eventId: p.event.id, type: p.event.type, attempt: p.attempt, retryInMs: ms },
        'event handling failed; it stays unprocessed and is retried',
      );
    }
    if (this.stopped) {
      this.active.delete(p.event.id);
      return;
    }
    p.timer = this.o.clock.setTimeout(() => {
      p.timer = undefined;
      if (this.stopped) return;
      void this.attempt(p, 'retry');
    }, ms);
  }
}
