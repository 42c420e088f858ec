/**
 * Delivery engine of the Fourthwall sandbox's webhooks: signs and POSTs one envelope to one
 * configuration's URL and retries it on the configured schedule.
 *
 * Contract: `X-Fourthwall-Hmac-SHA256` = base64(HMAC-SHA256(shop webhook secret, raw body)) and,
 * with an app key, `X-Fourthwall-Hmac-Apps-SHA256`. An attempt counts as delivered only on exactly
 * 200 within `retry.timeoutMs`; otherwise (other status, `timeout`, `error`) it is retried after
 * `retry.delaysMs` (the last value repeats) up to `retry.attempts`, while the record's
 * configuration still exists (`isSubscribed`). Each attempt updates the DeliveryRecord in place
 * (`attempts`, `statuses`, `delivered`, `error`, finally `done`) and calls `onChange`. `run`
 * settles after the FIRST attempt (the hub orders held and duplicate events by it). Timers run
 * on the injected transport Clock; `close()` cancels waits and aborts in-flight requests. Bodies
 * and signatures are never logged.
 *
 * Deliberately not here: configurations, event envelopes, delivery faults and the delivery log
 * (webhooks.ts).
 */
import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Clock, TimerHandle } from '../../shared/clock.js';
import type { Logger } from '../../logging/index.js';

export interface DeliveryRetry {
  /** Total attempts per delivery (default 5). */
  attempts: number;
  /** Waits before attempt 2, 3, ...; the last value repeats (default [1000, 2000, 5000, 10000]). */
  delaysMs: number[];
  /** An attempt not answered within this counts as failed (default 2000). */
  timeoutMs: number;
}

export type AttemptOutcome = number | 'timeout' | 'error';

/** One delivery of one event to one configuration (a deliberate duplicate is its own record). */
export interface DeliveryRecord {
  eventId: string;
  webhookId: string;
  type: string;
  url: string;
  createdAt: string;
  /** The exact raw body sent (what the signature covers). */
  body: string;
  attempts: number;
  /** Outcome of each attempt: the HTTP status, `timeout` or `error` (no answer / refused). */
  statuses: AttemptOutcome[];
  delivered: boolean;
  /** No attempt is pending any more (delivered, or given up). */
  done: boolean;
  /** True for the extra copy sent by a `duplicate` fault. */
  duplicate: boolean;
  /** True when a `drop` fault kept it from being sent at all (it is still listed). */
  dropped?: boolean;
  testMode?: boolean;
  /** Last failure, e.g. `status 500`, `timeout`. */
  error?: string;
}

/** Computes Fourthwall's signature header value for a raw body. */
export function signBody(body: string | Buffer, key: string): string {
  return createHmac('sha256', Buffer.from(key, 'utf8')).update(body).digest('base64');
}

export interface WebhookDeliveryOptions {
  webhookSecret: string;
  appHmacKey?: string;
  retry: DeliveryRetry;
  /** Timers: retry waits, attempt timeouts, delivery delays. */
  transportClock: Clock;
  logger: Logger;
  /** False once the record's configuration is gone: no further attempt is made. */
  isSubscribed(rec: DeliveryRecord): boolean;
  /** Called whenever a record changed (the hub's `waitFor` listeners). */
  onChange(): void;
}

/** Sends and retries deliveries (see the module header). */
export class WebhookDelivery {
  private readonly timers = new Set<TimerHandle>();
  private readonly inFlight = new Set<() => void>();
  private closed = false;

  constructor(private readonly o: WebhookDeliveryOptions) {}

  /** Stops all delivery work (pending retries and in-flight requests are abandoned). */
  close(): void {
    this.closed = true;
    for (const t of this.timers) t.cancel();
    this.timers.clear();
    for (const abort of this.inFlight) abort();
    this.inFlight.clear();
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const handle = this.o.transportClock.setTimeout(() => {
        this.timers.delete(handle);
        resolve();
      }, ms);
      this.timers.add(handle);
    });
  }

  /** Runs the delivery; the returned promise settles after the FIRST attempt (ordering faults). */
  run(rec: DeliveryRecord, initialDelayMs: number): Promise<void> {
    let firstDone!: () => void;
    const first = new Promise<void>((r) => (firstDone = r));
    void (async () => {
      const { attempts, delaysMs } = this.o.retry;
      await this.sleep(initialDelayMs);
      for (let i = 0; i < attempts; i++) {
        if (i > 0) await this.sleep(delaysMs[Math.min(i - 1, delaysMs.length - 1)] ?? 0);
        if (this.closed || !this.o.isSubscribed(rec)) break;
        const outcome = await this.attempt(rec);
        if (this.closed) break;
        rec.attempts++;
        rec.statuses.push(outcome);
        if (outcome === 200) {
          rec.delivered = true;
          delete rec.error;
        } else {
          rec.error = typeof outcome === 'number' ? `status ${outcome}` : outcome;
        }
        this.o.logger.debug(
          { eventId: rec.eventId, type: rec.type, attempt: rec.attempts, outcome: String(outcome) },
          'webhook delivery attempt',
        );
        if (i === 0) firstDone();
        if (rec.delivered) break;
        this.o.onChange();
      }
      rec.done = true;
      firstDone();
      this.o.onChange();
    })();
    return first;
  }

  private attempt(rec: DeliveryRecord): Promise<AttemptOutcome> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (o: AttemptOutcome): void => {
        if (settled) return;
        settled = true;
        timer.cancel();
        this.inFlight.delete(abort);
        resolve(o);
      };
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(rec.body)),
        'user-agent': 'Fourthwall-Sandbox-Webhooks/1.0',
        'x-fourthwall-hmac-sha256': signBody(rec.body, this.o.webhookSecret),
      };
      if (this.o.appHmacKey) headers['x-fourthwall-hmac-apps-sha256'] = signBody(rec.body, this.o.appHmacKey);
      let url: URL;
      try {
        url = new URL(rec.url);
      } catch {
        resolve('error');
        return;
      }
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(url, { method: 'POST', headers, agent: false }, (res) => {
        res.resume();
        res.on('end', () => finish(res.statusCode ?? 0));
        res.on('error', () => finish(res.statusCode ?? 'error'));
      });
      const abort = (): void => {
        req.destroy();
        finish('error');
      };
      this.inFlight.add(abort);
      const timer = this.o.transportClock.setTimeout(() => {
        req.destroy();
        finish('timeout');
      }, this.o.retry.timeoutMs);
      req.on('error', () => finish('error'));
      req.end(rec.body);
    });
  }
}
