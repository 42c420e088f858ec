/**
 * The local stand-in for Twitch's Helix API, served under `/helix` on the sandbox chat server's
 * HTTP port (so a loopback TWITCH_IRC_URL implies TWITCH_API_URL, like TWITCH_AUTH_URL):
 * - `GET /helix/users?id=..&login=..` (at most 100 in all) -> `{ data: [{ id, login, display_name, created_at }] }`;
 *   without parameters and with a viewer's token (the viewer login, sandbox/chat/viewer-login.ts): that viewer;
 * - `GET /helix/streams?user_id=..` -> `{ data: [{ id, user_id, user_login, type: "live", title,
 *   started_at, thumbnail_url (with {width}x{height}) }], pagination: {} }` ([] when offline);
 * - `GET /helix/channels/followers?broadcaster_id=..&user_id=..` -> `{ total, data: [...], pagination: {} }`,
 *   403 without the token scope moderator:read:followers.
 * - `POST /helix/whispers?from_user_id&to_user_id` `{ message }` -> 204 with Twitch's rules and limits
 *   (see `whisper`); `setWhisperDrop(true)` answers 204 without delivering (Twitch's silent drop);
 *   `whispers` records every accepted one.
 * - `POST /helix/chat/messages` (Send Chat Message): chat-messages.ts, a registered route (it also
 *   takes an app token from the client credentials grant).
 * Every call needs `Client-Id` and `Authorization: Bearer <the chat server's current token>`
 * (401 otherwise; Send Chat Message also takes an app token). Rate limit as Twitch's: a token bucket of `ratePerMinute` points (default 800)
 * per client id and user (the sandbox has one user token at a time, refreshed or not: so per
 * client id), refilled continuously on the injected clock, one point per call; answers carry
 * `Ratelimit-Limit`, `Ratelimit-Remaining` and `Ratelimit-Reset` (epoch seconds when the bucket is
 * full again), and an empty bucket answers 429. `latencyMs` delays every answer (real time, like a
 * network). Errors have Helix's shape `{ error, status, message }`. `setDown(true)` answers 503 to
 * everything; `failFollowLookups(userId)` answers 503 to the follow lookups of that one user, and
 * `failNextFollowedUser()` does so for whichever user's follow lookup comes next (a fault for one
 * pick when the test cannot know the picks).
 * More routes register with `route` (new sandbox features in their own files: EventSub
 * subscriptions in sandbox/eventsub/, channel points in ./channel-points.ts); they get the caller
 * (whose token, which scopes) and answer with Helix's shapes. Other users' tokens than the bot's
 * (the broadcaster's login) come from `accounts` (./accounts.ts), each with its own rate bucket.
 * Users unknown to the sandbox get a stable made-up account (created two years before the clock's
 * start), so any chatter can be looked up; tests set their own creation and follow times.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../shared/clock.js';
import type { SandboxAccounts } from './accounts.js';

/** Who made a Helix request: the token's user and scopes (an app access token: `app`, no user, no scopes). */
export interface HelixCaller {
  userId: string;
  login: string;
  scopes: readonly string[];
  clientId: string;
  /** An app access token (client credentials grant); only routes that take one accept it. */
  app?: boolean;
}

/** One request to a registered route; `reply` answers it (Helix's error shape through `fail`). */
export interface HelixRouteCall {
  method: string;
  path: string;
  query: URLSearchParams;
  caller: HelixCaller;
  /** The JSON body (undefined when none or not JSON). */
  body(): Promise<unknown>;
  reply(status: number, body?: unknown): void;
  fail(status: number, error: string, message: string): void;
}

/** A registered route: true when it answered the call. */
export type HelixRoute = (call: HelixRouteCall) => boolean;

interface SandboxHelixAuth {
  /** True for the current, unexpired access token. */
  accepts(token: string): boolean;
  readonly clientId: string;
  readonly scopes: readonly string[];
  /** The bot token's user (whispers must come from it). */
  readonly userId?: string;
  /**
   * The account a user token other than the bot's belongs to (`GET /users` without parameters
   * answers them): a claim-page viewer's (no scopes), or a device login's with its scopes and client id.
   */
  userOf?(token: string): { id: string; login: string; scopes?: readonly string[]; clientId?: string } | undefined;
  /** The application's app tokens (client credentials grant): Send Chat Message takes them. */
  readonly appTokens?: { accepts(token: string): boolean } | undefined;
}

export interface SandboxHelixOptions {
  auth: SandboxHelixAuth;
  clock: Clock;
  /** Requests per minute per client id and user (default 800, like Twitch's). */
  ratePerMinute?: number;
  /** Every account follows every channel (since a day after its creation) unless set otherwise (the demo). */
  everyoneFollows?: boolean;
  /** Delay before every answer, in real milliseconds (default 0), like a network round trip. */
  latencyMs?: number;
  /** Whispers are answered 204 but not delivered (Twitch's silent drop). Default false; see `setWhisperDrop`. */
  dropWhispers?: boolean;
  /** Other users' tokens (the broadcaster's login). */
  accounts?: SandboxAccounts;
}

/** One whisper the sandbox accepted (204); `delivered` false when it was dropped silently. */
export interface SandboxWhisper {
  from: string;
  to: string;
  message: string;
  at: number;
  delivered: boolean;
}

export interface HelixCall {
  path: string;
  status: number;
  query: string;
}

interface SimUser {
  id: string;
  login: string;
  createdAt: number;
}

interface SimStream {
  id: string;
  userId: string;
  login: string;
  title: string;
  startedAt: number;
}

const DAY_MS = 86_400_000;

export class SandboxHelix {
  readonly calls: HelixCall[] = [];
  private readonly users = new Map<string, SimUser>();
  private readonly follows = new Map<string, Map<string, number | null>>();
  private readonly streams = new Map<string, SimStream>();
  private readonly buckets = new Map<string, { points: number; at: number }>();
  private readonly failingFollows = new Set<string>();
  private failNextFollow = false;
  private readonly defaultCreatedAt: number;
  private down = false;
  private seq = 1;
  /** Whispers answered 204, in order (delivered or silently dropped). */
  readonly whispers: SandboxWhisper[] = [];
  private dropWhispers: boolean;
  private readonly whisperTimes: number[] = [];
  private readonly whisperRecipients = new Map<string, number>();
  private readonly whisperListeners: ((w: SandboxWhisper) => void)[] = [];
  private readonly routes: HelixRoute[] = [];

  constructor(private readonly o: SandboxHelixOptions) {
    this.defaultCreatedAt = o.clock.now() - 730 * DAY_MS;
    this.dropWhispers = o.dropWhispers ?? false;
  }

  /** From now on whispers are answered 204 but not delivered (true), or delivered again (false). */
  setWhisperDrop(drop: boolean): void {
    this.dropWhispers = drop;
  }

  /** Calls `fn` with every whisper answered 204 (delivered or dropped), e.g. for the demo's transcript. */
  onWhisper(fn: (w: SandboxWhisper) => void): void {
    this.whisperListeners.push(fn);
  }

  /** Whispers a user actually received. */
  whispersTo(userId: string): SandboxWhisper[] {
    return this.whispers.filter((w) => w.to === userId && w.delivered);
  }

  /** Adds or changes an account (ids are numeric strings). */
  setUser(id: string, login: string, createdAt?: number): void {
    this.users.set(id, {
      id,
      login: login.toLowerCase(),
      createdAt: createdAt ?? this.users.get(id)?.createdAt ?? this.defaultCreatedAt,
    });
  }

  /** `userId` follows `broadcasterId` since `at` (default now); `at: null` does not follow. */
  setFollow(broadcasterId: string, userId: string, at: number | null = this.o.clock.now()): void {
    const m = this.follows.get(broadcasterId) ?? new Map<string, number | null>();
    m.set(userId, at);
    this.follows.set(broadcasterId, m);
  }

  private followedAt(broadcasterId: string, userId: string): number | undefined {
    const set = this.follows.get(broadcasterId)?.get(userId);
    if (set !== undefined) return set ?? undefined;
    return this.o.everyoneFollows && userId !== broadcasterId ? this.userById(userId).createdAt + DAY_MS : undefined;
  }

  /** The broadcaster goes live (`title` optional). */
  goLive(userId: string, login: string, title = 'giftdrop sandbox stream'): void {
    this.setUser(userId, login);
    this.streams.set(userId, {
      id: String(40_000_000_000 + this.seq++),
      userId,
      login: login.toLowerCase(),
      title,
      startedAt: this.o.clock.now(),
    });
  }

  goOffline(userId: string): void {
    this.streams.delete(userId);
  }

  isLive(userId: string): boolean {
    return this.streams.has(userId);
  }

  /** While down, every call answers 503 (Helix's shape). */
  setDown(down: boolean): void {
    this.down = down;
  }

  /** Follow lookups of `userId` answer 503 until `failFollowLookups(userId, false)` (a fault for one pick). */
  failFollowLookups(userId: string, failing = true): void {
    if (failing) this.failingFollows.add(userId);
    else this.failingFollows.delete(userId);
  }

  /** The next user whose follow is looked up gets 503 for all its follow lookups (see failFollowLookups). */
  failNextFollowedUser(): void {
    this.failNextFollow = true;
  }

  /** Users whose follow lookups answer 503. */
  failingFollowUsers(): string[] {
    return [...this.failingFollows];
  }

  /** Serves more paths (see the module header), tried before the built-in ones. */
  route(r: HelixRoute): void {
    this.routes.push(r);
  }

  /** The clock the sandbox runs on (for registered routes). */
  get clock(): Clock {
    return this.o.clock;
  }

  /** Serves `/helix/*`; false for other paths. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    if (!url.pathname.startsWith('/helix/') && url.pathname !== '/helix') return false;
    const path = url.pathname.slice('/helix'.length);
    const latency = this.o.latencyMs ?? 0;
    const done = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      this.calls.push({ path, status, query: url.search });
      const send = () => {
        if (status === 204) {
          res.writeHead(204, headers);
          res.end();
          return;
        }
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      if (latency > 0) setTimeout(send, latency);
      else send();
    };
    const fail = (status: number, error: string, message: string, headers?: Record<string, string>) =>
      done(status, { error, status, message }, headers);
    if (this.down) return (fail(503, 'Service Unavailable', ''), true);
    const isWhisper = path === '/whispers' && req.method === 'POST';
    const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!req.headers['client-id']) return (fail(401, 'Unauthorized', 'Client ID is missing'), true);
    if (!token) return (fail(401, 'Unauthorized', 'OAuth token is missing'), true);
    const viewer = this.o.auth.userOf?.(token);
    // Twitch checks Client-Id against the application the token was issued to.
    if (req.headers['client-id'] !== (viewer?.clientId ?? this.o.auth.clientId))
      return (fail(401, 'Unauthorized', 'Client ID and OAuth token do not match'), true);
    const account = viewer || this.o.auth.accepts(token) ? undefined : this.o.accounts?.byToken(token);
    // An app token reaches only the registered routes (Send Chat Message takes one).
    const app =
      !viewer &&
      !account &&
      !this.o.auth.accepts(token) &&
      this.routes.length > 0 &&
      this.o.auth.appTokens?.accepts(token) === true;
    if (!viewer && !account && !app && !this.o.auth.accepts(token))
      return (fail(401, 'Unauthorized', 'Invalid OAuth token'), true);
    // Another user's token (a viewer's from the claim page's login, the broadcaster's) has its own
    // bucket, as on Twitch (per client id and user); so has the application's app token.
    const other = viewer?.id ?? account?.userId ?? (app ? 'app' : undefined);
    const limits = this.spend(other ? `${this.o.auth.clientId}:${other}` : this.o.auth.clientId);
    if (!limits.ok)
      return (
        fail(429, 'Too Many Requests', 'You have made too many requests. Please try again later.', limits.headers),
        true
      );
    const h = limits.headers;
    const q = url.searchParams;
    if (this.routes.length) {
      const caller: HelixCaller = app
        ? { userId: '', login: '', scopes: [], clientId: this.o.auth.clientId, app: true }
        : account
          ? { userId: account.userId, login: account.login, scopes: account.scopes, clientId: this.o.auth.clientId }
          : viewer
            ? {
                userId: viewer.id,
                login: viewer.login,
                scopes: viewer.scopes ?? [],
                clientId: viewer.clientId ?? this.o.auth.clientId,
              }
            : {
                userId: this.o.auth.userId ?? '',
                login: '',
                scopes: this.o.auth.scopes,
                clientId: this.o.auth.clientId,
              };
      let read: Promise<unknown> | undefined;
      const call: HelixRouteCall = {
        method: req.method ?? 'GET',
        path,
        query: q,
        caller,
        body: () => (read ??= readJson(req)),
        reply: (status, body) => done(status, body, h),
        fail: (status, error, message) => fail(status, error, message, h),
      };
      for (const r of this.routes) if (r(call)) return true;
      if (app) return (fail(401, 'Unauthorized', 'This endpoint requires a user access token'), true);
    }
    if (req.method !== 'GET' && !isWhisper) return (fail(405, 'Method Not Allowed', ''), true);
    if (isWhisper) {
      void readBody(req).then((body) => {
        const r = this.whisper(viewer !== undefined || account !== undefined, q, body);
        if (r.status === 204) done(204, undefined, h);
        else fail(r.status, r.error, r.message, h);
      });
      return true;
    }
    if (path === '/users') {
      const ids = q.getAll('id');
      const logins = q.getAll('login').map((l) => l.toLowerCase());
      // No parameters: the user the token belongs to (a viewer's token from the login flow).
      if (viewer && ids.length + logins.length === 0) {
        if (!this.users.has(viewer.id)) this.setUser(viewer.id, viewer.login);
        ids.push(viewer.id);
      }
      if (ids.length + logins.length > 100)
        return (fail(400, 'Bad Request', 'The sum of the id and login parameters may not exceed 100'), true);
      const found = [
        ...ids.map((id) => this.userById(id)),
        ...logins.map((l) => [...this.users.values()].find((u) => u.login === l)),
      ].filter((u): u is SimUser => u !== undefined);
      return (
        done(
          200,
          {
            data: found.map((u) => ({
              id: u.id,
              login: u.login,
              display_name: u.login,
              type: '',
              broadcaster_type: '',
              created_at: new Date(u.createdAt).toISOString(),
            })),
          },
          h,
        ),
        true
      );
    }
    if (path === '/streams') {
      const ids = q.getAll('user_id');
      const live = ids.map((id) => this.streams.get(id)).filter((s): s is SimStream => s !== undefined);
      return (
        done(
          200,
          {
            data: live.map((s) => ({
              id: s.id,
              user_id: s.userId,
              user_login: s.login,
              user_name: s.login,
              game_name: 'Just Chatting',
              type: 'live',
              title: s.title,
              viewer_count: 3,
              started_at: new Date(s.startedAt).toISOString(),
              thumbnail_url: `https://static-cdn.jtvnw.net/previews-ttv/live_user_${s.login}-{width}x{height}.jpg`,
            })),
            pagination: {},
          },
          h,
        ),
        true
      );
    }
    if (path === '/channels/followers') {
      const b = q.get('broadcaster_id');
      if (!b) return (fail(400, 'Bad Request', 'Missing required parameter "broadcaster_id"'), true);
      if (!this.o.auth.scopes.includes('moderator:read:followers'))
        return (fail(403, 'Forbidden', 'Missing scope: moderator:read:followers'), true);
      const user = q.get('user_id');
      if (user && this.failNextFollow) {
        this.failNextFollow = false;
        this.failingFollows.add(user);
      }
      if (user && this.failingFollows.has(user)) return (fail(503, 'Service Unavailable', '', h), true);
      const explicit = [...(this.follows.get(b)?.entries() ?? [])].filter((e): e is [string, number] => e[1] !== null);
      const at = user ? this.followedAt(b, user) : undefined;
      const rows = user ? (at !== undefined ? [[user, at] as [string, number]] : []) : explicit.slice(0, 100);
      return (
        done(
          200,
          {
            total: explicit.length,
            data: rows.map(([id, at]) => ({
              user_id: id,
              user_login: this.userById(id).login,
              user_name: this.userById(id).login,
              followed_at: new Date(at).toISOString(),
            })),
            pagination: {},
          },
          h,
        ),
        true
      );
    }
    fail(404, 'Not Found', '');
    return true;
  }

  /**
   * `POST /whispers`: Twitch's rules (scope user:manage:whispers on the sender's token, from_user_id
   * = the token's user, a non-empty message cut to 500 characters, 3 a second, 100 a minute, 40
   * distinct recipients in 24 h, 429 beyond) and its silent drop (204, not delivered).
   */
  private whisper(
    viewerToken: boolean,
    q: URLSearchParams,
    raw: string,
  ): { status: number; error: string; message: string } {
    const ok = { status: 204, error: '', message: '' };
    if (viewerToken || !this.o.auth.scopes.includes('user:manage:whispers'))
      return { status: 401, error: 'Unauthorized', message: 'Missing scope: user:manage:whispers' };
    const from = q.get('from_user_id') ?? '';
    const to = q.get('to_user_id') ?? '';
    if (!from || !to) return { status: 400, error: 'Bad Request', message: 'Missing required parameter' };
    if (this.o.auth.userId && from !== this.o.auth.userId)
      return {
        status: 401,
        error: 'Unauthorized',
        message: "The ID in from_user_id must match the user ID found in the request's OAuth token.",
      };
    if (from === to)
      return { status: 400, error: 'Bad Request', message: 'The sender and receiver cannot be the same user' };
    let message = '';
    try {
      const body = JSON.parse(raw) as { message?: unknown };
      message = typeof body.message === 'string' ? body.message : '';
    } catch {
      return { status: 400, error: 'Bad Request', message: 'Invalid JSON body' };
    }
    if (!message) return { status: 400, error: 'Bad Request', message: 'The message field must not be empty' };
    const now = this.o.clock.now();
    while (this.whisperTimes.length && now - this.whisperTimes[0]! >= 60_000) this.whisperTimes.shift();
    for (const [id, at] of this.whisperRecipients) if (now - at >= DAY_MS) this.whisperRecipients.delete(id);
    const lastSecond = this.whisperTimes.filter((t) => now - t < 1000).length;
    const newRecipient = !this.whisperRecipients.has(to);
    if (lastSecond >= 3 || this.whisperTimes.length >= 100 || (newRecipient && this.whisperRecipients.size >= 40))
      return { status: 429, error: 'Too Many Requests', message: 'You have exceeded the whisper rate limit' };
    this.whisperTimes.push(now);
    if (newRecipient) this.whisperRecipients.set(to, now);
    const w: SandboxWhisper = {
      from,
      to,
      message: [...message].slice(0, 500).join(''),
      at: now,
      delivered: !this.dropWhispers,
    };
    this.whispers.push(w);
    for (const fn of this.whisperListeners) fn(w);
    return ok;
  }

  private userById(id: string): SimUser {
    return this.users.get(id) ?? { id, login: `user${id}`, createdAt: this.defaultCreatedAt };
  }

  /** One point from the bucket of `key` (refilled at `limit` points a minute, like Twitch's). */
  private spend(key: string): { ok: boolean; headers: Record<string, string> } {
    const limit = this.o.ratePerMinute ?? 800;
    const now = this.o.clock.now();
    const b = this.buckets.get(key) ?? { points: limit, at: now };
    b.points = Math.min(limit, b.points + (Math.max(0, now - b.at) * limit) / 60_000);
    b.at = now;
    this.buckets.set(key, b);
    const ok = b.points >= 1;
    if (ok) b.points -= 1;
    const fullAt = now + ((limit - b.points) * 60_000) / limit;
    return {
      ok,
      headers: {
        'ratelimit-limit': String(limit),
        'ratelimit-remaining': String(Math.floor(b.points)),
        'ratelimit-reset': String(Math.ceil(fullAt / 1000)),
      },
    };
  }
}

/** A request's body as text (at most 64 KiB: a longer one is cut off and the request destroyed). */
function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
      if (body.length > 64 * 1024) req.destroy();
    });
    req.on('end', () => resolve(body));
    req.on('error', () => resolve(body));
    req.on('close', () => resolve(body));
  });
}

/** A request's JSON body (undefined when empty or not JSON). */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const body = await readBody(req);
  try {
    return body ? (JSON.parse(body) as unknown) : undefined;
  } catch {
    return undefined;
  }
}
