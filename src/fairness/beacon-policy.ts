/**
 * Which beacon a draw may rest on, shared word for word by `npm run verify` (the Node check,
 * src/fairness/beacon-key.ts) and the verify page the viewer's browser runs
 * (src/web/public/verify-client.ts): a sandbox beacon is the bot's own local key, so it proves nothing
 * about a live draw's randomness.
 *
 * Contract: pure, no imports (it is bundled into the browser page). Does not: check signatures or
 * rounds (the callers do).
 */

/** The reason a live draw resting on a sandbox beacon is rejected (the same text in both checks). */
export const SANDBOX_BEACON_ON_LIVE_DRAW = 'a live draw cannot rest on a sandbox beacon (the operator holds its key)';

/** Why the draw's recorded beacon is not acceptable for its mode, or undefined when it is. */
export function beaconModeProblem(
  mode: 'live' | 'sandbox' | undefined,
  beacon: { sandbox?: unknown },
): string | undefined {
  return beacon.sandbox && mode === 'live' ? SANDBOX_BEACON_ON_LIVE_DRAW : undefined;
}
