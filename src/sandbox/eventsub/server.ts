/**
 * A local stand-in for Twitch's EventSub WebSocket server (`wss://eventsub.wss.twitch.tv/ws`) for
 * tests, benchmarks and the sandbox demo, with Twitch's rules:
 * - a connection gets `session_welcome` at once (session id, `keepalive_timeout_seconds` from the
 *   URL's query, clamped to 10-600, default 10) and `session_keepalive` whenever nothing else was
 *   sent for that long; a session without an enabled subscription when the window ends is closed
 *   with 4003 (connection unused); anything the client sends closes it with 4001;
 * - `reconnect()` sends `session_reconnect` with a reconnect URL; a connection to it takes the
 *   session over (same id, same subscriptions, its own welcome) and the old socket is closed;
 *   notifications go to the old socket until the new one is welcomed; without a new connection
 *   within 30 s the old socket is closed with 4004 and the session ends;
 * - when a session ends (the socket closed by either side or dropped), its subscriptions become
 *   `websocket_disconnected` and deliver nothing (Twitch does not replay missed events);
 * - `publish(type, event)` delivers a notification to every enabled subscription of that type whose
 *   condition the event matches (`{ duplicate: true }`: the same message id twice, as Twitch's
 *   at-least-once delivery may); `drop()` ends sockets with a close code or abruptly, `silence()`
 *   makes them go quiet without closing (a half-open connection), `revoke()` sends a revocation.
 * The subscriptions themselves (Helix `POST/GET/DELETE /eventsub/subscriptions`, the 3-socket
 * limit's 429) are ./subscriptions.ts, over the sessions this server keeps. Time is the injected
 * clock's. Nothing here reads process.env.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Clock, TimerHandle } from '../../shared/clock.js';
import { systemClock } from '../../shared/clock.js';

export type SubscriptionStatus =
  'enabled' | 'websocket_disconnected' | 'authorization_revoked' | 'user_removed' | 'version_removed';

export interface SimSubscription {
  id: string;
  type: string;
  version: string;
  condition: Record<string, string>;
  status: SubscriptionStatus;
  sessionId: string;
  clientId: string;
  /** The user whose token created it. */
  userId: string;
  cost: number;
  createdAt: string;
}

export interface SimSession {
  id: string;
  /** The socket delivering now (undefined once the session ended). */
  socket: WebSocket | undefined;
  /** A socket taking over after `reconnect()`, until its welcome is sent. */
  incoming?: WebSocket;
  keepaliveSeconds: number;
  connectedAt: string;
  ended: boolean;
  /** The user whose subscriptions it holds (the first subscription's). */
  userId?: string;
  subscriptions: SimSubscription[];
  /** Sends nothing (no keepalive either) while true. */
  silent: boolean;
  timer?: TimerHandle;
  unusedTimer?: TimerHandle;
  reconnectTimer?: TimerHandle;
}

export interface EventSubSandboxOptions {
  clock?: Clock;
  host?: string;
  port?: number;
}

export interface PublishOptions {
  /** Send the same message twice (same message id). */
  duplicate?: boolean;
  messageId?: string;
}

export class EventSubSandbox {
  url = '';
  readonly sessions = new Map<string, SimSession>();
  /** Every notification sent (message id, type, session), in order. */
  readonly sent: { messageId: string; type: string; sessionId: string }[] = [];
  /** Connections accepted so far. */
  connections = 0;
  readonly clock: Clock;
  private readonly http: Server;
  private readonly wss: WebSocketServer;
  private readonly host: string;
  private readonly handovers = new Map<string, string>();
  private readonly sessionListeners: ((s: SimSession) => void)[] = [];

  constructor(private readonly o: EventSubSandboxOptions = {}) {
    this.clock = o.clock ?? systemClock;
    this.host = o.host ?? '127.0.0.1';
    this.http = createServer((_req, res) => {
      res.writeHead(426, { 'content-type': 'text/plain; charset=utf-8', upgrade: 'websocket' });
      res.end('giftdrop sandbox EventSub: connect with a WebSocket to /ws\n');
    });
    this.wss = new WebSocketServer({ server: this.http, maxPayload: 64 * 1024 });
    this.wss.on('connection', (ws, req) => this.accept(ws, new URL(req.url ?? '/', 'ws://sandbox')));
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(this.o.port ?? 0, this.host, () => resolve());
    });
    const port = (this.http.address() as AddressInfo).port;
    this.url = `ws://${this.host.includes(':') ? `[${this.host}]` : this.host}:${port}/ws`;
  }

  /** Called with every session that starts (tests wait on it). */
  onSession(fn: (s: SimSession) => void): void {
    this.sessionListeners.push(fn);
  }

  /** Live sessions (not ended). */
  live(): SimSession[] {
    return [...this.sessions.values()].filter((s) => !s.ended);
  }

  /** Every subscription ever made (enabled or not). */
  subscriptions(): SimSubscription[] {
    return [...this.sessions.values()].flatMap((s) => s.subscriptions);
  }

  /**
   * Delivers `event` as a notification to every enabled subscription of `type` whose condition
   * fields all equal the event's (`broadcaster_user_id`, `reward.id` as `reward_id`, `user_id`).
   * Returns how many sessions it was sent to.
   */
  publish(type: string, event: Record<string, unknown>, o: PublishOptions = {}): number {
    let count = 0;
    for (const s of this.live()) {
      for (const sub of s.subscriptions) {
        if (sub.type !== type || sub.status !== 'enabled' || !matches(sub.condition, event)) continue;
        const messageId = o.messageId ?? randomUUID();
        const frame = {
          metadata: {
            message_id: messageId,
            message_type: 'notification',
            message_timestamp: this.timestamp(),
            subscription_type: sub.type,
            subscription_version: sub.version,
          },
          payload: {
            subscription: {
              id: sub.id,
              status: sub.status,
              type: sub.type,
              version: sub.version,
              cost: sub.cost,
              condition: sub.condition,
              transport: { method: 'websocket', session_id: s.id },
              created_at: sub.createdAt,
            },
            event,
          },
        };
        for (let i = 0; i < (o.duplicate ? 2 : 1); i++) {
          this.send(s, frame);
          this.sent.push({ messageId, type, sessionId: s.id });
        }
        count++;
      }
    }
    return count;
  }

  /** Sends `session_reconnect` to a session (default: every live one). */
  reconnect(sessionId?: string): void {
    for (const s of this.pick(sessionId)) {
      const token = randomUUID();
      this.handovers.set(token, s.id);
      this.send(s, {
        metadata: { message_id: randomUUID(), message_type: 'session_reconnect', message_timestamp: this.timestamp() },
        payload: {
          session: {
            id: s.id,
            status: 'reconnecting',
            keepalive_timeout_seconds: null,
            reconnect_url: `${this.url}?reconnect=${token}`,
            connected_at: s.connectedAt,
          },
        },
      });
      s.reconnectTimer?.cancel();
      s.reconnectTimer = this.clock.setTimeout(() => {
        this.handovers.delete(token);
        if (!s.ended && !s.incoming) this.end(s, 4004, 'client reconnect grace time expired');
      }, 30_000);
    }
  }

  /** Ends sessions (default every live one): with a close code, or `code` undefined: the socket just dies (no close frame). */
  drop(o: { sessionId?: string; code?: number; reason?: string } = {}): void {
    for (const s of this.pick(o.sessionId)) this.end(s, o.code, o.reason);
  }

  /** The sessions stop sending anything (no keepalive either), like a connection that died silently. */
  silence(sessionId?: string): void {
    for (const s of this.pick(sessionId)) {
      s.silent = true;
      s.timer?.cancel();
    }
  }

  /** Twitch revokes a subscription (its status), with a revocation message. */
  revoke(
    subscriptionId: string,
    status: Exclude<SubscriptionStatus, 'enabled' | 'websocket_disconnected'> = 'authorization_revoked',
  ): void {
    const sub = this.subscriptions().find((x) => x.id === subscriptionId);
    const s = sub ? this.sessions.get(sub.sessionId) : undefined;
    if (!sub || !s) return;
    sub.status = status;
    this.send(s, {
      metadata: {
        message_id: randomUUID(),
        message_type: 'revocation',
        message_timestamp: this.timestamp(),
        subscription_type: sub.type,
        subscription_version: sub.version,
      },
      payload: {
        subscription: {
          id: sub.id,
          status,
          type: sub.type,
          version: sub.version,
          cost: sub.cost,
          condition: sub.condition,
          transport: { method: 'websocket', session_id: s.id },
          created_at: sub.createdAt,
        },
      },
    });
  }

  /** A subscription was enabled on `s` (subscriptions.ts): the unused-connection timer is off. */
  subscribed(s: SimSession): void {
    s.unusedTimer?.cancel();
    s.unusedTimer = undefined;
  }

  async close(): Promise<void> {
    for (const s of this.live()) this.end(s, 1001, 'server closing');
    for (const ws of this.wss.clients) ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    await new Promise<void>((resolve) => {
      this.http.close(() => resolve());
      this.http.closeAllConnections();
    });
  }

  private pick(sessionId?: string): SimSession[] {
    return sessionId ? [this.sessions.get(sessionId)].filter((s): s is SimSession => !!s && !s.ended) : this.live();
  }

  private timestamp(): string {
    return new Date(this.clock.now()).toISOString();
  }

  private accept(ws: WebSocket, url: URL): void {
    this.connections++;
    const token = url.searchParams.get('reconnect');
    if (token !== null) return this.takeOver(ws, token);
    const asked = Number(url.searchParams.get('keepalive_timeout_seconds') ?? '10');
    const keepaliveSeconds = Math.min(600, Math.max(10, Number.isFinite(asked) ? Math.round(asked) : 10));
    const s: SimSession = {
      id: randomUUID().replace(/-/g, '_'),
      socket: ws,
      keepaliveSeconds,
      connectedAt: this.timestamp(),
      ended: false,
      subscriptions: [],
      silent: false,
    };
    this.sessions.set(s.id, s);
    this.wire(s, ws);
    this.welcome(s, ws);
    // Twitch closes a connection that has no subscription once the keepalive window is over.
    s.unusedTimer = this.clock.setTimeout(() => {
      if (!s.ended && !s.subscriptions.some((x) => x.status === 'enabled')) this.end(s, 4003, 'connection unused');
    }, keepaliveSeconds * 1000);
    for (const fn of this.sessionListeners) fn(s);
  }

  /** A connection to a reconnect URL takes its session over. */
  private takeOver(ws: WebSocket, token: string): void {
    const id = this.handovers.get(token);
    this.handovers.delete(token);
    const s = id ? this.sessions.get(id) : undefined;
    if (!s || s.ended || s.incoming) {
      ws.close(4007, 'invalid reconnect attempt');
      return;
    }
    s.incoming = ws;
    s.reconnectTimer?.cancel();
    this.wire(s, ws);
    const old = s.socket;
    s.socket = ws;
    s.incoming = undefined;
    this.welcome(s, ws);
    if (old && old.readyState === old.OPEN) old.close(1000, 'reconnected');
  }

  private wire(s: SimSession, ws: WebSocket): void {
    ws.on('message', () => {
      // Twitch accepts nothing from clients (pongs aside).
      if (s.socket === ws) this.end(s, 4001, 'sent inbound traffic');
      else ws.close(4001, 'sent inbound traffic');
    });
    ws.on('close', () => {
      if (s.socket === ws && !s.ended) this.end(s, undefined);
    });
    ws.on('error', () => undefined);
  }

  private welcome(s: SimSession, ws: WebSocket): void {
    const frame = {
      metadata: { message_id: randomUUID(), message_type: 'session_welcome', message_timestamp: this.timestamp() },
      payload: {
        session: {
          id: s.id,
          status: 'connected',
          connected_at: s.connectedAt,
          keepalive_timeout_seconds: s.keepaliveSeconds,
          reconnect_url: null,
        },
      },
    };
    ws.send(JSON.stringify(frame));
    this.keepalive(s);
  }

  private send(s: SimSession, frame: unknown): void {
    if (s.ended || s.silent || !s.socket || s.socket.readyState !== s.socket.OPEN) return;
    s.socket.send(JSON.stringify(frame));
    this.keepalive(s);
  }

  /** (Re)starts the idle timer: a keepalive when nothing else was sent for the window. */
  private keepalive(s: SimSession): void {
    s.timer?.cancel();
    if (s.ended || s.silent) return;
    s.timer = this.clock.setTimeout(() => {
      this.send(s, {
        metadata: { message_id: randomUUID(), message_type: 'session_keepalive', message_timestamp: this.timestamp() },
        payload: {},
      });
    }, s.keepaliveSeconds * 1000);
  }

  private end(s: SimSession, code: number | undefined, reason?: string): void {
    if (s.ended) return;
    s.ended = true;
    s.timer?.cancel();
    s.unusedTimer?.cancel();
    s.reconnectTimer?.cancel();
    for (const sub of s.subscriptions) if (sub.status === 'enabled') sub.status = 'websocket_disconnected';
    const ws = s.socket;
    s.socket = undefined;
    if (!ws) return;
    if (code === undefined) ws.terminate();
    else if (ws.readyState === ws.OPEN) ws.close(code, reason);
    else ws.terminate();
  }
}

/** The event carries every condition field (`reward_id` is `event.reward.id`). */
function matches(condition: Record<string, string>, event: Record<string, unknown>): boolean {
  for (const [k, v] of Object.entries(condition)) {
    // channel.chat.message's `user_id` is the user reading the chat (whose token subscribed), not a field of the event.
    if (k === 'user_id' && !('user_id' in event)) continue;
    const actual = k === 'reward_id' ? (event.reward as { id?: unknown } | undefined)?.id : event[k];
    if (actual !== v) return false;
  }
  return true;
}

export async function startEventSubSandbox(o: EventSubSandboxOptions = {}): Promise<EventSubSandbox> {
  const s = new EventSubSandbox(o);
  await s.listen();
  return s;
}
