/**
 * The one cleaner of viewer- and shop-supplied text for display (the supporter alerts in chat,
 * src/shop/alerts.ts, and the overlay's view model, src/web/safe-text.ts): control characters
 * (C0, DEL, C1), invisible format characters (zero-width, bidi embeddings/overrides/isolates,
 * word joiners, BOM) and line/paragraph separators taken out, whitespace folded to single spaces,
 * trimmed, and capped at `max` characters (the last one an ellipsis).
 *
 * Contract: pure; the output is one line without any of those characters. `replacement` is what
 * stands where they were: '' (the overlay: "evil\u0007name" reads "evilname") or ' ' (chat alerts:
 * "a\u0000b" reads "a b"). Does not: remove links or escape HTML (safe-text.ts and the DOM do).
 */

// eslint-disable-next-line no-control-regex
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]/g;

/** `text` cleaned and capped as described in the module contract. */
export function plainText(text: string, max: number, replacement: '' | ' ' = ''): string {
  const flat = text.replace(HIDDEN, replacement).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
