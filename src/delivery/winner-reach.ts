/**
 * How a prize reaches its winner beyond the chat line, in words: whether the claim page and the
 * whispers are on and, when one is off, what turns it on. The one home of that wording: the setup
 * page's rows (src/setup), the dashboard (`state.reach`, src/web/operator), `setup` in a terminal
 * (src/cli) and the start-up log lines (claim-wiring.ts, wire.ts) all say it through here, so they
 * never disagree. The claim page needs the public address and a Confidential Twitch application
 * (TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET: a viewer's login is the authorization-code flow,
 * which the Public application of the device-code logins cannot do); whispers need the bot's
 * token to carry `user:manage:whispers` and `delivery.whispers` left on.
 *
 * Contract: pure functions of the facts the caller knows (a running bot: its wiring and validated
 * token; the setup page: what is saved), never a secret in the text. Does not: decide whether the
 * claim page is mounted or a whisper is sent (claim-wiring.ts, twitch/whispers.ts).
 */
import type { Config } from '../config/index.js';
import { envFileHint, thisInvocation, type Invocation } from '../platform/invocation.js';
import { WHISPER_SCOPE } from '../twitch/whispers.js';

/** One way of reaching winners: `checking` until the bot's token was validated. */
export interface Reach {
  id: 'claim-page' | 'whispers';
  title: string;
  status: 'on' | 'off' | 'checking';
  /** When on: what it does (and what to keep in mind); when off: what turns it on. */
  detail: string;
}

const CLAIM_TITLE = 'Claim page (winners log in and see their prize)';
const WHISPERS_TITLE = 'Whispers to winners';
const CONSOLE = 'dev.twitch.tv/console/apps';

/** What decides the claim page. */
export interface ClaimPageFacts {
  /** GIFTDROP_PUBLIC_URL (or the setup page's public address). */
  publicUrl?: string;
  /** TWITCH_CLIENT_ID and whether TWITCH_CLIENT_SECRET is set (the environment or `.env`). */
  clientId?: string;
  clientSecret: boolean;
  /** The only client id in use is a Public application's (the setup page's or the release's): no secret goes with it. */
  publicClient: boolean;
}

/** The facts of the claim page in a loaded configuration. */
export function claimPageFacts(config: Config): ClaimPageFacts {
  const { clientId, clientSecret, deviceClientId } = config.twitch;
  // A saved login's application stands in as TWITCH_CLIENT_ID when none is set (config/index.ts).
  const publicClient = Boolean(
    deviceClientId && deviceClientId.source !== 'env' && (!clientId || clientId === deviceClientId.id),
  );
  return {
    ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
    ...(clientId && !publicClient ? { clientId } : {}),
    clientSecret: Boolean(clientSecret),
    publicClient,
  };
}

/** The OAuth Redirect URL the claim page's application must list. */
function redirectOf(publicUrl: string | undefined): string {
  return publicUrl ? `${publicUrl.replace(/\/+$/, '')}/claim/callback` : '<public address>/claim/callback';
}

/**
 * The claim page: on (`mounted`, or every fact there) with the redirect URL to register, or off
 * with what is missing and where to set it.
 */
export function claimPageReach(f: ClaimPageFacts, o: { mounted?: boolean; inv?: Invocation } = {}): Reach {
  const redirect = redirectOf(f.publicUrl);
  const app = Boolean(f.clientId && f.clientSecret);
  const on = o.mounted ?? (app && Boolean(f.publicUrl));
  if (on)
    return {
      id: 'claim-page',
      title: CLAIM_TITLE,
      status: 'on',
      detail: `on: winners log in at ${f.publicUrl}/claim. Your Twitch application must list the OAuth Redirect URL ${redirect} (${CONSOLE} > Manage), or Twitch refuses the login.`,
    };
  const file = envFileHint(o.inv ?? thisInvocation());
  const lines = (names: string[]) =>
    `${names.map((n) => `${n}=<${n === 'TWITCH_CLIENT_ID' ? 'Client ID' : 'Client Secret'}>`).join(' and ')}`;
  const needs: string[] = [];
  if (!f.publicUrl) needs.push("the public address (the setup page's row, or GIFTDROP_PUBLIC_URL)");
  if (f.clientId && !f.clientSecret)
    needs.push(
      `the Client Secret of TWITCH_CLIENT_ID's application (Client Type "Confidential"; Manage > New Secret at ${CONSOLE}) in ${file}: ${lines(['TWITCH_CLIENT_SECRET'])}`,
    );
  else if (!f.clientId && f.clientSecret)
    needs.push(
      `the Client ID of the application TWITCH_CLIENT_SECRET belongs to in ${file}: ${lines(['TWITCH_CLIENT_ID'])}`,
    );
  else if (!app) {
    const why = f.publicClient
      ? " (the setup page's Public one has no secret, and a winner's login in their own browser needs one)"
      : '';
    needs.push(
      `your own Twitch application of Client Type "Confidential"${why}: ${CONSOLE} > Register Your Application (any name and Category, ` +
        `OAuth Redirect URL ${redirect}), then Manage > New Secret; its Client ID and Client Secret go in ${file} as two lines, ${lines(['TWITCH_CLIENT_ID', 'TWITCH_CLIENT_SECRET'])}`,
    );
  }
  // The redirect URL is said once: inline with the registration steps, else here.
  const register =
    !f.clientId && !f.clientSecret ? '' : ` The application's OAuth Redirect URLs must include ${redirect}.`;
  return {
    id: 'claim-page',
    title: CLAIM_TITLE,
    status: 'off',
    detail: `off: it needs ${needs.join(', and ')}; then restart the bot.${register} Until then the dashboard lists each winner whose prize waits, with their link.`,
  };
}

/** What decides the whispers. */
export interface WhisperFacts {
  /** `delivery.whispers` in the settings file (default on). */
  setting: boolean;
  /** Where the bot's token comes from: TWITCH_TOKEN, the setup page's login, or none yet. */
  token: 'env' | 'login' | 'none';
  /** The token's scopes once Twitch validated it (undefined: not yet). */
  scopes?: readonly string[];
  /** The bot knows which application the token belongs to (TWITCH_CLIENT_ID, or the login's). */
  clientId: boolean;
  /** The claim page is on: the whisper points to it rather than carrying the link. */
  claimPage: boolean;
}

export function whisperReach(f: WhisperFacts): Reach {
  const reach = (status: Reach['status'], detail: string): Reach => ({
    id: 'whispers',
    title: WHISPERS_TITLE,
    status,
    detail,
  });
  if (!f.setting)
    return reach(
      'off',
      'off: delivery.whispers is false in the settings file; set it to true (or remove it) and restart the bot.',
    );
  if (f.token === 'none')
    return reach('off', 'off: log the bot in on the setup page (its login asks Twitch for whispers).');
  if (f.token === 'env' && !f.clientId)
    return reach(
      'off',
      'off: set TWITCH_CLIENT_ID to the Client ID of the application TWITCH_TOKEN was made with (Twitch needs it to send a whisper).',
    );
  if (!f.scopes)
    return reach('checking', 'checked once the bot has logged in to Twitch (its token needs user:manage:whispers).');
  if (!f.scopes.includes(WHISPER_SCOPE))
    return reach(
      'off',
      f.token === 'env'
        ? `off: TWITCH_TOKEN lacks the scope ${WHISPER_SCOPE}: make the token with it, or remove TWITCH_TOKEN and log the bot in on the setup page (its login asks for whispers).`
        : `off: the bot's Twitch login lacks the scope ${WHISPER_SCOPE}: log the bot in again on the setup page (its login asks for whispers).`,
    );
  return reach(
    'on',
    `on: each winner is whispered ${f.claimPage ? 'the claim page' : 'their link'}. Twitch delivers whispers only from an account with a verified phone number ` +
      '(the bot account: Settings > Security and Privacy) and may drop one silently, so the dashboard keeps each prize listed until it is redeemed.',
  );
}
