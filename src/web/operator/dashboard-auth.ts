/**
 * The dashboard token and how a request proves it has it.
 *
 * Contract: the token is GIFTDROP_DASHBOARD_TOKEN when set, else read from (or generated once
 * into) DATA_DIR/dashboard.token by the disk protocol (src/storage/disk.ts), owner-only (0600; an existing one that others can write
 * or that someone else owns is refused at start, see src/storage/files.ts `checkPrivate`). A
 * request is authorised ONLY by `Authorization: Bearer <token>`, compared in constant time over
 * equal-length digests. No cookie, no query parameter and no session count: a cookie set by
 * 127.0.0.1:<port> is sent to every other port of 127.0.0.1 too (cookies are not separated by
 * port), so any credential in one would reach every other local service the browser visits. The
 * page keeps the token in its own origin's sessionStorage and sends the header itself
 * (pages/client.ts). A state-changing request must be a POST with a JSON body and, when
 * the browser sends an Origin, the page's own origin. Does not route requests or print the token.
 */
import { sameSecret } from '../../shared/constant-time.js';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { checkPrivate, nodeDisk } from '../../storage/index.js';

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

/** True when the request carries the dashboard token as `Authorization: Bearer <token>`. */
export function hasDashboardToken(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization;
  if (!header || !/^Bearer\s+/i.test(header)) return false;
  return sameSecret(header.replace(/^Bearer\s+/i, '').trim(), token);
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
