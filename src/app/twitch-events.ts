/**
 * Twitch beyond chat, wired for one bot: the token port (bot, broadcaster), the broadcaster's own
 * Helix client (Twitch counts Helix points per client id and user), the bot's one EventSub client
 * and the features on it: entries from channel points and tickets from bits (src/twitch/
 * channel-points/), each only when the settings file turns it on.
 *
 * Contract: nothing here opens a socket unless a feature registers a topic (the EventSub client
 * connects per account only for topics), which exists whenever an account's token has its
 * application known (TWITCH_CLIENT_ID, or a login the setup page saved, which carries its own client
 * id: no env var is needed); a feature that cannot run (no broadcaster login, an env token with no
 * TWITCH_CLIENT_ID, a token of another account or without the scope) is said in one line,
 * listed in `problems` (/healthz, the dashboard) and left off, and the bot runs on. `start` runs
 * after the open draws are restored (so a pending redemption finds its draw); `health` is what
 * /healthz and the dashboard show beside chat's state; `stop` stops taking redemptions, lets the
 * settles in flight end (bounded by the stop list) and closes the sockets.
 * With a role rule in force (`subscribersOnly`, `excludeModerators`, `minSubMonths`) the features
 * ask Twitch's API for the roles of a viewer who enters without chatting (channel-points/roles.ts);
 * a rule the broadcaster's login cannot check is one line here.
 * Does not: decide entries (the engine's door, giveaway/ticket-entries.ts).
 */
import type { Config } from '../config/index.js';
import type { GiveawayEngine } from '../giveaway/engine.js';
import { registerSecret, type Logger } from '../logging/index.js';
import { giftdropCommand } from '../platform/invocation.js';
import type { Clock } from '../shared/clock.js';
import type { Backoff } from '../shared/retry.js';
import { channelPointsFile } from '../storage/index.js';
import { chatAccountToken, envTokenPort, savedAccountToken, type TwitchTokenPort } from '../twitch/account-tokens.js';
import type { TwitchApi } from '../twitch/api.js';
import { ChannelPointsApi } from '../twitch/channel-points/api.js';
import { BitsEntries } from '../twitch/channel-points/bits.js';
import { ChannelPointsEntries, type EntryDoor } from '../twitch/channel-points/entries.js';
import { ViewerRoles } from '../twitch/channel-points/roles.js';
import { roleRulesOf } from '../giveaway/tickets.js';
import { EventSubClient } from '../twitch/eventsub/client.js';
import { HelixClient } from '../twitch/helix.js';
import { BROADCASTER_FEATURE_SCOPES } from '../twitch/scopes.js';
import type { TwitchAuthStartup } from '../twitch/startup.js';
import type { TwitchEventsState } from '../web/operator/dashboard-api.js';
import type { StartupProblems } from './credential-problems.js';

export interface TwitchEventsOptions {
  /** EventSub keepalive window asked of Twitch and reconnect backoffs (tests). */
  eventSub?: { keepaliveSeconds?: number; backoff?: { drop?: Backoff; limit?: Backoff } };
  /** Retry waits of the channel-point reward's calls (tests). */
  retry?: Backoff;
}

export interface TwitchEvents {
  readonly tokens: TwitchTokenPort;
  /** The one EventSub client (an account's application known: TWITCH_CLIENT_ID or a saved login's): features register their topics on it. */
  readonly eventSub: EventSubClient | undefined;
  channelPoints?: ChannelPointsEntries;
  bits?: BitsEntries;
  /** Why a feature the settings turn on did not start (the line also in `problems`): the setup page shows it on its row. */
  readonly notStarted: Partial<Record<TwitchFeature, string>>;
  start(): Promise<void>;
  /** For /healthz and the dashboard: `eventsub` (and its reason), `channelPoints`, `bits`, when on. */
  health(): TwitchEventsState;
  stop(): Promise<void>;
}

type TwitchFeature = 'channelPoints' | 'bits';

const SCOPES = {
  channelPoints: BROADCASTER_FEATURE_SCOPES.channelPoints,
  bits: BROADCASTER_FEATURE_SCOPES.bits,
} as const;

/** The engine as the features' entry door. */
function doorOf(engine: GiveawayEngine): EntryDoor {
  return {
    enterByTickets: (req) => engine.enterByTickets(req),
    entriesOpen: () => engine.drawViews().some((v) => v.active && v.phase === 'open'),
    onDrawsChanged: (fn) => {
      for (const e of ['draw-opened', 'draw-closed', 'draw-finished', 'draw-failed', 'draw-cancelled'] as const)
        engine.events.on(e, () => fn());
    },
  };
}

export function startTwitchEvents(d: {
  config: Config;
  auth: TwitchAuthStartup;
  twitchApi: TwitchApi | undefined;
  engine: GiveawayEngine;
  problems: StartupProblems;
  clock: Clock;
  logger: Logger;
  options?: TwitchEventsOptions;
}): TwitchEvents {
  const { config, logger, clock } = d;
  const t = config.twitch;
  const log = logger.child({ module: 'twitch-events' });
  const settings = config.settings;
  // The broadcaster's login the setup page saved stands behind the same port when the env has none.
  const saved = t.broadcasterToken ? undefined : d.auth.logins.keeper('broadcaster');
  const tokens = envTokenPort({
    bot: chatAccountToken(d.auth.tokens, d.auth.auth),
    ...(t.broadcasterToken
      ? {
          broadcaster: {
            token: t.broadcasterToken,
            refreshToken: t.broadcasterRefreshToken,
            clientId: t.clientId,
            clientSecret: t.clientSecret,
          },
        }
      : {}),
    ...(saved
      ? { savedBroadcaster: savedAccountToken(saved, d.auth.auth, "the broadcaster's Twitch login (setup page)") }
      : {}),
    auth: d.auth.auth,
    logger,
    registerSecret: (v) => registerSecret(logger, v),
  });
  const broadcasterToken = tokens.tokenOf('broadcaster');
  // Helix wants the client id the broadcaster's token was issued to (a saved login's own).
  const broadcasterClientId = saved?.clientId() ?? t.clientId;
  const broadcasterHelix =
    broadcasterClientId && broadcasterToken
      ? new HelixClient({
          apiUrl: t.apiUrl ?? 'https://api.twitch.tv/helix',
          clientId: broadcasterClientId,
          token: broadcasterToken,
          tokenName: broadcasterToken.name,
          dispatcher: d.auth.auth.dispatcher,
          clock,
          logger,
        })
      : undefined;
  // One EventSub client whenever some account's token has its application known: the bot's (its
  // Helix, with TWITCH_CLIENT_ID or the setup page's login) or the broadcaster's (the page's login
  // carries its own client id), so a streamer who set up by the page alone gets it with no env var.
  const botHelix = d.twitchApi?.helix;
  const eventSub =
    botHelix || broadcasterHelix
      ? new EventSubClient({
          ...(t.eventSubUrl ? { url: t.eventSubUrl } : {}),
          ...d.options?.eventSub,
          helixFor: (account) => (account === 'bot' ? botHelix : broadcasterHelix),
          clock,
          logger,
        })
      : undefined;
  const notStarted: Partial<Record<TwitchFeature, string>> = {};
  const problem = (line: string, features: readonly TwitchFeature[] = []) => {
    for (const f of features) notStarted[f] = line;
    if (d.problems.add(line)) log.error(line);
  };
  const wanted = { channelPoints: settings.channelPoints.enabled, bits: settings.bits.enabled };

  /**
   * A viewer who enters without chatting has no roles from chat: with a role rule in force, the
   * broadcaster's token looks up what Twitch's API can tell (roles.ts); what it cannot is said once
   * here (the engine then refunds such entries for that rule).
   */
  const rolesLookup = (broadcasterId: string, scopes: readonly string[]) => {
    const rules = roleRulesOf(settings.eligibility);
    if (!rules.length || !broadcasterHelix) return undefined;
    for (const u of ViewerRoles.unchecked(rules, scopes)) {
      const line = u.scope
        ? `eligibility.${u.rule} is on, but the broadcaster's login lacks ${u.scope}: a channel-point redemption by a viewer not in the draw from chat is refunded for it (a !enter in chat shows the role); log the broadcaster in again on the setup page to let the bot check.`
        : `eligibility.minSubMonths is on: Twitch shows a subscriber's months only in chat, so a channel-point redemption by a viewer not in the draw from chat is refunded for it (a !enter in chat shows them).`;
      if (u.scope) problem(line);
      else log.warn(line);
    }
    const lookup = new ViewerRoles({ helix: broadcasterHelix, broadcasterId, scopes, rules, logger });
    return lookup.asks ? (userId: string) => lookup.of(userId) : undefined;
  };

  const events: TwitchEvents = {
    tokens,
    eventSub,
    notStarted,
    async start() {
      const features = (Object.keys(wanted) as TwitchFeature[]).filter((k) => wanted[k]);
      if (!features.length) return;
      const what = features.join(' and ');
      if (!broadcasterToken)
        return problem(
          `${what} need the broadcaster's Twitch login: log the broadcaster in on the setup page, or set TWITCH_BROADCASTER_TOKEN; they are off.`,
          features,
        );
      if (!broadcasterHelix || !eventSub)
        return problem(
          `${what} need the Twitch application ${broadcasterToken.name} was issued to: set TWITCH_CLIENT_ID (${giftdropCommand('setup')} shows how), or log the broadcaster in on the setup page instead; they are off.`,
          features,
        );
      let who;
      try {
        who = await broadcasterToken.identify();
      } catch (err) {
        return problem(`${what} are off: ${(err as Error).message}`, features);
      }
      if (t.channel && who.login !== t.channel)
        return problem(
          `${broadcasterToken.name} belongs to "${who.login}", not to the channel "${t.channel}": log the channel's own account in; ${what} are off.`,
          features,
        );
      const door = doorOf(d.engine);
      const roles = rolesLookup(who.userId, who.scopes);
      for (const f of features) {
        const scope = SCOPES[f];
        if (!who.scopes.includes(scope)) {
          problem(
            `${broadcasterToken.name} lacks the scope ${scope}: log the broadcaster in again with it; ${f === 'bits' ? 'bits tickets are' : 'channel points are'} off.`,
            [f],
          );
          continue;
        }
        if (f === 'channelPoints') {
          const cp = settings.channelPoints;
          events.channelPoints = new ChannelPointsEntries({
            api: new ChannelPointsApi(broadcasterHelix, who.userId),
            broadcasterId: who.userId,
            topics: eventSub,
            door,
            store: channelPointsFile(config.dataDir),
            reward: { title: cp.title, cost: cp.cost, prompt: cp.prompt },
            clock,
            logger,
            ...(d.options?.retry ? { retry: d.options.retry } : {}),
            onProblem: problem,
            ...(roles ? { roles } : {}),
          });
          await events.channelPoints.start();
        } else {
          events.bits = new BitsEntries({
            broadcasterId: who.userId,
            topics: eventSub,
            door,
            logger,
            onProblem: problem,
            ...(roles ? { roles } : {}),
          });
          events.bits.start();
        }
      }
    },
    health() {
      const h = eventSub?.health();
      return {
        ...(h && h.state !== 'off' ? { eventsub: h.state, ...(h.reason ? { eventsubReason: h.reason } : {}) } : {}),
        ...(events.channelPoints ? { channelPoints: events.channelPoints.health() } : {}),
        ...(events.bits ? { bits: events.bits.health() } : {}),
      };
    },
    async stop() {
      events.bits?.stop();
      await events.channelPoints?.stop();
      eventSub?.stop();
      await broadcasterHelix?.close();
    },
  };
  return events;
}
