/**
 * Shaping of outgoing chat text: sanitising (no control characters, no chat commands), splitting
 * a long text at word boundaries and packing lists into as few lines as possible.
 * Contract: every line returned is at most `max` UTF-16 code units (so at most `max` characters
 * as Twitch counts them), never starts with a chat command (`/` or `.`), never contains a line
 * break or a control character, and never cuts a surrogate pair. A word is cut only when it alone
 * is longer than `max`. Pure functions; pacing and sending belong to the outbox.
 */
import { neutralise } from '../shared/chat.js';

// Control characters (C0 except tab, DEL, C1): \u0001 would turn a line into a CTCP (/me) and
// \u0000 breaks IRC framing.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Flattens line breaks and tabs, removes control characters and neutralises a leading chat command. */
function sanitiseLine(text: string): string {
  return neutralise(text.replace(/[\r\n\t]+/g, ' ').replace(CONTROL, ''));
}

function needsNeutralising(text: string): boolean {
  return neutralise(text) !== text;
}

/** Index at which to cut `text` so that the head has at most `max` code units and no half surrogate pair. */
function safeCut(text: string, max: number): number {
  if (text.length <= max) return text.length;
  const code = text.charCodeAt(max - 1);
  return code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
}

/**
 * Splits `text` into lines of at most `max` code units at word boundaries (spaces). Each line is
 * sanitised; empty input gives no lines.
 */
export function splitText(text: string, max = 500): string[] {
  if (max < 2) throw new RangeError('max must be at least 2');
  let rest = text
    .replace(/[\r\n\t]+/g, ' ')
    .replace(CONTROL, '')
    .trim();
  const out: string[] = [];
  while (rest.length > 0) {
    // neutralise() adds one character in front of a command-looking line: keep room for it.
    const budget = needsNeutralising(rest) ? max - 1 : max;
    let cut: number;
    if (rest.length <= budget) {
      cut = rest.length;
    } else {
      const space = rest.lastIndexOf(' ', budget);
      cut = space > 0 ? space : safeCut(rest, budget);
    }
    const line = sanitiseLine(rest.slice(0, cut).trimEnd());
    if (line.length > 0) out.push(line);
    rest = rest.slice(cut).trimStart();
  }
  return out;
}

/**
 * Packs `items` into as few lines as possible, each `prefix` followed by items joined with
 * `separator`. The prefix is repeated on every line. An item too long to fit with the prefix is
 * split on its own. Order is kept.
 */
export function packList(prefix: string, items: readonly string[], max = 500, separator = ', '): string[] {
  const head = prefix.replace(/[\r\n\t]+/g, ' ').replace(CONTROL, '');
  // One character is kept for neutralise() in case a line would start with a chat command.
  const room = max - head.length - 1;
  if (room < 16) throw new RangeError(`prefix too long to pack a list into ${max}-character lines`);
  const clean = items
    .map((i) =>
      i
        .replace(/[\r\n\t]+/g, ' ')
        .replace(CONTROL, '')
        .trim(),
    )
    .filter((i) => i.length > 0);
  const out: string[] = [];
  let current: string[] = [];
  let used = 0;
  const flush = () => {
    if (current.length > 0) out.push(sanitiseLine(head + current.join(separator)));
    current = [];
    used = 0;
  };
  for (const item of clean) {
    if (item.length > room) {
      flush();
      for (const part of splitText(item, room)) out.push(sanitiseLine(head + part));
      continue;
    }
    const cost = current.length === 0 ? item.length : separator.length + item.length;
    if (used + cost > room) flush();
    used += current.length === 0 ? item.length : separator.length + item.length;
    current.push(item);
  }
  flush();
  return out;
}
