/**
 * Webhooks of the Fourthwall sandbox: the configurations (`wcon_...`, CRUD with Fourthwall's URI
 * rules, checked in webhook-config.ts) and event emission. An emitted event becomes one signed
 * envelope per configuration whose `allowedTypes` holds its type: POST JSON `{testMode, id: 'weve_...', webhookId, shopId,
 * type, apiVersion: 'V1', createdAt, data}` with `X-Fourthwall-Hmac-SHA256` = base64(HMAC-SHA256
 * (shop webhook secret, raw body)) and, with an app key, `X-Fourthwall-Hmac-Apps-SHA256`.
 * Delivery counts only on exactly 200 within the timeout; otherwise it is retried on a schedule.
 * Delivery faults (duplicate, hold for out-of-order, delay, drop: listed but never sent) and a
 * readable delivery log with `waitFor` serve tests; `emit(..., { testMode: true })` is the
 * dashboard's "send test webhook". `events()` is what `GET /webhook-events` lists: one record per
 * event and configuration, newest first, with the documented fields (`body` = the envelope as a
 * JSON string, `state` DELIVERED / FAILED / PENDING). Timers run on the injected transport Clock. Bodies and signatures are
 * never logged. It does not decide when events happen; callers emit them.
 *
 * This file owns configurations, envelopes, delivery faults and the delivery log; sending,
 * signing and retrying are webhook-delivery.ts (WebhookDelivery), URL / body rules
 * webhook-config.ts. Their public names are re-exported from here.
 */
import type { Clock } from '../../shared/clock.js';
import type { Logger } from '../../logging/index.js';
import { ApiError } from './http.js';
import type { IdFactory } from './ids.js';
import type { WebhookConfiguration } from './types.js';
import type { UriRules } from './webhook-config.js';
import { WebhookDelivery, type DeliveryRecord, type DeliveryRetry } from './webhook-delivery.js';

export { parseWebhookBody, type UriRules } from './webhook-config.js';
export { signBody, type AttemptOutcome, type DeliveryRecord, type DeliveryRetry } from './webhook-delivery.js';

export interface WebhookFaultSpec {
  kind: 'duplicate' | 'hold' | 'delay' | 'drop';
  /** Only events of this type (default: any). */
  type?: string;
  /** How many events it applies to (default 1). */
  times?: number;
  /** `delay`: how long before the first attempt (ms). */
  delayMs?: number;
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

/** Configurations, event emission, delivery faults and the delivery log (sending: WebhookDelivery). */
export class WebhookHub {
  readonly configs = new Map<string, WebhookConfiguration>();
  readonly deliveries: DeliveryRecord[] = [];
  private readonly listeners = new Set<() => void>();
  private faults: WebhookFaultRule[] = [];
  private held: { records: DeliveryRecord[] }[] = [];
  private closed = false;
  private readonly delivery: WebhookDelivery;
  /** How `GET /webhook-events` orders its list (the API documents no order: clients must not assume one). */
  listOrder: 'newest-first' | 'oldest-first' = 'newest-first';

  constructor(private readonly o: WebhookHubOptions) {
    this.delivery = new WebhookDelivery({
      webhookSecret: o.webhookSecret,
      ...(o.appHmacKey !== undefined ? { appHmacKey: o.appHmacKey } : {}),
      retry: o.retry,
      transportClock: o.transportClock,
      logger: o.logger,
      isSubscribed: (rec) => this.configs.has(rec.webhookId),
      onChange: () => this.notify(),
    });
  }

  create(url: string, allowedTypes: string[]): WebhookConfiguration {
    const config: WebhookConfiguration = { id: this.o.ids.prefixed('wcon'), url, allowedTypes, apiVersion: 'V1' };
    this.configs.set(config.id, config);
    return config;
  }

  get(id: string): WebhookConfiguration {
    const c = this.configs.get(id);
    if (!c)
      throw new ApiError(404, 'WEBHOOK_CONFIGURATION_NOT_FOUND', { webhookConfigurationId: id, shopId: this.o.shopId });
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
    if (!['duplicate', 'hold', 'delay', 'drop'].includes(spec.kind))
      throw new RangeError('webhook fault kind must be duplicate, hold, delay or drop');
    if (spec.times !== undefined && (!Number.isInteger(spec.times) || spec.times < 1))
      throw new RangeError('times must be a positive integer');
    if (spec.kind === 'delay' && !(typeof spec.delayMs === 'number' && spec.delayMs >= 0))
      throw new RangeError('delay needs delayMs >= 0');
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
    for (const h of held) for (const r of h.records) void this.delivery.run(r, 0);
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
      for (const r of records)
        Object.assign(r, { dropped: true, done: true, error: 'not delivered (sandbox drop fault)' });
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
    const firsts = records.map((r) => this.delivery.run(r, delayMs));
    if (duplicate) {
      records.forEach((r, i) => {
        void (firsts[i] as Promise<void>).then(() => {
          const copy = this.record(
            r.eventId,
            this.configs.get(r.webhookId) ?? { id: r.webhookId, url: r.url },
            type,
            createdAt,
            r.body,
            true,
          );
          return this.delivery.run(copy, 0);
        });
      });
    }
    if (previouslyHeld.length > 0) {
      void Promise.all(firsts).then(() => {
        for (const h of previouslyHeld) for (const r of h.records) void this.delivery.run(r, 0);
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

  /** Past events as `GET /webhook-events` lists them (newest first, or `listOrder`). */
  events(type?: string): Record<string, unknown>[] {
    const list = this.deliveries
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
      }));
    return this.listOrder === 'oldest-first' ? list : list.reverse();
  }

  /** Stops all delivery work (pending retries and in-flight requests are abandoned). */
  close(): void {
    this.closed = true;
    this.delivery.close();
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
}
