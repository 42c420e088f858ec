/**
 * How a terminal line shows a moment: local time, 24-hour, one shape everywhere the operator reads
 * (`npm run history` tables and details, the sandbox console): `2026-11-28 01:21:15`, or its time
 * of day `01:21:15` where the day is today's. Machine output (`--json`, `--csv`, the history file)
 * keeps ISO 8601 UTC. Pure; an unparseable value is returned as given.
 */

const pad = (n: number) => String(n).padStart(2, '0');

function parsed(at: number | string): Date | undefined {
  const d = new Date(typeof at === 'string' ? Date.parse(at) : at);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/** `01:21:15` (local). */
export function localTime(at: number | string): string {
  const d = parsed(at);
  return d ? `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}` : String(at);
}

/** `2026-11-28 01:21:15` (local). */
export function localDateTime(at: number | string): string {
  const d = parsed(at);
  return d ? `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${localTime(d.getTime())}` : String(at);
}
