/**
 * Chat lines of the giveaway engine, rendered from the configurable templates.
 *
 * Contract: `render` fills `{name}` placeholders from a values map, flattening line breaks in
 * every value and neutralising the finished line (no accidental `/` or `.` chat commands);
 * unknown placeholders stay as written. Helpers here format lists of winners and links. Does not:
 * send anything, decide what to say when, or log (links pass through here only for chat lines the
 * streamer asked to be public).
 */
import { neutralise } from '../shared/chat.js';

export type TemplateValues = Record<string, string | number | undefined>;

/** Fills a template's placeholders and returns a chat-safe line. */
export function render(template: string, values: TemplateValues): string {
  const line = template.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const v = values[name];
    if (v === undefined) return whole;
    return String(v).replace(/[\r\n]+/g, ' ');
  });
  return neutralise(line.trim());
}

/** `@a`, `@a and @b`, `@a, @b and @c`. */
export function mentionList(logins: readonly string[]): string {
  const at = logins.map((l) => `@${l}`);
  if (at.length <= 1) return at.join('');
  return `${at.slice(0, -1).join(', ')} and ${at[at.length - 1]}`;
}

/** Whole seconds left until `atMs` (never negative). */
export function secondsLeft(nowMs: number, atMs: number): number {
  return Math.max(0, Math.ceil((atMs - nowMs) / 1000));
}
