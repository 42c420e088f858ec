/**
 * The one reader of the Cookie request header (the claim page, the dashboard sign-in, the overlay
 * key): `name=value` pairs split on `;`, names and values trimmed, the first pair of a name wins.
 * Values are returned as sent (the bot's own cookies hold base64url and hex only).
 */
import type { IncomingMessage } from 'node:http';

/** One cookie's value from the request's Cookie header; undefined when absent. */
export function cookieValue(req: Pick<IncomingMessage, 'headers'>, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}
