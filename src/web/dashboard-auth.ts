/**
 * The dashboard token and how a request proves it has it.
 *
 * Contract: the token is GIFTDROP_DASHBOARD_TOKEN when set, else read from (or generated once
 * into) DATA_DIR/dashboard.token, created owner-only (0600). A request is authorised by
 * `Authorization: Bearer <token>`, by the session cookie (HttpOnly, SameSite=Strict, holding a
 * value derived from the token, never the token itself), or, on a page GET only, by `?token=`.
 * Every comparison is constant-time over equal-length digests. A state-changing request must be a
 * POST with a JSON body and, when the browser sends an Origin, the page's own origin. Does not
 * route requests or print the token.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';

export const COOKIE_NAME = 'giftdrop_dashboard';
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
  try {
    await writeFile(file, `${randomBytes(24).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  await chmod(file, 0o600).catch(() => undefined);
  const token = (await readFile(file, 'utf8')).trim();
  if (token.length < 16) throw new Error(`${file} holds no usable dashboard token (delete it to get a new one)`);
  return { token, source: 'file', file };
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

function same(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

function cookieValue(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

export class DashboardAuth {
  private readonly session: string;

  constructor(private readonly token: string) {
    this.session = createHash('sha256').update(`giftdrop dashboard session\n${token}`).digest('base64url');
  }

  /** How the request is authorised, or undefined. `?token=` counts only when `allowQuery`. */
  check(req: IncomingMessage, allowQuery = false): 'bearer' | 'cookie' | 'query' | undefined {
    const header = req.headers.authorization;
    if (header && /^Bearer\s+/i.test(header) && same(header.replace(/^Bearer\s+/i, '').trim(), this.token)) return 'bearer';
    const cookie = cookieValue(req, COOKIE_NAME);
    if (cookie && same(cookie, this.session)) return 'cookie';
    if (allowQuery) {
      const q = new URL(req.url ?? '/', 'http://x').searchParams.get('token');
      if (q && same(q, this.token)) return 'query';
    }
    return undefined;
  }

  /** The Set-Cookie value that keeps the browser signed in. */
  setCookie(): string {
    return `${COOKIE_NAME}=${this.session}; Path=/dashboard; HttpOnly; SameSite=Strict`;
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
