/**
 * Text that viewers or the shop supplied, made safe for the overlay's view model: control and
 * formatting characters removed, length capped, and anything that looks like a link, an e-mail
 * address or a token replaced. The pages render every string with textContent (never as HTML);
 * this module is the second line: what the overlay receives can never carry a link.
 *
 * Contract: pure functions; the output never contains `://`, `www.`, an `@` between word
 * characters, or a run of 24+ letters/digits (token-like). Does not escape HTML (the DOM does).
 */

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;
const URLISH = /\b(?:[a-z][a-z0-9+.-]*:\/\/|www\.)\S*/gi;
const EMAILISH = /[^\s@]+@[^\s@]+\.[^\s@]+/g;
const DOMAINISH = /\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|io|gg|tv|me|co|shop|link|ly|xyz|app|dev|store)(?:\/\S*)?\b/gi;
const TOKENISH = /[A-Za-z0-9_-]{24,}/g;

/** Removes control/bidi characters, folds whitespace, caps the length (with an ellipsis). */
export function plainText(text: string, max: number): string {
  const flat = text.replace(CONTROL, '').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A line of free text for the overlay: links, addresses and token-like runs replaced by `[link]`. */
export function overlayText(text: string, max = 120): string {
  return plainText(
    text.replace(URLISH, '[link]').replace(EMAILISH, '[link]').replace(DOMAINISH, '[link]').replace(TOKENISH, '[…]'),
    max,
  );
}

/** A Twitch display name for the overlay (falls back to the login when the name is empty after cleaning). */
export function overlayName(displayName: string, login: string): string {
  const name = overlayText(displayName, 40);
  return name || overlayText(login, 40) || 'someone';
}
