/**
 * The catch-up poll: reads Fourthwall's list of past webhook events (`GET /webhook-events`, one
 * call per event type the bot acts on) at start and then every interval, and hands
 * every event the bot has not handled yet to the EventIntake, which dedupes by event id with the
 * webhook path. So a draw whose webhook never arrived (tunnel down, bot restarting) still runs.
 *
 * Contract: each listed record's `body` (the envelope as a JSON string) is parsed like a webhook
 * body; a record that does not parse is logged once and skipped. The API documents no order for
 * the list, so none is assumed: the first page's dates tell whether it is newest or oldest first,
 * and pages are read from the newest end until one reaches past the horizon (default 1 hour;
 * older events are not replayed), at most `maxPages` per type; a type's events are handed over
 * oldest first. A failed list call is logged and tried again on the next tick; it
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
    for (const type of this.o.types) {
      if (this.stopped) break;
      // Handed over type by type, in `types` order (a draw's start before its end).
      try {
        const found: { at: number; rec: WebhookEventRecord }[] = [];
        await this.readType(type, horizon, report, (rec, at) => found.push({ rec, at }));
        // Oldest first, whatever order the list came in.
        found.sort((a, b) => a.at - b.at);
        const handed: Promise<unknown>[] = [];
        for (const { rec } of found) {
          if (this.o.isKnown(rec.id)) continue;
          const event = this.parse(rec);
          if (!event) continue;
          report.submitted += 1;
          handed.push(this.o.submit(event, 'poll'));
        }
        await Promise.all(handed);
      } catch (err) {
        report.failedTypes.push(type);
        if (!this.failing && report.failedTypes.length === 1)
          this.log.warn({ err, type }, 'could not read the past webhook events; trying again on the next poll');
      }
    }
    if (report.failedTypes.length === 0 && this.failing) this.log.info('past webhook events readable again');
    this.failing = report.failedTypes.length > 0;
    if (report.submitted) this.log.info({ submitted: report.submitted }, 'catch-up poll found events not handled yet');
    return report;
  }

  /**
   * Reads one type's recent events (not older than `horizon`), whatever order the API lists them
   * in. The first page's dates tell the order (its first and last `createdAt`); when they cannot
   * (all equal), the last page is compared with the first. Newest first: pages are followed until
   * one reaches past the horizon. Oldest first: the newest events are on the last pages, so those
   * are read from the end backwards until one reaches past the horizon (without a page count, all
   * pages are read forward). At most `maxPages` list calls either way.
   */
  private async readType(
    type: string,
    horizon: number,
    report: PollReport,
    take: (rec: WebhookEventRecord, at: number) => void,
  ): Promise<void> {
    const size = this.o.pageSize ?? 50;
    const maxPages = this.o.maxPages ?? 4;
    const taken = new Set<string>();
    let calls = 0;
    const timeOf = (rec: WebhookEventRecord) => Date.parse(rec.createdAt ?? '');
    const pages = new Map<number, { res: Page<WebhookEventRecord>; recent: number; pastHorizon: boolean }>();
    const read = async (page: number) => {
      const known = pages.get(page);
      if (known) return known;
      calls += 1;
      const res = await this.o.list({ type, page, size });
      report.listed += res.results.length;
      let recent = 0;
      for (const rec of res.results) {
        const at = timeOf(rec);
        if (Number.isFinite(at) && at < horizon) continue;
        recent += 1;
        if (taken.has(rec.id)) continue;
        taken.add(rec.id);
        take(rec, Number.isFinite(at) ? at : Number.MAX_SAFE_INTEGER);
      }
      const out = { res, recent, pastHorizon: recent < res.results.length };
      pages.set(page, out);
      return out;
    };
    const first = await read(0);
    const list = first.res.results;
    const total = first.res.totalPages;
    const t0 = list.length ? timeOf(list[0]!) : NaN;
    const tn = list.length ? timeOf(list[list.length - 1]!) : NaN;
    let oldestFirst = t0 < tn;
    let backFrom = total != null ? total - 1 : undefined;
    if (!(t0 < tn) && !(t0 > tn) && total != null && total > 1 && calls < maxPages) {
      // One page of equal dates says nothing: compare with the last page.
      const last = await read(total - 1);
      const tl = last.res.results.length ? timeOf(last.res.results[0]!) : NaN;
      oldestFirst = tl > t0;
      if (oldestFirst && last.pastHorizon) return;
      backFrom = total - 2;
    }
    if (oldestFirst) {
      if (backFrom != null) {
        // From the end back; a page with an old event means every earlier page is older.
        for (let page = backFrom; page >= 1 && calls < maxPages; page--) if ((await read(page)).pastHorizon) break;
      } else {
        for (let page = 1, n = list.length; page < maxPages && n >= size; page++)
          n = (await read(page)).res.results.length;
      }
      return;
    }
    let { res, pastHorizon } = first;
    for (let page = 1; calls < maxPages || pages.has(page); page++) {
      const last = res.totalPages != null ? page >= res.totalPages : res.results.length < size;
      if (last || pastHorizon || res.results.length === 0) break;
      ({ res, pastHorizon } = await read(page));
    }
  }

  private parse(rec: WebhookEventRecord): WebhookEvent | undefined {
    if (this.unreadable.has(rec.id)) return undefined;
    try {
      if (!rec.body) throw new Error('the record has no body');
      const event = parseWebhookEvent(rec.body);
      if (event.id !== rec.id)
        this.log.debug(
          { eventId: rec.id, bodyId: event.id },
          'listed event id differs from its body id; using the body id',
        );
      return event;
    } catch (err) {
      this.unreadable.add(rec.id);
      this.log.warn(
        { eventId: rec.id, type: rec.type, reason: (err as Error).message },
        'a past webhook event could not be read; skipped',
      );
      return undefined;
    }
  }
}
