/**
 * The local stand-in for Twitch's Helix API, served under `/helix` on the sandbox chat server's
 * HTTP port (so a loopback TWITCH_IRC_URL implies TWITCH_API_URL, like TWITCH_AUTH_URL):
 * - `GET /helix/users?id=..&login=..` (at most 100 in all) -> `{ data: [{ id, login, display_name, created_at }] }`;
 * - `GET /helix/streams?user_id=..` -> `{ data: [{ id, user_id, user_login, type: "live", title,
 *   started_at, thumbnail_url (with {width}x{height}) }], pagination: {} }` ([] when offline);
 * - `GET /helix/channels/followers?broadcaster_id=..&user_id=..` -> `{ total, data: [...], pagination: {} }`,
 *   403 without the token scope moderator:read:followers.
 * Every call needs `Client-Id` and `Authorization: Bearer <the chat server's current token>`
 * (401 otherwise). Rate limit as Twitch's: a token bucket of `ratePerMinute` points (default 800)
 * per client id and user (the sandbox has one user token at a time, refreshed or not: so per
 * client id), refilled continuously on the injected clock, one point per call; answers carry
 * `Ratelimit-Limit`, `Ratelimit-Remaining` and `Ratelimit-Reset` (epoch seconds when the bucket is
 * full again), and an empty bucket answers 429. `latencyMs` delays every answer (real time, like a
 * network). Errors have Helix's shape `{ error, status, message }`. `setDown(true)` answers 503 to
 * everything; `failFollowLookups(userId)` answers 503 to the follow lookups of that one user, and
 * `failNextFollowedUser()` does so for whichever user's follow lookup comes next (a fault for one
 * pick when the test cannot know the picks).
 * Users unknown to the sandbox get a stable made-up account (created two years before the clock's
 * start), so any chatter can be looked up; tests set their own creation and follow times.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../shared/clock.js';

export interface SandboxHelixAuth {
  /** True for the current, unexpired access token. */
  accepts(token: string): boolean;
  readonly clientId: string;
  readonly scopes: readonly string[];
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

  constructor(private readonly o: SandboxHelixOptions) {
    this.defaultCreatedAt = o.clock.now() - 730 * DAY_MS;
  }

  /** Adds or changes an account (ids are numeric strings). */
  setUser(id: string, login: string, createdAt?: number): void {
    this.users.set(id, { id, login: login.toLowerCase(), createdAt: createdAt ?? this.users.get(id)?.createdAt ?? this.defaultCreatedAt });
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
    this.streams.set(userId, { id: String(40_000_000_000 + this.seq++), userId, login: login.toLowerCase(), title, startedAt: this.o.clock.now() });
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

  /** Serves `/helix/*`; false for other paths. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    if (!url.pathname.startsWith('/helix/') && url.pathname !== '/helix') return false;
    const path = url.pathname.slice('/helix'.length);
    const latency = this.o.latencyMs ?? 0;
    const done = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      this.calls.push({ path, status, query: url.search });
      const send = () => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      if (latency > 0) setTimeout(send, latency);
      else send();
    };
    const fail = (status: number, error: string, message: string, headers?: Record<string, string>) => done(status, { error, status, message }, headers);
    if (this.down) return fail(503, 'Service Unavailable', ''), true;
    if (req.method !== 'GET') return fail(405, 'Method Not Allowed', ''), true;
    const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!req.headers['client-id']) return fail(401, 'Unauthorized', 'Client ID is missing'), true;
    if (!token) return fail(401, 'Unauthorized', 'OAuth token is missing'), true;
    if (req.headers['client-id'] !== this.o.auth.clientId) return fail(401, 'Unauthorized', 'Client ID and OAuth token do not match'), true;
    if (!this.o.auth.accepts(token)) return fail(401, 'Unauthorized', 'Invalid OAuth token'), true;
    const limits = this.spend(this.o.auth.clientId);
    if (!limits.ok) return fail(429, 'Too Many Requests', 'You have made too many requests. Please try again later.', limits.headers), true;
    const h = limits.headers;
    const q = url.searchParams;
    if (path === '/users') {
      const ids = q.getAll('id');
      const logins = q.getAll('login').map((l) => l.toLowerCase());
      if (ids.length + logins.length > 100) return fail(400, 'Bad Request', 'The sum of the id and login parameters may not exceed 100'), true;
      const found = [...ids.map((id) => this.userById(id)), ...logins.map((l) => [...this.users.values()].find((u) => u.login === l))].filter(
        (u): u is SimUser => u !== undefined,
      );
      return done(200, { data: found.map((u) => ({ id: u.id, login: u.login, display_name: u.login, type: '', broadcaster_type: '', created_at: new Date(u.createdAt).toISOString() })) }, h), true;
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
      if (!b) return fail(400, 'Bad Request', 'Missing required parameter "broadcaster_id"'), true;
      if (!this.o.auth.scopes.includes('moderator:read:followers'))
        return fail(403, 'Forbidden', 'Missing scope: moderator:read:followers'), true;
      const user = q.get('user_id');
      if (user && this.failNextFollow) {
        this.failNextFollow = false;
        this.failingFollows.add(user);
      }
      if (user && this.failingFollows.has(user)) return fail(503, 'Service Unavailable', '', h), true;
      const explicit = [...(this.follows.get(b)?.entries() ?? [])].filter((e): e is [string, number] => e[1] !== null);
      const at = user ? this.followedAt(b, user) : undefined;
      const rows = user ? (at !== undefined ? [[user, at] as [string, number]] : []) : explicit.slice(0, 100);
      return (
        done(
          200,
          {
            total: explicit.length,
            data: rows.map(([id, at]) => ({ user_id: id, user_login: this.userById(id).login, user_name: this.userById(id).login, followed_at: new Date(at).toISOString() })),
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
