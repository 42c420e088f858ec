/**
 * One line of `npm run setup`'s report: the outcome of one checked item. setup.ts runs the checks
 * and prints the report; setup-twitch-api.ts checks the Twitch API items.
 */

/** The outcome of one checked item. */
export interface SetupItem {
  name: string;
  /** ok: passes; fail: must be fixed; warn: works but worth a look; skip: could not be checked. */
  status: 'ok' | 'fail' | 'warn' | 'skip';
  /** What was found, or what to fix. */
  detail: string;
  /** A required item that is not `ok` (or `warn`) makes setup fail. */
  required: boolean;
}
