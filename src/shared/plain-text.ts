/**
 * The one cleaner of viewer- and shop-supplied text for display (the supporter alerts in chat,
 * src/shop/alerts.ts, and the overlay's view model, src/web/operator/safe-text.ts), and the one link
 * scrubber (`linkFreeText`: every chat line that repeats what a supporter typed, and the overlay).
 * `plainText` takes out control characters
 * (C0, DEL, C1), invisible format characters (zero-width, bidi embeddings/overrides/isolates,
 * word joiners, BOM) and line/paragraph separators taken out, whitespace folded to single spaces,
 * trimmed, and capped at `max` characters (the last one an ellipsis).
 *
 * Contract: pure; the output is one line without any of those characters. `replacement` is what
 * stands where they were: '' (the overlay: "evil\u0007name" reads "evilname") or ' ' (chat alerts:
 * "a\u0000b" reads "a b"). `linkFreeText` also replaces anything that looks like a link (a scheme
 * with `://`, `www.`, a dotted name ending in a top-level domain of any script or in punycode, like
 * `phish.example`, `free-merch.shop/login`, `пример.рф`, `evil.xn--p1ai/free`, an IP address with
 * or without a port, like `203.0.113.5:8080/free`; matched after NFKC normalisation with Unicode
 * dots (`evil．com`, `evil。com`) read as dots and invisible characters (a soft hyphen) dropped), an
 * e-mail address (`[link]`) or a token-like run of 24+ letters/digits
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

/** Characters browsers (UTS #46) read as a dot in a host name, beside "." itself, after NFKC. */
const DOTS = /[\u3002\uff0e\uff61\u2024\ufe52\u0701\u0702\u06d4\u2e3c]/g;
/** What hides a link from a reader but not from a browser: controls, format and default-ignorable characters (soft hyphen included). */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;
const URLISH = /(?:\b[a-z][a-z0-9+.-]*:\/\/|\bwww\.)\S*/giu;
const EMAILISH = /[^\s@]+@[^\s@]+\.[^\s@]+/gu;
/**
 * A dotted name whose last label is a top-level domain: a letter then 1+ letters or combining
 * marks of any script (`.com`, `.рф`, and the Indic and Sinhala ones whose vowel signs are marks:
 * `.भारत`, `.संगठन`, `.ಭಾರತ`, `.ලංකා`) or punycode (`.xn--p1ai`), labels of letters, marks, digits
 * and hyphens of any script, with an optional port and path.
 */
const DOMAINISH =
  /[\p{L}\p{M}\p{N}-]+(?:\.[\p{L}\p{M}\p{N}-]+)*\.(?:\p{L}[\p{L}\p{M}]{1,62}|xn--[a-z0-9-]{1,59})(?![\p{L}\p{M}\p{N}-])(?::\d{1,5})?(?:[/?#]\S*)?/giu;
/** An IPv4 address (with an optional port and path), or an IPv6 one in brackets or with "::". */
const IPISH =
  /(?<![\p{L}\p{N}.])(?:\d{1,3}\.){3}\d{1,3}(?![\p{L}\p{N}]|\.\d)(?::\d{1,5})?(?:[/?#]\S*)?|\[[0-9a-f:.]{2,45}\](?::\d{1,5})?(?:[/?#]\S*)?|(?<![\p{L}\p{N}:])(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}(?=[\s/]|$)(?<=::[0-9a-f]{0,4}|(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4})/giu;
const TOKENISH = /[A-Za-z0-9_-]{24,}/g;

/**
 * `text` with links, addresses and token-like runs replaced, then cleaned and capped (see the
 * contract). Matching runs on what a browser would read: NFKC-normalised (full-width letters and
 * dots become ASCII), Unicode dots made ".", invisible characters dropped; the output is that
 * normalised text.
 */
export function linkFreeText(text: string, max: number, replacement: '' | ' ' = ''): string {
  const flat = text
    .replace(INVISIBLE, '')
    .replace(HIDDEN, replacement)
    .normalize('NFKC')
    .replace(INVISIBLE, '')
    .replace(DOTS, '.');
  return plainText(
    flat
      .replace(URLISH, '[link]')
      .replace(EMAILISH, '[link]')
      .replace(IPISH, '[link]')
      .replace(DOMAINISH, '[link]')
      .replace(TOKENISH, '[…]'),
    max,
    replacement,
  );
}
