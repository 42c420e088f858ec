/**
 * The one cleaner of viewer- and shop-supplied text for display (the supporter alerts in chat,
 * src/shop/alerts.ts, and the overlay's view model, src/web/safe-text.ts), and the one link
 * scrubber (`linkFreeText`: every chat line that repeats what a supporter typed, and the overlay).
 * `plainText` takes out control characters
 * (C0, DEL, C1), invisible format characters (zero-width, bidi embeddings/overrides/isolates,
 * word joiners, BOM) and line/paragraph separators taken out, whitespace folded to single spaces,
 * trimmed, and capped at `max` characters (the last one an ellipsis).
 *
 * Contract: pure; the output is one line without any of those characters. `replacement` is what
 * stands where they were: '' (the overlay: "evil\u0007name" reads "evilname") or ' ' (chat alerts:
 * "a\u0000b" reads "a b"). `linkFreeText` also replaces anything that looks like a link (a scheme
 * with `://`, `www.`, a dotted name ending in a letters-only label, like `phish.example` or
 * `free-merch.shop/login`), an e-mail address (`[link]`) or a token-like run of 24+ letters/digits
 * (`[…]`), so the bot (a moderator, which Twitch's link filter lets through) never repeats a
 * supporter's link in chat, and the overlay never shows one. Its output never contains `://`,
 * `www.`, a `word.letters` pair, or an `@` between word characters. Does not escape HTML (the DOM does).
 */

 
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]/g;

/** `text` cleaned and capped as described in the module contract. */
export function plainText(text: string, max: number, replacement: '' | ' ' = ''): string {
  const flat = text.replace(HIDDEN, replacement).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

const URLISH = /\b(?:[a-z][a-z0-9+.-]*:\/\/|www\.)\S*/gi;
const EMAILISH = /[^\s@]+@[^\s@]+\.[^\s@]+/g;
/** A dotted name whose last label is 2+ letters (any top-level domain), with an optional path. */
const DOMAINISH = /[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,63}(?![a-z0-9-])(?:[/?#]\S*)?/gi;
const TOKENISH = /[A-Za-z0-9_-]{24,}/g;

/** `text` with links, addresses and token-like runs replaced, then cleaned and capped (see the contract). */
export function linkFreeText(text: string, max: number, replacement: '' | ' ' = ''): string {
  const flat = text.replace(HIDDEN, replacement);
  return plainText(
    flat.replace(URLISH, '[link]').replace(EMAILISH, '[link]').replace(DOMAINISH, '[link]').replace(TOKENISH, '[…]'),
    max,
    replacement,
  );
}
