/**
 * The dashboard token and how a request proves it has it.
 *
 * Contract: the token is GIFTDROP_DASHBOARD_TOKEN when set, else read from (or generated once
 * into) DATA_DIR/dashboard.token by the disk protocol (src/storage/disk.ts), owner-only (0600; an existing one that others can write
 * or that someone else owns is refused at start, see src/storage/files.ts `checkPrivate`). A
 * request is authorised by `Authorization: Bearer <token>`, by a session cookie, or, on a page GET
 * only, by `?token=`. Sessions are server-side: a random 256-bit id (never derived from the token)
 * made when the token is shown on a page load, kept in memory (at most MAX_SESSIONS, the least
 * recently used dropped), expiring SESSION_TTL_MS after it was made, ended by `logout`; an expired,
 * logged-out or unknown session is not authorised (401). The cookie is named for the server's port
 * (`giftdrop_dashboard_<port>`: another service on 127.0.0.1 neither reads nor overwrites it),
 * HttpOnly, SameSite=Strict, Path=/dashboard, with Max-Age. Every comparison is constant-time over
 * equal-length digests. A state-changing request must be a POST with a JSON body and, when the
 * browser sends an Origin, the page's own origin. Does not route requests or print the token.
 */
import { sameSecret } from '../../shared/constant-time.js';
import { cookieValue } from '../../shared/cookies.js';
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { LruCache } from '../../shared/lru-cache.js';
import { checkPrivate, nodeDisk } from '../../storage/index.js';

/** The session cookie's name prefix; the server's port follows it. */
const COOKIE_NAME = 'giftdrop_dashboard';
/** A session lasts this long after sign-in (then the token is needed again). */
export const SESSION_TTL_MS = 12 * 3_600_000;
const MAX_SESSIONS = 64;
export const TOKEN_FILE = 'dashboard.token';

export interface DashboardToken {
  token: string;
  /** Where it came from: the environment, or the file (path). */
  source: 'env' | 'file';
  file?: string;
}

/** The configured token, or the one in DATA_DIR/dashboard.token (generated once when missing). */
export async function loadDashboardToken(dataDir: string, fromEnv?: string): Promise<DashboardToken> {
  if (fromEnv) return { token: fromEnv, source: 'env' };
  const file = join(dataDir, TOKEN_FILE);
  // Created once by the disk protocol (temp, sync, rename, directory sync): a power cut right
  // after the token was shown cannot leave an empty file or lose it.
  await nodeDisk.createOnce(file, `${randomBytes(24).toString('base64url')}\n`);
  // A file another user could have planted or can change is not trusted (one line with the fix).
  await checkPrivate(file, 'the dashboard token file');
  const token = ((await nodeDisk.readText(file)) ?? '').trim();
  if (token.length < 16) throw new Error(`${file} holds no usable dashboard token (delete it to get a new one)`);
  return { token, source: 'file', file };
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

export interface SessionOptions {
  /** Clock (ms) for the expiry; default Date.now. */
  now?: () => number;
  ttlMs?: number;
}

export class DashboardAuth {
  private readonly sessions: LruCache<string, number>;
  private readonly now: () => number;
  private readonly ttlMs: number;

  constructor(
    private readonly token: string,
    o: SessionOptions = {},
  ) {
    this.now = o.now ?? Date.now;
    this.ttlMs = o.ttlMs ?? SESSION_TTL_MS;
    this.sessions = new LruCache({ maxEntries: MAX_SESSIONS });
  }

  /** The session cookie's name for the port this request came in on. */
  static cookieName(req: IncomingMessage): string {
    return `${COOKIE_NAME}_${req.socket.localPort ?? 0}`;
  }

  /** How the request is authorised, or undefined. `?token=` counts only when `allowQuery`. */
  check(req: IncomingMessage, allowQuery = false): 'bearer' | 'cookie' | 'query' | undefined {
    const header = req.headers.authorization;
    if (header && /^Bearer\s+/i.test(header) && sameSecret(header.replace(/^Bearer\s+/i, '').trim(), this.token)) return 'bearer';
    if (this.session(req)) return 'cookie';
    if (allowQuery) {
      const q = new URL(req.url ?? '/', 'http://x').searchParams.get('token');
      if (q && sameSecret(q, this.token)) return 'query';
    }
    return undefined;
  }

  /** A new session and the Set-Cookie value that keeps the browser signed in with it. */
  setCookie(req: IncomingMessage): string {
    const id = randomBytes(32).toString('base64url');
    this.sessions.set(digest(id).toString('base64'), this.now() + this.ttlMs);
    return `${DashboardAuth.cookieName(req)}=${id}; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=${Math.floor(this.ttlMs / 1000)}`;
  }

  /** Ends the request's session (if any); returns the Set-Cookie value that clears the cookie. */
  logout(req: IncomingMessage): string {
    const key = this.sessionKey(req);
    if (key) this.sessions.forget(key);
    return `${DashboardAuth.cookieName(req)}=; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=0`;
  }

  /** Sessions currently kept (expired ones included until looked up). */
  get sessionCount(): number {
    return this.sessions.size;
  }

  private sessionKey(req: IncomingMessage): string | undefined {
    const id = cookieValue(req, DashboardAuth.cookieName(req));
    // Looked up by the id's digest: the map's own key comparison then reveals nothing about ids.
    return id && /^[A-Za-z0-9_-]{43}$/.test(id) ? digest(id).toString('base64') : undefined;
  }

  private session(req: IncomingMessage): boolean {
    const key = this.sessionKey(req);
    if (!key) return false;
    const expires = this.sessions.get(key);
    if (expires === undefined) return false;
    if (this.now() >= expires) {
      this.sessions.forget(key);
      return false;
    }
    return true;
  }
}

/** A state change must be a JSON POST from this page's own origin (when the browser says). */
export function sameOriginJsonPost(req: IncomingMessage): string | undefined {
  if (req.method !== 'POST') return 'use POST';
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') return 'send the body as application/json';
  const origin = req.headers.origin;
  if (origin && origin !== 'null') {
    const host = req.headers.host;
    try {
      if (!host || new URL(origin).host !== host) return 'cross-origin request refused';
    } catch {
      return 'bad Origin header';
    }
  } else if (origin === 'null') return 'cross-origin request refused';
  return undefined;
}
