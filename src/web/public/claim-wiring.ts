/**
 * The claim page, wired from the Config: on when GIFTDROP_PUBLIC_URL, TWITCH_CLIENT_ID and
 * TWITCH_CLIENT_SECRET are all set (the viewer login needs the application's secret), with the
 * redirect URI `<GIFTDROP_PUBLIC_URL>/claim/callback` (the one to register in the Twitch developer
 * console; `npm run setup` says so). Without them `claimPageFor` returns undefined, and says which
 * variable is missing when only some are set.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../../config/index.js';
import type { Logger } from '../../logging/index.js';
import type { Clock } from '../../shared/clock.js';
import { TwitchViewerLogin } from '../../twitch/viewer-login.js';
import { ClaimPage, type ClaimPrizesPort } from './claim-page.js';

export interface ClaimPageWiring {
  /** `<public>/claim` */
  readonly url: string;
  /** The route the HTTP server mounts (its one mounting point). */
  mount(d: { prizes: ClaimPrizesPort; channel: string; clock: Clock }): (req: IncomingMessage, res: ServerResponse) => boolean;
}

/** The redirect URI to register in the Twitch developer console for the claim page. */
export function claimRedirectUri(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/claim/callback`;
}

export function claimPageFor(config: Config, logger: Logger): ClaimPageWiring | undefined {
  const publicUrl = config.publicUrl;
  const { clientId, clientSecret } = config.twitch;
  if (!publicUrl) return undefined;
  if (!clientId || !clientSecret) {
    logger.warn(
      `the claim page (${publicUrl}/claim) needs ${[!clientId && 'TWITCH_CLIENT_ID', !clientSecret && 'TWITCH_CLIENT_SECRET'].filter(Boolean).join(' and ')}: set them to let winners log in with Twitch and see their prizes`,
    );
    return undefined;
  }
  const login = new TwitchViewerLogin({
    authUrl: config.twitch.authUrl ?? 'https://id.twitch.tv/oauth2',
    apiUrl: config.twitch.apiUrl ?? 'https://api.twitch.tv/helix',
    clientId,
    clientSecret,
    logger,
  });
  return {
    url: `${publicUrl}/claim`,
    mount: ({ prizes, channel, clock }) =>
      new ClaimPage({ publicUrl, login, prizes, channel, clock, logger }).handle,
  };
}
