/**
 * A small client for Twitch's Helix API (`TWITCH_API_URL`, default https://api.twitch.tv/helix):
 * `GET /users`, `GET /streams`, `GET /channels/followers`, and any other call through `request`
 * (GET, POST, PATCH, DELETE with a JSON body: EventSub subscriptions, channel points), with one
 * account's user token (`Authorization: Bearer`, `Client-Id: TWITCH_CLIENT_ID`). Twitch counts
 * its rate limit per client id and user, so each account's token gets its own client (and bucket).
 * The undici Agent is shared with the auth client (`TwitchAuthClient.dispatcher`) when given.
 *
 * Contract:
 * - one rate budget for the whole client, read from `Ratelimit-Remaining` / `-Reset` on every
 *   answer, each request taking its point as it is sent, so concurrent callers never overspend it
 *   (helix-bucket.ts; at most HELIX_CONCURRENCY requests at once, the background stream poll last);
 * - one deadline per call holds every wait, retry and refresh (`call`, the only retry loop for
 *   Helix: the stream watch and the account lookups do not retry); every method is retried the
 *   same way, POST included (a caller whose POST must not act twice reads the repeat's answer, or
 *   asks for `once`, a chat line: see `call`);
 * - answers are checked with zod at the edge; errors are HelixError naming the method and path
 *   (never the query, a token or a body), with Twitch's status and message for the caller to judge.
 */
import { LazyPool, undici } from '../http-client/undici.js';
import { z } from 'zod';
import type { Logger } from '../logging/index.js';
import { systemClock, type Clock, type TimerHandle } from '../shared/clock.js';
import { GiftdropError } from '../shared/errors.js';
import { jsonOrUndefined } from '../http-client/json.js';
import { backoffDelay, sleep, type Backoff } from '../shared/retry.js';
import PQueue from 'p-queue';
import { HelixBucket } from './helix-bucket.js';

export class HelixError extends GiftdropError {
  readonly status: number | undefined;
  readonly retryable: boolean;
  /** Twitch's own `message` in the error body, when it sent one (what callers match on, e.g. "websocket transports limit exceeded"). */
  readonly twitchMessage: string | undefined;
  constructor(
    code: string,
    message: string,
    o: { status?: number; retryable: boolean; cause?: unknown; twitchMessage?: string | undefined },
  ) {
    super(code, message, o.cause !== undefined ? { cause: o.cause } : undefined);
    this.status = o.status;
    this.retryable = o.retryable;
    this.twitchMessage = o.twitchMessage;
  }
}

export type HelixMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** The token the client sends; ChatToken (token.ts) is one. */
export interface HelixTokenSource {
  current(): string;
  canRefresh(): boolean;
  refresh(reason: string): Promise<void>;
}

const UserSchema = z.object({
  id: z.string(),
  login: z.string(),
  display_name: z.string().optional(),
  created_at: z.string(),
});
const UsersSchema = z.object({ data: z.array(UserSchema) });
const StreamSchema = z.object({
  id: z.string(),
  user_id: z.string(),
  user_login: z.string(),
  type: z.string(),
  title: z.string().optional(),
  started_at: z.string().optional(),
  thumbnail_url: z.string(),
});
const StreamsSchema = z.object({ data: z.array(StreamSchema) });
const FollowersSchema = z.object({
  total: z.number().int().nonnegative(),
  data: z.array(z.object({ user_id: z.string(), user_login: z.string().optional(), followed_at: z.string() })),
});
const HelixErrorBody = z.object({
  error: z.string().optional(),
  status: z.number().optional(),
  message: z.string().optional(),
});

export interface HelixUser {
  id: string;
  login: string;
  /** ms since the epoch */
  createdAt: number;
}

export interface HelixStream {
  userId: string;
  login: string;
  title?: string;
  startedAt?: number;
  /** With `{width}` and `{height}` still in it, as Twitch sends it. */
  thumbnailTemplate: string;
}

export interface HelixClientOptions {
  apiUrl: string;
  clientId: string;
  token: HelixTokenSource;
  logger: Logger;
  clock?: Clock;
  dispatcher?: LazyPool;
  /** Per-request timeout (default 10 000 ms). */
  timeoutMs?: number;
  /** Deadline of one call including retries and rate-limit waits (default 20 000 ms). */
  deadlineMs?: number;
  /** Backoff between retries of a failed request (default about 500 ms then 1 s, 2 retries; shared/retry.ts). */
  retry?: Backoff;
  /** The variable that holds this client's token, named in a refusal (default TWITCH_TOKEN). */
  tokenName?: string;
}

/** The stream's thumbnail with the size filled in. */
export function fillThumbnail(template: string, width = 1280, height = 720): string {
  return template.replace('{width}', String(width)).replace('{height}', String(height));
}

/** Helix's default retry: about 500 ms, then about 1 s (jittered), then the error. */
const HELIX_RETRY: Backoff = { baseMs: 500, maxMs: 2000, retries: 2 };
/** Helix requests in flight at once (the account checks of a close come in batches). */
const HELIX_CONCURRENCY = 8;
/** p-queue priority: the stream poll (background) after everything else. */
const BACKGROUND_PATHS: ReadonlySet<string> = new Set(['/streams']);

export class HelixClient {
  readonly apiUrl: string;
  private readonly o: HelixClientOptions;
  private readonly clock: Clock;
  private readonly dispatcher: LazyPool;
  private readonly ownsDispatcher: boolean;
  private readonly log: Logger;
  /** The point bucket (helix-bucket.ts), shared by every caller. */
  private readonly bucket = new HelixBucket();
  /** Runs the requests: at most HELIX_CONCURRENCY at once, the stream poll after the account checks. */
  private readonly queue = new PQueue({ concurrency: HELIX_CONCURRENCY });
  private requests = 0;
  /** Requests sent and not answered yet (their points are not in the last answer's count). */
  private inflight = 0;

  constructor(o: HelixClientOptions) {
    this.o = o;
    this.apiUrl = o.apiUrl.replace(/\/+$/, '');
    this.clock = o.clock ?? systemClock;
    this.ownsDispatcher = !o.dispatcher;
    this.dispatcher = o.dispatcher ?? new LazyPool({ keepAliveTimeout: 4_000 });
    this.log = o.logger.child({ module: 'twitch.helix' });
  }

  /** The shared rate budget as last counted (points left, bucket size); undefined before the first answer. */
  budget(): { remaining: number; limit: number } | undefined {
    return this.bucket.counted();
  }

  /** Requests sent so far (retries included). */
  requestCount(): number {
    return this.requests;
  }

  /**
   * `GET /users?id=..` for up to 100 ids per call (more are split). Unknown ids are simply absent.
   * `until`: a deadline (on the clock) earlier than the call's own.
   */
  async users(ids: readonly string[], until?: number): Promise<HelixUser[]> {
    const out: HelixUser[] = [];
    for (let i = 0; i < ids.length; i += 100) {
      const q = new URLSearchParams();
      for (const id of ids.slice(i, i + 100)) q.append('id', id);
      const body = this.parse(UsersSchema, await this.get('/users', q, until), '/users');
      for (const u of body.data) out.push({ id: u.id, login: u.login, createdAt: Date.parse(u.created_at) });
    }
    return out;
  }

  /** `GET /users?login=..` for one login. */
  async userByLogin(login: string): Promise<HelixUser | undefined> {
    const body = this.parse(UsersSchema, await this.get('/users', new URLSearchParams({ login })), '/users');
    const u = body.data[0];
    return u ? { id: u.id, login: u.login, createdAt: Date.parse(u.created_at) } : undefined;
  }

  /** `GET /streams?user_id=..`: the live stream of that broadcaster, or undefined when offline. */
  async stream(userId: string): Promise<HelixStream | undefined> {
    const body = this.parse(
      StreamsSchema,
      await this.get('/streams', new URLSearchParams({ user_id: userId, type: 'live' })),
      '/streams',
    );
    const s = body.data.find((d) => d.user_id === userId && d.type === 'live');
    if (!s) return undefined;
    return {
      userId: s.user_id,
      login: s.user_login,
      thumbnailTemplate: s.thumbnail_url,
      ...(s.title !== undefined ? { title: s.title } : {}),
      ...(s.started_at ? { startedAt: Date.parse(s.started_at) } : {}),
    };
  }

  /** `GET /channels/followers?broadcaster_id&user_id`: when `userId` followed, or undefined. Needs moderator:read:followers. */
  async followedAt(broadcasterId: string, userId: string, until?: number): Promise<number | undefined> {
    const q = new URLSearchParams({ broadcaster_id: broadcasterId, user_id: userId });
    const body = this.parse(FollowersSchema, await this.get('/channels/followers', q, until), '/channels/followers');
    const f = body.data.find((d) => d.user_id === userId);
    return f ? Date.parse(f.followed_at) : undefined;
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private parse<T>(schema: z.ZodType<T>, body: unknown, path: string, method: HelixMethod = 'GET'): T {
    const r = schema.safeParse(body);
    if (!r.success)
      throw new HelixError('TWITCH_API_BAD_BODY', `Twitch API answered an unexpected body (${method} ${path})`, {
        retryable: false,
      });
    return r.data;
  }

  /**
   * Any Helix call, with the retry, refresh and rate-limit rules of `call`: `query`
   * in the URL, `body` sent as JSON. Resolves with the answer's JSON body (undefined for 204),
   * checked with `schema` when given; throws HelixError otherwise.
   */
  async request<T = unknown>(
    method: HelixMethod,
    path: string,
    o: { query?: URLSearchParams; body?: unknown; until?: number; schema?: z.ZodType<T>; once?: boolean } = {},
  ): Promise<T> {
    const body = await this.call(method, path, o.query ?? new URLSearchParams(), o.body, o.until, o.once);
    return o.schema ? this.parse(o.schema, body, path, method) : (body as T);
  }

  private sleep(ms: number): Promise<void> {
    return sleep(this.clock, ms);
  }

  /** The wait before retry `failures` (1-based), or undefined when none is left or it would pass the deadline. */
  private retryDelay(failures: number, leftMs: number): number | undefined {
    const policy = this.o.retry ?? HELIX_RETRY;
    if (failures > (policy.retries ?? Infinity)) return undefined;
    const delay = backoffDelay(policy, failures);
    return delay < leftMs ? delay : undefined;
  }

  /**
   * One GET with the retry, refresh and rate-limit rules of `call`.
   */
  private get(path: string, query: URLSearchParams, until?: number): Promise<unknown> {
    return this.call('GET', path, query, undefined, until);
  }

  /**
   * The one retry loop of Helix calls. One deadline (`deadlineMs`, or the caller's earlier `until`)
   * holds everything, on the injected clock: rate-limit waits, backoff, a token refresh and each
   * attempt's timeout (cut to what is left).
   * - At 0 points remaining, waiting calls take the points as they come back, one after another
   *   (Twitch's bucket refills evenly until `Ratelimit-Reset`); a 429 is retried the same way, at
   *   most 3 times; a 429 while points are left is another limit (EventSub's socket and cost
   *   limits), thrown at once (TWITCH_API_LIMIT, with Twitch's message).
   * - A 401 refreshes the token once (when refresh is configured) and repeats the call.
   * - Network errors, timeouts and 5xx are retried with short backoff (shared/retry.ts) within the
   *   deadline, then thrown as HelixError with `retryable: true` (TWITCH_API_UNAVAILABLE).
   * - A body zod refuses is TWITCH_API_BAD_BODY; any other answer than 2xx, 401, 429 or 5xx is a
   *   HelixError with its status (the caller decides what a 400, 403, 404 or 409 means).
   * - With `once` (a chat line) a request that may have reached Twitch (a network error, a timeout,
   *   a 5xx) is never sent again but thrown at once (TWITCH_API_UNAVAILABLE, the network error as its
   *   cause); the repeats after a 401 refresh or a 429 wait stay (Twitch certainly did not act).
   */
  private async call(
    method: HelixMethod,
    path: string,
    query: URLSearchParams,
    payload: unknown,
    until?: number,
    once = false,
  ): Promise<unknown> {
    const what = `${method} ${path}`;
    const own = this.clock.now() + (this.o.deadlineMs ?? 20_000);
    const deadline = until !== undefined ? Math.min(own, until) : own;
    const left = () => deadline - this.clock.now();
    let failures = 0;
    let limited = 0;
    let refreshed = false;
    let slotted = false; // this attempt already waited for its point (after a 429)
    for (;;) {
      if (!slotted && this.bucket.exhausted(this.clock.now())) {
        const wait = this.bucket.reserve(this.clock.now(), left());
        if (wait === undefined)
          throw new HelixError(
            'TWITCH_API_RATE_LIMITED',
            `Twitch API rate limit reached; resets after the deadline (${what})`,
            { status: 429, retryable: true },
          );
        this.log.debug({ path, waitMs: wait }, 'Helix rate limit: waiting for a point');
        await this.sleep(wait);
      }
      slotted = false;
      let status: number;
      let body: unknown;
      try {
        const priority = BACKGROUND_PATHS.has(path) ? 0 : 1;
        ({ status, body } = await this.queue.add(() => this.send(method, path, query, payload, left()), { priority }));
      } catch (err) {
        const delay = once ? undefined : this.retryDelay(++failures, left());
        if (delay === undefined) {
          const code = (err as { code?: string }).code ?? (err as Error).name;
          throw new HelixError(
            'TWITCH_API_UNAVAILABLE',
            `could not reach the Twitch API at ${this.apiUrl} (${code}) (${what})`,
            { retryable: true, cause: err },
          );
        }
        await this.sleep(delay);
        continue;
      }
      if (status >= 200 && status < 300) return body;
      const message = HelixErrorBody.safeParse(body).data?.message;
      if (status === 401 && !refreshed && this.o.token.canRefresh()) {
        refreshed = true;
        this.log.warn({ path }, 'Twitch API refused the token (401); refreshing it');
        await this.beforeDeadline(this.o.token.refresh('refused by the Twitch API'), left(), what);
        continue;
      }
      if (status === 429 && this.bucket.counted() !== undefined && !this.bucket.exhausted(this.clock.now())) {
        // Points are left, so this 429 is another limit (EventSub's "websocket transports limit
        // exceeded", a subscription cost): waiting for a point cannot help, the caller decides.
        throw new HelixError('TWITCH_API_LIMIT', `Twitch API refused: ${message ?? 'too many requests'} (${what})`, {
          status,
          retryable: false,
          twitchMessage: message,
        });
      }
      if (status === 429) {
        const wait = limited < 3 ? this.bucket.reserve(this.clock.now(), left()) : undefined;
        if (wait !== undefined) {
          limited++;
          await this.sleep(wait);
          slotted = true;
          continue;
        }
        throw new HelixError(
          'TWITCH_API_RATE_LIMITED',
          `Twitch API rate limit reached${message ? ` (${message})` : ''} (${what})`,
          { status, retryable: true },
        );
      }
      if (status >= 500) {
        const delay = once ? undefined : this.retryDelay(++failures, left());
        if (delay !== undefined) {
          await this.sleep(delay);
          continue;
        }
        throw new HelixError('TWITCH_API_UNAVAILABLE', `Twitch API answered HTTP ${status} (${what})`, {
          status,
          retryable: true,
        });
      }
      if (status === 401)
        throw new HelixError(
          'TWITCH_API_AUTH',
          `Twitch API refused ${this.o.tokenName ?? 'TWITCH_TOKEN'}${message ? ` (${message})` : ''} (${what}); check ${this.o.tokenName ?? 'TWITCH_TOKEN'} and TWITCH_CLIENT_ID`,
          { status, retryable: false, twitchMessage: message },
        );
      throw new HelixError(
        `TWITCH_API_${status}`,
        `Twitch API answered HTTP ${status}${message ? ` (${message})` : ''} (${what})`,
        { status, retryable: false, twitchMessage: message },
      );
    }
  }

  /** `work`, unless the call's deadline (`leftMs` from now, on the clock) comes first. */
  private async beforeDeadline<T>(work: Promise<T>, leftMs: number, what: string): Promise<T> {
    let timer: TimerHandle | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = this.clock.setTimeout(
        () =>
          reject(
            new HelixError(
              'TWITCH_API_UNAVAILABLE',
              `the token refresh did not finish within the call's deadline (${what})`,
              { retryable: true },
            ),
          ),
        Math.max(0, leftMs),
      );
    });
    try {
      return await Promise.race([work, late]);
    } finally {
      timer?.cancel();
    }
  }

  /** One request; it is aborted (on the clock) after `timeoutMs` or when the call's deadline comes, whichever is first. */
  private async send(
    method: HelixMethod,
    path: string,
    query: URLSearchParams,
    payload: unknown,
    leftMs: number,
  ): Promise<{ status: number; body: unknown }> {
    const timeout = Math.min(this.o.timeoutMs ?? 10_000, leftMs);
    if (timeout <= 0) throw Object.assign(new Error('deadline reached'), { code: 'DEADLINE' });
    this.requests++;
    // The shared budget: this request's point is spent now, before its answer says so.
    this.bucket.spend();
    this.inflight++;
    const ac = new AbortController();
    const timer = this.clock.setTimeout(() => ac.abort(), timeout);
    try {
      const { request } = await undici();
      const dispatcher = await this.dispatcher.get();
      const search = query.toString();
      const json = payload === undefined ? undefined : JSON.stringify(payload);
      const res = await request(`${this.apiUrl}${path}${search ? `?${search}` : ''}`, {
        method,
        headers: {
          accept: 'application/json',
          authorization: `Bearer ${this.o.token.current()}`,
          'client-id': this.o.clientId,
          ...(json !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(json !== undefined ? { body: json } : {}),
        dispatcher,
        headersTimeout: timeout,
        bodyTimeout: timeout,
        signal: ac.signal,
      });
      this.bucket.read(res.headers, this.inflight - 1, this.clock.now());
      return { status: res.statusCode, body: jsonOrUndefined(await res.body.text()) };
    } catch (err) {
      if (ac.signal.aborted)
        throw Object.assign(new Error(`no answer within ${timeout} ms`, { cause: err }), { code: 'TIMEOUT' });
      throw err;
    } finally {
      this.inflight--;
      timer.cancel();
    }
  }
}
