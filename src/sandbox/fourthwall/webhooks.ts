/**
 * Webhooks of the Fourthwall sandbox: the configurations (`wcon_...`, CRUD with Fourthwall's URI
 * rules) and the delivery engine. An emitted event becomes one signed envelope per configuration
 * whose `allowedTypes` holds its type: POST JSON `{testMode, id: 'weve_...', webhookId, shopId,
 * type, apiVersion: 'V1', createdAt, data}` with `X-Fourthwall-Hmac-SHA256` = base64(HMAC-SHA256
 * (shop webhook secret, raw body)) and, with an app key, `X-Fourthwall-Hmac-Apps-SHA256`.
 * Delivery counts only on exactly 200 within the timeout; otherwise it is retried on a schedule.
 * Delivery faults (duplicate, hold for out-of-order, delay, drop: listed but never sent) and a
 * readable delivery log with `waitFor` serve tests; `emit(..., { testMode: true })` is the
 * dashboard's "send test webhook". `events()` is what `GET /webhook-events` lists: one record per
 * event and configuration, newest first, with the documented fields (`body` = the envelope as a
 * JSON string, `state` DELIVERED / FAILED / PENDING). Timers run on the injected transport Clock. Bodies and signatures are
 * never logged. It does not decide when events happen; callers emit them.
 */
import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Clock, TimerHandle } from '../../shared/clock.js';
import type { Logger } from '../../logging/index.js';
import { ApiError, invalid } from './http.js';
import type { IdFactory } from './ids.js';
import { WEBHOOK_EVENT_TYPES, type WebhookConfiguration } from './types.js';

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

export interface WebhookFaultSpec {
  kind: 'duplicate' | 'hold' | 'delay' | 'drop';
  /** Only events of this type (default: any). */
  type?: string;
  /** How many events it applies to (default 1). */
  times?: number;
  /** `delay`: how long before the first attempt (ms). */
  delayMs?: number;
}

export interface UriRules {
  /** Allow loopback hosts (127.0.0.0/8, ::1, localhost) on any port (default true). */
  allowLoopback: boolean;
}

export interface WebhookHubOptions {
  shopId: string;
  webhookSecret: string;
  appHmacKey?: string;
  retry: DeliveryRetry;
  uriRules: UriRules;
  /** Business time (timestamps). */
  clock: Clock;
  /** Timers: retry waits, attempt timeouts, delivery delays. */
  transportClock: Clock;
  ids: IdFactory;
  logger: Logger;
}

interface WebhookFaultRule {
  kind: WebhookFaultSpec['kind'];
  type?: string;
  remaining: number;
  delayMs: number;
}

/** Computes Fourthwall's signature header value for a raw body. */
export function signBody(body: string | Buffer, key: string): string {
  return createHmac('sha256', Buffer.from(key, 'utf8')).update(body).digest('base64');
}

const LOOPBACK_NAMES = new Set(['localhost', 'localhost.']);

function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  if (LOOPBACK_NAMES.has(h.toLowerCase())) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return h === '::1';
}

/** Applies Fourthwall's creation rules to a webhook URL; throws the documented 400s. */
export function checkWebhookUrl(raw: string, rules: UriRules): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('url', 'must be an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('url', 'must be http or https');
  const host = url.hostname;
  if (rules.allowLoopback && isLoopback(host)) return;
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) throw new ApiError(400, 'WEBHOOK_URI_IP_NOT_ALLOWED');
  if (url.port !== '' && url.port !== '443' && url.port !== '80') throw new ApiError(400, 'WEBHOOK_URI_PORT_NOT_ALLOWED');
  if (LOOPBACK_NAMES.has(host.toLowerCase()) || !host.includes('.') || host.endsWith('.local') || host.endsWith('.internal')) {
    throw new ApiError(400, 'WEBHOOK_URI_UNALLOWED_DOMAIN');
  }
}

/** Validates a create/update body `{url, allowedTypes}` (a field named `types` is ignored). */
export function parseWebhookBody(body: Record<string, unknown>, rules: UriRules): { url: string; allowedTypes: string[] } {
  const url = body['url'];
  if (typeof url !== 'string' || url === '') throw invalid('url', 'is required');
  const types = body['allowedTypes'];
  if (!Array.isArray(types)) throw invalid('allowedTypes', 'is required and must be an array');
  types.forEach((t, i) => {
    if (typeof t !== 'string' || !WEBHOOK_EVENT_TYPES.includes(t)) {
      throw invalid(`allowedTypes[${i}]`, `must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
    }
  });
  checkWebhookUrl(url, rules);
  return { url, allowedTypes: [...new Set(types as string[])] };
}

/** Configurations, event emission and delivery. */
export class WebhookHub {
  readonly configs = new Map<string, WebhookConfiguration>();
  readonly deliveries: DeliveryRecord[] = [];
  private readonly listeners = new Set<() => void>();
  private faults: WebhookFaultRule[] = [];
  private held: { records: DeliveryRecord[] }[] = [];
  private readonly timers = new Set<TimerHandle>();
  private readonly inFlight = new Set<() => void>();
  private closed = false;

  constructor(private readonly o: WebhookHubOptions) {}

  create(url: string, allowedTypes: string[]): WebhookConfiguration {
    const config: WebhookConfiguration = { id: this.o.ids.prefixed('wcon'), url, allowedTypes, apiVersion: 'V1' };
    this.configs.set(config.id, config);
    return config;
  }

  get(id: string): WebhookConfiguration {
    const c = this.configs.get(id);
    if (!c) throw new ApiError(404, 'WEBHOOK_CONFIGURATION_NOT_FOUND', { webhookConfigurationId: id, shopId: this.o.shopId });
    return c;
  }

  update(id: string, url: string, allowedTypes: string[]): WebhookConfiguration {
    const c = this.get(id);
    c.url = url;
    c.allowedTypes = allowedTypes;
    return c;
  }

  remove(id: string): void {
    this.get(id);
    this.configs.delete(id);
  }

  /** Adds a delivery fault for the next matching events. */
  addFault(spec: WebhookFaultSpec): void {
    if (!['duplicate', 'hold', 'delay', 'drop'].includes(spec.kind)) throw new RangeError('webhook fault kind must be duplicate, hold, delay or drop');
    if (spec.times !== undefined && (!Number.isInteger(spec.times) || spec.times < 1)) throw new RangeError('times must be a positive integer');
    if (spec.kind === 'delay' && !(typeof spec.delayMs === 'number' && spec.delayMs >= 0)) throw new RangeError('delay needs delayMs >= 0');
    this.faults.push({
      kind: spec.kind,
      ...(spec.type !== undefined ? { type: spec.type } : {}),
      remaining: spec.times ?? 1,
      delayMs: spec.delayMs ?? 0,
    });
  }

  clearFaults(): void {
    this.faults = [];
  }

  /** Sends events held by a `hold` fault now, without waiting for a following event. */
  releaseHeld(): void {
    const held = this.held;
    this.held = [];
    for (const h of held) for (const r of h.records) void this.run(r, 0);
  }

  /**
   * Emits an event: one delivery per configuration subscribed to `type`. Returns the records
   * (empty when nobody subscribes).
   */
  emit(type: string, data: unknown, options: { testMode?: boolean } = {}): DeliveryRecord[] {
    if (this.closed) return [];
    const createdAt = new Date(this.o.clock.now()).toISOString();
    const records: DeliveryRecord[] = [];
    const testMode = options.testMode === true;
    for (const config of this.configs.values()) {
      if (!config.allowedTypes.includes(type)) continue;
      const envelope = {
        testMode,
        id: this.o.ids.prefixed('weve'),
        webhookId: config.id,
        shopId: this.o.shopId,
        type,
        apiVersion: 'V1',
        createdAt,
        data,
      };
      const rec = this.record(envelope.id, config, type, createdAt, JSON.stringify(envelope), false);
      if (testMode) rec.testMode = true;
      records.push(rec);
    }
    if (records.length === 0) return records;
    const drop = this.takeFault('drop', type);
    if (drop) {
      for (const r of records) Object.assign(r, { dropped: true, done: true, error: 'not delivered (sandbox drop fault)' });
      this.o.logger.debug({ type, count: records.length }, 'webhook event dropped (listed, never sent)');
      this.notify();
      return records;
    }
    const hold = this.takeFault('hold', type);
    const duplicate = this.takeFault('duplicate', type);
    const delay = this.takeFault('delay', type);
    const previouslyHeld = this.held;
    if (hold) {
      this.held.push({ records });
      this.o.logger.debug({ type, count: records.length }, 'webhook event held for out-of-order delivery');
      return records;
    }
    this.held = [];
    const delayMs = delay?.delayMs ?? 0;
    const firsts = records.map((r) => this.run(r, delayMs));
    if (duplicate) {
      records.forEach((r, i) => {
        void (firsts[i] as Promise<void>).then(() => {
          const copy = this.record(r.eventId, this.configs.get(r.webhookId) ?? { id: r.webhookId, url: r.url }, type, createdAt, r.body, true);
          return this.run(copy, 0);
        });
      });
    }
    if (previouslyHeld.length > 0) {
      void Promise.all(firsts).then(() => {
        for (const h of previouslyHeld) for (const r of h.records) void this.run(r, 0);
      });
    }
    return records;
  }

  /** Resolves with the first delivery record satisfying `predicate` (checked on every change). */
  waitFor(predicate: (d: DeliveryRecord) => boolean, timeoutMs = 5000, timerClock: Clock): Promise<DeliveryRecord> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const hit = this.deliveries.find(predicate);
        if (hit) {
          this.listeners.delete(listener);
          timer.cancel();
          resolve(hit);
          return true;
        }
        return false;
      };
      const listener = (): void => void check();
      const timer = timerClock.setTimeout(() => {
        this.listeners.delete(listener);
        const seen = this.deliveries.map((d) => `${d.type}->${d.url} attempts=${d.attempts} delivered=${d.delivered}`);
        reject(new Error(`no webhook delivery matched within ${timeoutMs} ms; deliveries: [${seen.join('; ')}]`));
      }, timeoutMs);
      this.listeners.add(listener);
      check();
    });
  }

  /** Past events as `GET /webhook-events` lists them (newest first). */
  events(type?: string): Record<string, unknown>[] {
    return this.deliveries
      .filter((d) => !d.duplicate && (type === undefined || d.type === type))
      .map((d) => ({
        id: d.eventId,
        type: d.type,
        apiVersion: 'V1',
        createdAt: d.createdAt,
        updatedAt: d.createdAt,
        body: d.body,
        testMode: d.testMode === true,
        state: d.delivered ? 'DELIVERED' : d.done ? 'FAILED' : 'PENDING',
        ...(d.error !== undefined && !d.delivered ? { error: d.error } : {}),
        url: d.url,
        webhookId: d.webhookId,
      }))
      .reverse();
  }

  /** Stops all delivery work (pending retries and in-flight requests are abandoned). */
  close(): void {
    this.closed = true;
    for (const t of this.timers) t.cancel();
    this.timers.clear();
    for (const abort of this.inFlight) abort();
    this.inFlight.clear();
    this.listeners.clear();
  }

  private takeFault(kind: WebhookFaultRule['kind'], type: string): WebhookFaultRule | undefined {
    const rule = this.faults.find((f) => f.kind === kind && (f.type === undefined || f.type === type));
    if (!rule) return undefined;
    rule.remaining--;
    if (rule.remaining <= 0) this.faults = this.faults.filter((f) => f !== rule);
    return rule;
  }

  private record(
    eventId: string,
    config: Pick<WebhookConfiguration, 'id' | 'url'>,
    type: string,
    createdAt: string,
    body: string,
    duplicate: boolean,
  ): DeliveryRecord {
    const rec: DeliveryRecord = {
      eventId,
      webhookId: config.id,
      type,
      url: config.url,
      createdAt,
      body,
      attempts: 0,
      statuses: [],
      delivered: false,
      done: false,
      duplicate,
    };
    this.deliveries.push(rec);
    this.notify();
    return rec;
  }

  private notify(): void {
    for (const l of [...this.listeners]) l();
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
  private run(rec: DeliveryRecord, initialDelayMs: number): Promise<void> {
    let firstDone!: () => void;
    const first = new Promise<void>((r) => (firstDone = r));
    void (async () => {
      const { attempts, delaysMs } = this.o.retry;
      await this.sleep(initialDelayMs);
      for (let i = 0; i < attempts; i++) {
        if (i > 0) await this.sleep(delaysMs[Math.min(i - 1, delaysMs.length - 1)] ?? 0);
        if (this.closed || !this.configs.has(rec.webhookId)) break;
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
        this.notify();
      }
      rec.done = true;
      firstDone();
      this.notify();
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
