/**
 * The catch-up poll: reads Fourthwall's list of past webhook events (`GET /webhook-events`, one
 * call per event type the bot acts on, newest first) at start and then every interval, and hands
 * every event the bot has not handled yet to the EventIntake, which dedupes by event id with the
 * webhook path. So a draw whose webhook never arrived (tunnel down, bot restarting) still runs.
 *
 * Contract: each listed record's `body` (the envelope as a JSON string) is parsed like a webhook
 * body; a record that does not parse is logged once and skipped. Pages are followed while a full
 * page still holds events newer than the horizon (default 1 hour; older events are not replayed),
 * at most `maxPages` per type. A failed list call is logged and tried again on the next tick; it
 * never stops the bot. Ticks never overlap, and one type's events are handed over (and opened)
 * before the next type is read, so a draw's start is handled before its end. Timers run on the injected clock (tests advance it).
 * Does not: decide whether an event is acted on (event-intake.ts does) or retry handling itself.
 */
import { parseWebhookEvent, type WebhookEvent } from '../fourthwall/index.js';
import type { Page, WebhookEventRecord } from '../fourthwall/schemas.js';
import type { Logger } from '../logging/index.js';
import type { Clock, TimerHandle } from '../shared/clock.js';
import type { IntakeOutcome, IntakeSource } from './event-intake.js';

export interface EventPollerOptions {
  list(q: { type: string; page: number; size: number }): Promise<Page<WebhookEventRecord>>;
  types: readonly string[];
  intervalMs: number;
  clock: Clock;
  logger: Logger;
  isKnown(eventId: string): boolean;
  submit(event: WebhookEvent, source: IntakeSource): Promise<IntakeOutcome>;
  /** Events older than this are not replayed (default 1 hour). */
  horizonMs?: number;
  pageSize?: number;
  maxPages?: number;
}

export interface PollReport {
  listed: number;
  submitted: number;
  failedTypes: string[];
}

export class EventPoller {
  private readonly log: Logger;
  private timer: TimerHandle | undefined;
  private running: Promise<PollReport> | undefined;
  private stopped = false;
  private readonly unreadable = new Set<string>();
  private failing = false;

  constructor(private readonly o: EventPollerOptions) {
    this.log = o.logger.child({ module: 'event-poll' });
  }

  /** Polls once now (awaited), then every interval until `stop`. */
  async start(): Promise<PollReport> {
    const first = await this.pollOnce();
    this.schedule();
    return first;
  }

  /** Stops the timer and waits for a poll in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** One pass over every type; a pass already running is joined, not doubled. */
  pollOnce(): Promise<PollReport> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  private schedule(): void {
    if (this.stopped || this.o.intervalMs <= 0) return;
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = undefined;
      void this.pollOnce().finally(() => this.schedule());
    }, this.o.intervalMs);
  }

  private async pass(): Promise<PollReport> {
    const report: PollReport = { listed: 0, submitted: 0, failedTypes: [] };
    const horizon = this.o.clock.now() - (this.o.horizonMs ?? 3_600_000);
    const size = this.o.pageSize ?? 50;
    for (const type of this.o.types) {
      if (this.stopped) break;
      // Handed over type by type, in `types` order (a draw's start before its end).
      const handed: Promise<unknown>[] = [];
      try {
        for (let page = 0; page < (this.o.maxPages ?? 4); page++) {
          const res = await this.o.list({ type, page, size });
          report.listed += res.results.length;
          let recent = 0;
          for (const rec of res.results) {
            const at = Date.parse(rec.createdAt ?? '');
            if (Number.isFinite(at) && at < horizon) continue;
            recent += 1;
            if (this.o.isKnown(rec.id)) continue;
            const event = this.parse(rec);
            if (!event) continue;
            report.submitted += 1;
            handed.push(this.o.submit(event, 'poll'));
          }
          const last = res.totalPages != null ? page + 1 >= res.totalPages : res.results.length < size;
          if (last || recent < res.results.length || res.results.length === 0) break;
        }
        await Promise.all(handed);
      } catch (err) {
        report.failedTypes.push(type);
        if (!this.failing && report.failedTypes.length === 1) this.log.warn({ err, type }, 'could not read the past webhook events; trying again on the next poll');
      }
    }
    if (report.failedTypes.length === 0 && this.failing) this.log.info('past webhook events readable again');
    this.failing = report.failedTypes.length > 0;
    if (report.submitted) this.log.info({ submitted: report.submitted }, 'catch-up poll found events not handled yet');
    return report;
  }

  private parse(rec: WebhookEventRecord): WebhookEvent | undefined {
    if (this.unreadable.has(rec.id)) return undefined;
    try {
      if (!rec.body) throw new Error('the record has no body');
      const event = parseWebhookEvent(rec.body);
      if (event.id !== rec.id) this.log.debug({ eventId: rec.id, bodyId: event.id }, 'listed event id differs from its body id; using the body id');
      return event;
    } catch (err) {
      this.unreadable.add(rec.id);
      this.log.warn({ eventId: rec.id, type: rec.type, reason: (err as Error).message }, 'a past webhook event could not be read; skipped');
      return undefined;
    }
  }
}
