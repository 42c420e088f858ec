/**
 * Text that viewers or the shop supplied, made safe for the overlay's view model: control and
 * formatting characters removed, length capped, and anything that looks like a link, an e-mail
 * address or a token replaced. The pages render every string with textContent (never as HTML);
 * this module is the second line: what the overlay receives can never carry a link.
 *
 * The cleaning and the link scrubber are the shared ones (src/shared/plain-text.ts `linkFreeText`,
 * the same the chat lines use). Contract: pure functions; the output never contains `://`, `www.`,
 * a dotted domain-like name, an `@` between word characters, or a run of 24+ letters/digits
 * (token-like). Does not escape HTML (the DOM does).
 */
import { linkFreeText } from '../../shared/plain-text.js';

/** A line of free text for the overlay: links, addresses and token-like runs replaced by `[link]`. */
export function overlayText(text: string, max = 120): string {
  return linkFreeText(text, max);
}

/** A Twitch display name for the overlay (falls back to the login when the name is empty after cleaning). */
export function overlayName(displayName: string, login: string): string {
  const name = overlayText(displayName, 40);
  return name || overlayText(login, 40) || 'someone';
}
