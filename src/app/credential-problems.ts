/**
 * Credential problems found while the bot runs (today: Fourthwall refusing the API credentials at
 * start-up), each said in ONE line that names the variables to fix and points at `npm run setup`,
 * which tests them one by one. The lines are kept for the status readers: /healthz `problems`,
 * the dashboard's status and the live console's status line.
 *
 * Contract: a problem is recorded once (the same line again is not re-added); `list()` is the
 * current lines, oldest first. Never holds or prints a secret: only variable names.
 * Does not: log (the caller logs the line `add` reports as new), retry, or stop the bot.
 */
import type { Config } from '../config/index.js';
import { FourthwallAuthError, FourthwallTokenError } from '../fourthwall/errors.js';
import { giftdropCommand } from '../platform/invocation.js';

/** The variables that hold the Fourthwall credentials in use (e.g. `FOURTHWALL_USERNAME/FOURTHWALL_PASSWORD`). */
export function fourthwallCredentialNames(auth: Config['fourthwall']['auth']): string {
  if (auth.kind === 'basic') return 'FOURTHWALL_USERNAME/FOURTHWALL_PASSWORD';
  if (auth.kind === 'oauth')
    return auth.clientId
      ? 'FOURTHWALL_REFRESH_TOKEN/FOURTHWALL_CLIENT_ID/FOURTHWALL_CLIENT_SECRET'
      : 'FOURTHWALL_ACCESS_TOKEN';
  return 'the Fourthwall credentials';
}

/** One line when `err` is Fourthwall refusing the credentials (401/403), else undefined. */
export function fourthwallCredentialProblem(
  auth: Config['fourthwall']['auth'],
  err: unknown,
  o: { fromPage?: boolean } = {},
): string | undefined {
  if (!(err instanceof FourthwallAuthError) && !(err instanceof FourthwallTokenError)) return undefined;
  const answer = err instanceof FourthwallAuthError ? `${err.status} ${err.code}` : `${err.status ?? 'a refusal'}`;
  return (
    `Fourthwall refused ${fourthwallCredentialNames(auth)} (it answered ${answer}): the bot cannot read the shop, finish gift draws or make links. ` +
    (o.fromPage
      ? "Enter them again in the setup page's Fourthwall row (Apply restarts the bot), or fix them in .env if they are set there."
      : `Fix them in .env (${giftdropCommand('setup')} tests each one and says what is wrong), then restart.`)
  );
}

export class StartupProblems {
  private readonly lines = new Set<string>();

  /** Records `line`; true when it is new (the caller says it once). */
  add(line: string): boolean {
    if (this.lines.has(line)) return false;
    this.lines.add(line);
    return true;
  }

  list(): string[] {
    return [...this.lines];
  }
}
