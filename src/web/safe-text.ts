/**
 * Text that viewers or the shop supplied, made safe for the overlay's view model: control and
 * formatting characters removed, length capped, and anything that looks like a link, an e-mail
 * address or a token replaced. The pages render every string with textContent (never as HTML);
 * this module is the second line: what the overlay receives can never carry a link.
 *
 * Control and format characters go through the shared cleaner (src/shared/plain-text.ts, the one
 * the chat alerts use too). Contract: pure functions; the output never contains `://`, `www.`, an
 * `@` between word characters, or a run of 24+ letters/digits (token-like). Does not escape HTML
 * (the DOM does).
 */
import { plainText } from '../shared/plain-text.js';

const URLISH = /\b(?:[a-z][a-z0-9+.-]*:\/\/|www\.)\S*/gi;
const EMAILISH = /[^\s@]+@[^\s@]+\.[^\s@]+/g;
const DOMAINISH = /\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|io|gg|tv|me|co|shop|link|ly|xyz|app|dev|store)(?:\/\S*)?\b/gi;
const TOKENISH = /[A-Za-z0-9_-]{24,}/g;

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
