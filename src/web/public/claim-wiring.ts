/**
 * The claim page, wired from the Config: on when GIFTDROP_PUBLIC_URL, TWITCH_CLIENT_ID and
 * TWITCH_CLIENT_SECRET are all set for a Confidential application (the viewer login needs the
 * application's secret; the Public client id of the setup page's logins cannot do it), with the
 * redirect URI `<GIFTDROP_PUBLIC_URL>/claim/callback` (the one to register in the Twitch developer
 * console; `setup` says so). Without them `claimPageFor` returns undefined and, when the public
 * address is set, says in one line what turns the page on (delivery/winner-reach.ts's words).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../../config/index.js';
import type { Logger } from '../../logging/index.js';
import type { Clock } from '../../shared/clock.js';
import { TwitchViewerLogin } from '../../twitch/viewer-login.js';
import { claimPageFacts, claimPageReach } from '../../delivery/winner-reach.js';
import { ClaimPage, type ClaimPrizesPort } from './claim-page.js';

export interface ClaimPageWiring {
  /** `<public>/claim` */
  readonly url: string;
  /** The route the HTTP server mounts (its one mounting point). */
  mount(d: {
    prizes: ClaimPrizesPort;
    channel: string;
    clock: Clock;
  }): (req: IncomingMessage, res: ServerResponse) => boolean;
}

export function claimPageFor(config: Config, logger: Logger): ClaimPageWiring | undefined {
  const publicUrl = config.publicUrl;
  const { clientId, clientSecret } = config.twitch;
  if (!publicUrl) return undefined;
  const reach = claimPageReach(claimPageFacts(config));
  if (reach.status !== 'on' || !clientId || !clientSecret) {
    logger.warn(
      `the claim page (${publicUrl}/claim, where winners log in with Twitch and see their prize) is ${reach.detail}`,
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
    mount: ({ prizes, channel, clock }) => new ClaimPage({ publicUrl, login, prizes, channel, clock, logger }).handle,
  };
}
