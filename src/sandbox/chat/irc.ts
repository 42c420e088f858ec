/**
 * IRC wire helpers for the sandbox chat server: parse one line a client sent, escape and
 * unescape IRCv3 tag values, render a tag map. Pure functions, no I/O.
 *
 * Contract: `parseLine` never throws; it returns `undefined` for a line that is not IRC.
 * Deliberately not a general IRC library: it covers what Twitch's chat gateway speaks.
 */

/** One parsed IRC line. Tag values are unescaped. */
export interface IrcLine {
  tags: Record<string, string>;
  /** Source without the leading `:`, or undefined. */
  prefix?: string;
  /** Upper-cased command or numeric. */
  command: string;
  /** Middle params followed by the trailing one (without its `:`). */
  params: string[];
}

const NEEDS_ESCAPE = /[\\; \r\n]/;
const ESCAPE_RE = /[\\; \r\n]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', ';': '\\:', ' ': '\\s', '\r': '\\r', '\n': '\\n' };
const UNESCAPE_RE = /\\(.?)/g;
const UNESCAPES: Record<string, string> = { '\\': '\\', ':': ';', s: ' ', r: '\r', n: '\n' };

/** Escapes a tag value per IRCv3 message-tags (`\\`, `\:`, `\s`, `\r`, `\n`). */
export function escapeTag(value: string): string {
  return NEEDS_ESCAPE.test(value) ? value.replace(ESCAPE_RE, (c) => ESCAPES[c] ?? c) : value;
}

/** Reverses {@link escapeTag}; an unknown escape yields the character itself, a lone `\` nothing. */
export function unescapeTag(value: string): string {
  if (!value.includes('\\')) return value;
  return value.replace(UNESCAPE_RE, (_m, c: string) => UNESCAPES[c] ?? c);
}

/** Renders `@k=v;k2=v2 ` (with the trailing space), values escaped; empty string for no tags. */
export function formatTags(tags: Record<string, string | number>): string {
  let out = '';
  for (const key in tags) {
    const v = tags[key];
    out += `${out ? ';' : '@'}${key}=${typeof v === 'number' ? v : escapeTag(v ?? '')}`;
  }
  return out ? `${out} ` : '';
}

/** Parses one IRC line (without its line ending). */
export function parseLine(raw: string): IrcLine | undefined {
  let rest = raw.trim();
  if (!rest) return undefined;
  const tags: Record<string, string> = {};
  if (rest.startsWith('@')) {
    const sp = rest.indexOf(' ');
    if (sp < 0) return undefined;
    for (const pair of rest.slice(1, sp).split(';')) {
      if (!pair) continue;
      const eq = pair.indexOf('=');
      if (eq < 0) tags[pair] = '';
      else tags[pair.slice(0, eq)] = unescapeTag(pair.slice(eq + 1));
    }
    rest = rest.slice(sp + 1).trimStart();
  }
  let prefix: string | undefined;
  if (rest.startsWith(':')) {
    const sp = rest.indexOf(' ');
    if (sp < 0) return undefined;
    prefix = rest.slice(1, sp);
    rest = rest.slice(sp + 1).trimStart();
  }
  const params: string[] = [];
  const sp = rest.indexOf(' ');
  const command = (sp < 0 ? rest : rest.slice(0, sp)).toUpperCase();
  if (!command || !/^[A-Z]+$|^\d{3}$/.test(command)) return undefined;
  rest = sp < 0 ? '' : rest.slice(sp + 1);
  while (rest.length) {
    if (rest.startsWith(':')) {
      params.push(rest.slice(1));
      break;
    }
    const next = rest.indexOf(' ');
    if (next < 0) {
      params.push(rest);
      break;
    }
    if (next > 0) params.push(rest.slice(0, next));
    rest = rest.slice(next + 1);
  }
  return prefix === undefined ? { tags, command, params } : { tags, prefix, command, params };
}

/** Removes the leading `@tags ` part of a formatted line (for clients without twitch.tv/tags). */
export function stripTags(line: string): string {
  if (!line.startsWith('@')) return line;
  const sp = line.indexOf(' ');
  return sp < 0 ? line : line.slice(sp + 1);
}
