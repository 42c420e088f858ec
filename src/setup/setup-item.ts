/**
 * One line of a setup report: the outcome of one checked item. checks.ts runs the checks (for the
 * setup page and `npm run setup`); cli/setup.ts prints the report, cli/setup-twitch-api.ts checks
 * the Twitch API items.
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
