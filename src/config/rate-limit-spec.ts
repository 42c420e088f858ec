/**
 * The one home of the rate-limit syntax `FOURTHWALL_RATE_LIMIT` is written in: `N/D` with `s`
 * (default) or `ms`, e.g. `100/10s`, `20/200ms`, `5/1`. The config schema checks a value with
 * RATE_LIMIT_SPEC and loadConfig turns it into a window with parseRateLimitSpec; nothing else
 * parses it (the Fourthwall client takes the window, fourthwall/rate-limit.ts).
 */

/** `N/D`, `N/Ds` or `N/Dms` (spaces allowed around the parts). */
export const RATE_LIMIT_SPEC = /^\s*(\d+)\s*\/\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*$/i;

/** Parses `N/Ds`, `N/Dms` or `N/D` (seconds) into a window; throws on any other text. */
export function parseRateLimitSpec(spec: string): { limit: number; intervalMs: number } {
  const m = RATE_LIMIT_SPEC.exec(spec);
  if (!m) throw new Error(`bad rate limit "${spec}"`);
  const limit = Number(m[1]);
  const amount = Number(m[2]);
  const intervalMs = m[3]?.toLowerCase() === 'ms' ? amount : amount * 1000;
  return { limit, intervalMs };
}
