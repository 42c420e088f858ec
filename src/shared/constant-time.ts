/**
 * The one constant-time comparison of secrets (session ids, dashboard tokens, OAuth state, sandbox
 * credentials): both sides are hashed with SHA-256 first, so neither the content nor the length of
 * the secret leaks through the time a comparison takes. (Webhook signatures compare fixed-length
 * HMACs directly: fourthwall/webhooks.ts.)
 */
import { createHash, timingSafeEqual } from 'node:crypto';

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

/** True when `a` and `b` are the same string, in time independent of where they differ and of their lengths. */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}
