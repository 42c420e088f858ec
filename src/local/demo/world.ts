/**
 * The demo's handle on a running local stack: simulated viewers (with their roles, for badges),
 * speaking in chat, simulated gift purchases, and waits on what really happens (engine events,
 * the chat transcript, the sandbox shop state) with a timeout and an abort signal (Ctrl+C).
 *
 * Contract: waits never poll the engine on a timer; they listen to its events (chat predicates
 * use the chat server's own waitFor). `pause` only spaces lines for readability. Every wait and
 * pause ends as soon as the signal aborts, rejecting with DemoAborted.
 * Does not: print narration (the script does), or own the stack's lifetime.
 */
import type { GiveawayEventMap } from '../../giveaway/context.js';
import type { DrawRecord } from '../../giveaway/model.js';
import type { Clock } from '../../shared/clock.js';
import { GiftdropError } from '../../shared/errors.js';
import type { InjectExtra, SimViewer, SimViewerOptions, TranscriptEntry } from '../../sandbox/chat/index.js';
import type { LocalStack } from '../local-stack.js';

/** The demo was stopped (Ctrl+C) while it waited. */
export class DemoAborted extends GiftdropError {
  constructor() {
    super('DEMO_ABORTED', 'the demo was stopped');
  }
}

/** A wait that did not happen in time. */
export class DemoTimeout extends GiftdropError {
  constructor(what: string, ms: number) {
    super('DEMO_TIMEOUT', `${what} did not happen within ${Math.round(ms / 1000)} s`);
  }
}

/** How a draw ended. */
export interface DrawOutcome {
  status: 'finished' | 'failed' | 'cancelled';
  record: DrawRecord;
}

/** A started wait: its result, and a way to stop listening when it is no longer needed. */
export interface PendingWait<T> {
  promise: Promise<T>;
  cancel(): void;
}

export interface DemoWorldOptions {
  stack: LocalStack;
  clock: Clock;
  signal: AbortSignal;
}

type EngineEvent = keyof GiveawayEventMap;

function badgeOf(v: SimViewer): string | undefined {
  const r = v.roles;
  const parts: string[] = [];
  if (r.moderator) parts.push('mod');
  if (r.vip) parts.push('vip');
  if (r.subscriber) parts.push(r.subMonths > 1 ? `sub ${r.subMonths} months` : 'sub');
  if (r.firstMessage) parts.push('first message');
  return parts.length ? parts.join(', ') : undefined;
}

export class DemoWorld {
  readonly stack: LocalStack;
  private readonly clock: Clock;
  private readonly signal: AbortSignal;
  private readonly viewers = new Map<string, SimViewer>();
  /** Viewers of Shared Chat partner channels the demo made speak: their login -> the partner's. */
  private readonly partnerViewers = new Map<string, string>();
  private generated = 0;

  constructor(o: DemoWorldOptions) {
    this.stack = o.stack;
    this.clock = o.clock;
    this.signal = o.signal;
  }

  /** A simulated viewer; the roles given the first time stick to the login. */
  viewer(login: string, roles?: SimViewerOptions): SimViewer {
    const key = login.toLowerCase();
    const known = this.viewers.get(key);
    if (known && !roles) return known;
    const v = this.stack.chatServer.viewer(key, roles);
    this.viewers.set(key, v);
    return v;
  }

  /** The login of a viewer the demo created, by user id. */
  loginOf(userId: string): string | undefined {
    for (const v of this.viewers.values()) if (v.userId === userId) return v.login;
    return undefined;
  }

  /** Badge text for a login the demo created (e.g. `mod`, `sub 14 months`). */
  badge(login: string): string | undefined {
    const partner = this.partnerViewers.get(login.toLowerCase());
    if (partner) return `Shared Chat, from #${partner}`;
    const v = this.viewers.get(login.toLowerCase());
    return v ? badgeOf(v) : undefined;
  }

  /**
   * A viewer of partner channel `partner` says `text` in this channel's chat during Shared Chat,
   * as Twitch delivers it (the session starts with that partner first when it is not in one).
   * Returns whether the session (or this partner) just joined.
   */
  sharedSay(partner: string, login: string, text: string): boolean {
    const shared = this.stack.chatServer.sharedChat;
    const joined = !shared.partners().some((p) => p.login === partner);
    if (joined) shared.begin([partner]);
    const v = shared.viewer(partner, login);
    this.partnerViewers.set(v.login, partner);
    shared.say(v, text);
    return joined;
  }

  /** Ends the Shared Chat session; false when none runs. */
  endShared(): boolean {
    const shared = this.stack.chatServer.sharedChat;
    if (!shared.active) return false;
    shared.end();
    return true;
  }

  /** A viewer says `text` in chat. */
  say(login: string, text: string, extra?: InjectExtra): void {
    this.stack.chatServer.inject(this.viewer(login), text, extra);
  }

  /** The broadcaster says `text` in chat. */
  broadcast(text: string): void {
    this.stack.chatServer.inject(this.stack.chatServer.broadcaster, text);
  }

  /** A new simulated viewer login (`viewer_1`, `viewer_2`, ... never reused in this run). */
  freshViewer(): string {
    for (;;) {
      this.generated += 1;
      const login = `viewer_${this.generated}`;
      if (!this.viewers.has(login)) {
        this.viewer(login);
        return login;
      }
    }
  }

  /** The demo clock's time (ms since the epoch). */
  now(): number {
    return this.clock.now();
  }

  /** Resolves once no prize of the draws `drawIds` waits any more (on the delivery tracker's events), or rejects after `timeoutMs`. */
  async prizesRedeemed(drawIds: ReadonlySet<string>, timeoutMs: number): Promise<void> {
    const tracker = this.stack.bot.delivery;
    if (this.signal.aborted) throw new DemoAborted();
    await new Promise<void>((resolve, reject) => {
      let done = false;
      const finish = (err?: Error) => {
        if (done) return;
        done = true;
        timer.cancel();
        tracker.off('changed', check);
        this.signal.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve();
      };
      const check = () =>
        void tracker.waiting().then(
          (list) => !list.some((p) => drawIds.has(p.drawId)) && finish(),
          (err: unknown) => finish(err as Error),
        );
      const onAbort = () => finish(new DemoAborted());
      const timer = this.clock.setTimeout(() => finish(new DemoTimeout('every prize redeemed', timeoutMs)), timeoutMs);
      this.signal.addEventListener('abort', onAbort, { once: true });
      tracker.on('changed', check);
      check();
    });
  }

  /** Resolves after `ms` (spacing only), or rejects with DemoAborted when stopped. */
  pause(ms: number): Promise<void> {
    if (this.signal.aborted) return Promise.reject(new DemoAborted());
    if (ms <= 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        timer.cancel();
        reject(new DemoAborted());
      };
      const timer = this.clock.setTimeout(() => {
        this.signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      this.signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Starts waiting for the first engine `event` whose record passes `test`. */
  nextEngineEvent(
    event: EngineEvent,
    test: (r: DrawRecord) => boolean,
    timeoutMs: number,
    what: string,
  ): PendingWait<DrawRecord> {
    return this.waitAny([event], test, timeoutMs, what, (_e, r) => r);
  }

  /** Starts waiting for the draw `id` to finish, fail or be cancelled. */
  drawEnd(id: string, timeoutMs: number): PendingWait<DrawOutcome> {
    return this.waitAny(
      ['draw-finished', 'draw-failed', 'draw-cancelled'],
      (r) => r.id === id,
      timeoutMs,
      `the end of draw ${id}`,
      (e, record) => ({
        status: e === 'draw-finished' ? 'finished' : e === 'draw-failed' ? 'failed' : 'cancelled',
        record,
      }),
    );
  }

  private waitAny<T>(
    events: EngineEvent[],
    test: (r: DrawRecord) => boolean,
    timeoutMs: number,
    what: string,
    map: (event: EngineEvent, r: DrawRecord) => T,
  ): PendingWait<T> {
    const emitter = this.stack.bot.engine.events;
    const listeners: [EngineEvent, (r: DrawRecord) => void][] = [];
    let done = false;
    let cleanup = (): void => undefined;
    const promise = new Promise<T>((resolve, reject) => {
      const timer = this.clock.setTimeout(() => finish(new DemoTimeout(what, timeoutMs)), timeoutMs);
      const onAbort = (): void => finish(new DemoAborted());
      cleanup = () => {
        done = true;
        timer.cancel();
        this.signal.removeEventListener('abort', onAbort);
        for (const [e, fn] of listeners) emitter.off(e, fn);
      };
      const finish = (err?: Error, value?: T): void => {
        if (done) return;
        cleanup();
        if (err) reject(err);
        else resolve(value as T);
      };
      for (const e of events) {
        const fn = (r: DrawRecord): void => {
          if (test(r)) finish(undefined, map(e, r));
        };
        listeners.push([e, fn]);
        emitter.on(e, fn);
      }
      if (this.signal.aborted) onAbort();
      else this.signal.addEventListener('abort', onAbort, { once: true });
    });
    promise.catch(() => undefined);
    return { promise, cancel: () => cleanup() };
  }

  /** Resolves once `predicate` holds (checked on every chat line and regularly), or rejects. */
  async until(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (this.signal.aborted) throw new DemoAborted();
    let onAbort = (): void => undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new DemoAborted());
      this.signal.addEventListener('abort', onAbort, { once: true });
    });
    aborted.catch(() => undefined);
    try {
      await Promise.race([
        this.stack.chatServer.waitFor(() => this.signal.aborted || predicate(), timeoutMs, what),
        aborted,
      ]);
    } catch (err) {
      if (err instanceof DemoAborted) throw err;
      throw new DemoTimeout(what, timeoutMs);
    } finally {
      this.signal.removeEventListener('abort', onAbort);
    }
    if (this.signal.aborted) throw new DemoAborted();
  }

  /**
   * A viewer redeems the bot's channel-point reward (the sandbox Twitch); resolves with how the bot
   * settled it once it did: FULFILLED (entered) or CANCELED (points refunded).
   */
  async redeem(
    login: string,
    timeoutMs: number,
    o: { waitOpen?: boolean } = {},
  ): Promise<'FULFILLED' | 'CANCELED' | 'paused'> {
    const cp = this.stack.bot.twitchEvents.channelPoints;
    const points = this.stack.twitch.channelPoints;
    if (o.waitOpen !== false)
      await this.until(
        () => cp?.rewardId !== undefined && points.rewards.get(cp.rewardId)?.isPaused === false,
        timeoutMs,
        'the channel-point reward open',
      );
    const v = this.viewer(login);
    const r = cp?.rewardId
      ? points.redeem(cp.rewardId, { id: v.userId, login: v.login, displayName: v.displayName })
      : 'no-such-reward';
    if (r === 'paused') return 'paused';
    if (typeof r === 'string') throw new GiftdropError('DEMO_REDEEM', `Twitch refused the redemption (${r})`);
    await this.until(
      () => points.redemptions.get(r.id)?.status !== 'UNFULFILLED',
      timeoutMs,
      `${login}'s redemption settled`,
    );
    return points.redemptions.get(r.id)!.status as 'FULFILLED' | 'CANCELED';
  }

  /** Bot lines delivered in chat after transcript position `from`. */
  botLinesSince(from: number): TranscriptEntry[] {
    return this.stack.chatServer.transcript.slice(from).filter((e) => e.kind === 'bot');
  }

  /** The current length of the chat transcript (a position for botLinesSince). */
  mark(): number {
    return this.stack.chatServer.transcript.length;
  }

  /** Whether the sandbox shop shows the stream as live. */
  get live(): boolean {
    return this.stack.fourthwall.state.live;
  }

  /**
   * Finds a product of the sandbox shop by id, slug or (part of its) name; undefined when none
   * or several match.
   */
  findProduct(query: string): { id: string; name: string } | undefined {
    const q = query.trim().toLowerCase();
    const all = [...this.stack.fourthwall.state.products.values()];
    const exact = all.filter(
      (p) => p.id.toLowerCase() === q || p.slug.toLowerCase() === q || p.name.toLowerCase() === q,
    );
    const pool = exact.length
      ? exact
      : all.filter((p) => p.name.toLowerCase().includes(q) || p.slug.toLowerCase().includes(q));
    return pool.length === 1 ? { id: pool[0]!.id, name: pool[0]!.name } : undefined;
  }

  /** Names of the shop's products (for hints). */
  productNames(): string[] {
    return [...this.stack.fourthwall.state.products.values()].map((p) => p.name);
  }

  /** A supporter places a paid order in the sandbox shop (Fourthwall sends ORDER_PLACED); returns the product name. */
  order(input: { productId?: string; username: string }): string {
    const o = this.stack.fourthwall.control.shop.placeOrder({
      username: input.username,
      ...(input.productId ? { product: input.productId } : {}),
    });
    return o.offers[0]?.name ?? 'a product';
  }

  /** A supporter buys `quantity` gifts in the sandbox shop; returns the draw id Fourthwall opened. */
  gift(input: { quantity: number; username: string; message?: string; productId?: string; durationSeconds: number }): {
    drawId: string;
    offer: string;
  } {
    const { purchase, draw } = this.stack.fourthwall.control.simulateGiftPurchase(input);
    const offer = (purchase['offer'] as { name?: string } | undefined)?.name ?? 'a product';
    return { drawId: String(draw['id']), offer };
  }
}
