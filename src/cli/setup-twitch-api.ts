/**
 * `npm run setup`'s Twitch API items (issue 13): whether TWITCH_CLIENT_ID is set and matches the
 * token, whether the token has the scopes of every enabled feature (`moderator:read:followers`
 * for followers-only and the minimum follow age), and a real Helix call (`GET /users` for the
 * channel, `GET /streams` with `streaming.auto`). Prints what is missing; never a token.
 * Without a client id and with no feature needing it, one optional `skip` item says what the
 * client id would add.
 */
import type { Config } from '../config/index.js';
import { NO_RETRY } from '../shared/retry.js';
import type { Logger } from '../logging/index.js';
import { accountRulesActive } from '../giveaway/account-rules.js';
import { accountRulesFrom } from '../twitch/api.js';
import { TwitchAuthClient } from '../twitch/auth.js';
import { HelixClient } from '../twitch/helix.js';
import type { SetupItem } from '../setup/setup-item.js';
import { claimPageFacts, claimPageReach, whisperReach } from '../delivery/winner-reach.js';
import { chatScopesOf } from '../twitch/scopes.js';

/** The extra scopes each enabled Twitch API feature needs, with the setting that enables it. */
function neededScopes(config: Config): Array<{ scope: string; feature: string }> {
  const e = config.settings.eligibility;
  const out: Array<{ scope: string; feature: string }> = [];
  if (e.followersOnly) out.push({ scope: 'moderator:read:followers', feature: 'eligibility.followersOnly' });
  else if (e.minFollowDays > 0) out.push({ scope: 'moderator:read:followers', feature: 'eligibility.minFollowDays' });
  return out;
}

/**
 * The claim page (optional): which redirect URI to register in the Twitch developer console, or
 * what is missing to turn it on. Pure; no call (Twitch has no API to read the registered URIs).
 */
export function claimPageItem(config: Config): SetupItem {
  const name = 'Claim page';
  const reach = claimPageReach(claimPageFacts(config));
  if (reach.status === 'on')
    return {
      name,
      status: 'ok',
      detail: `${reach.detail} A new tunnel address needs its new URL there too.`,
      required: false,
    };
  // Off: optional, so a warning only once the public address (what it would run on) is set.
  return { name, status: config.publicUrl ? 'warn' : 'skip', detail: reach.detail, required: false };
}

export async function checkTwitchApi(config: Config, logger: Logger, timeoutMs = 10_000): Promise<SetupItem[]> {
  const name = 'Twitch API';
  const rules = accountRulesFrom(config);
  const transport = config.settings.chat.transport;
  const features = [
    ...(transport === 'eventsub' ? ['chat.transport "eventsub"'] : []),
    ...(config.settings.streaming.auto ? ['streaming.auto'] : []),
    ...(accountRulesActive(rules) ? ['the follower / account-age rules'] : []),
  ];
  const { clientId, token, channel, authUrl, apiUrl } = config.twitch;
  if (!clientId) {
    if (features.length > 0)
      return [
        {
          name,
          status: 'fail',
          detail: `${features.join(' and ')} need TWITCH_CLIENT_ID (your Twitch application's client id, dev.twitch.tv/console)`,
          required: true,
        },
      ];
    return [
      {
        name,
        status: 'skip',
        detail:
          'TWITCH_CLIENT_ID is not set (optional): with it the bot can follow the stream (streaming.auto) and check followers and account ages at close',
        required: false,
      },
    ];
  }
  if (!token || !channel)
    return [{ name, status: 'skip', detail: 'needs TWITCH_TOKEN and TWITCH_CHANNEL', required: false }];
  const required = features.length > 0;
  const auth = new TwitchAuthClient({ authUrl: authUrl ?? 'https://id.twitch.tv/oauth2', timeoutMs });
  try {
    const v = await auth.validate(token);
    if (!v.valid)
      return [{ name, status: 'fail', detail: `TWITCH_TOKEN is expired or invalid (${v.reason})`, required }];
    const items: SetupItem[] = [];
    if (v.clientId !== clientId) {
      items.push({
        name: 'Twitch API client id',
        status: 'fail',
        detail:
          'TWITCH_TOKEN was issued to another application than TWITCH_CLIENT_ID: generate the token with this client id (or set the client id the token belongs to)',
        required,
      });
      return items;
    }
    items.push({ name: 'Twitch API client id', status: 'ok', detail: 'TWITCH_CLIENT_ID matches the token', required });
    const missing = neededScopes(config).filter((n) => !v.scopes.includes(n.scope));
    items.push(
      missing.length === 0
        ? {
            name: 'Twitch API scopes',
            status: 'ok',
            detail: `the token has what the enabled features need (${v.scopes.join(' ') || 'no extra scopes'})`,
            required,
          }
        : {
            name: 'Twitch API scopes',
            status: 'fail',
            detail: `TWITCH_TOKEN lacks ${[...new Set(missing.map((m) => m.scope))].join(' ')} (needed by ${missing.map((m) => m.feature).join(', ')}): generate a new token with ${chatScopesOf(transport).join(' ')} ${[...new Set(missing.map((m) => m.scope))].join(' ')}; the bot must be a moderator of the channel`,
            required: true,
          },
    );
    const whispers = whisperReach({
      setting: config.settings.delivery.whispers,
      token: config.twitch.savedLogin ? 'login' : 'env',
      scopes: v.scopes,
      clientId: true,
      claimPage: claimPageReach(claimPageFacts(config)).status === 'on',
    });
    items.push({
      name: 'Whispers',
      status: whispers.status === 'on' ? 'ok' : 'skip',
      detail: whispers.status === 'on' ? whispers.detail : `${whispers.detail} (optional)`,
      required: false,
    });
    const helix = new HelixClient({
      apiUrl: apiUrl ?? 'https://api.twitch.tv/helix',
      clientId,
      token: {
        current: () => token.replace(/^oauth:/i, ''),
        canRefresh: () => false,
        refresh: () => Promise.resolve(),
      },
      dispatcher: auth.dispatcher,
      logger,
      timeoutMs,
      deadlineMs: timeoutMs,
      retry: NO_RETRY,
    });
    try {
      const user = await helix.userByLogin(channel);
      if (!user) {
        items.push({
          name: 'Twitch API',
          status: 'fail',
          detail: `GET /users does not know the channel "${channel}": check TWITCH_CHANNEL`,
          required,
        });
      } else {
        const live = config.settings.streaming.auto ? await helix.stream(user.id) : undefined;
        items.push({
          name: 'Twitch API',
          status: 'ok',
          detail: `GET /users: #${channel} is user ${user.id}${config.settings.streaming.auto ? `; GET /streams: ${live ? 'live now' : 'offline now'}` : ''}`,
          required,
        });
      }
    } catch (err) {
      items.push({
        name: 'Twitch API',
        status: 'fail',
        detail: `${(err as Error).message} (TWITCH_API_URL ${apiUrl})`,
        required,
      });
    }
    return items;
  } catch (err) {
    return [{ name, status: 'fail', detail: `could not check the token: ${(err as Error).message}`, required }];
  } finally {
    await auth.close();
  }
}
