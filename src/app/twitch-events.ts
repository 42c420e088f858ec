/**
 * Twitch beyond chat, wired for one bot: the token port (bot, broadcaster), the broadcaster's own
 * Helix client (Twitch counts Helix points per client id and user), the bot's one EventSub client
 * and the features on it: entries from channel points and tickets from bits (src/twitch/
 * channel-points/), each only when the settings file turns it on.
 *
 * Contract: nothing here opens a socket unless a feature registers a topic (the EventSub client
 * connects per account only for topics); a feature that cannot run (no TWITCH_CLIENT_ID, no
 * broadcaster login, a token of another account or without the scope) is said in one line,
 * listed in `problems` (/healthz, the dashboard) and left off, and the bot runs on. `start` runs
 * after the open draws are restored (so a pending redemption finds its draw); `health` is what
 * /healthz and the dashboard show beside chat's state; `stop` stops taking redemptions, lets the
 * settles in flight end (bounded by the stop list) and closes the sockets.
 * Does not: decide entries (the engine's door, giveaway/ticket-entries.ts).
 */
import type { Config } from '../config/index.js';
import type { GiveawayEngine } from '../giveaway/engine.js';
import { registerSecret, type Logger } from '../logging/index.js';
import { giftdropCommand } from '../platform/invocation.js';
import type { Clock } from '../shared/clock.js';
import type { Backoff } from '../shared/retry.js';
import { channelPointsFile } from '../storage/index.js';
import { chatAccountToken, envTokenPort, type TwitchTokenPort } from '../twitch/account-tokens.js';
import type { TwitchApi } from '../twitch/api.js';
import { ChannelPointsApi } from '../twitch/channel-points/api.js';
import { BitsEntries } from '../twitch/channel-points/bits.js';
import { ChannelPointsEntries, type EntryDoor } from '../twitch/channel-points/entries.js';
import { EventSubClient } from '../twitch/eventsub/client.js';
import { HelixClient } from '../twitch/helix.js';
import type { TwitchAuthStartup } from '../twitch/startup.js';
import type { StartupProblems } from './credential-problems.js';

export interface TwitchEventsOptions {
  /** EventSub keepalive window asked of Twitch and reconnect backoffs (tests). */
  eventSub?: { keepaliveSeconds?: number; backoff?: { drop?: Backoff; limit?: Backoff } };
  /** Retry waits of the channel-point reward's calls (tests). */
  retry?: Backoff;
}

export interface TwitchEvents {
  readonly tokens: TwitchTokenPort;
  /** The one EventSub client (with TWITCH_CLIENT_ID): features register their topics on it. */
  readonly eventSub: EventSubClient | undefined;
  channelPoints?: ChannelPointsEntries;
  bits?: BitsEntries;
  start(): Promise<void>;
  /** For /healthz and the dashboard: `eventsub` (and its reason), `channelPoints`, `bits`, when on. */
  health(): Record<string, unknown>;
  stop(): Promise<void>;
}

const SCOPES = { channelPoints: 'channel:manage:redemptions', bits: 'bits:read' } as const;

/** The engine as the features' entry door. */
function doorOf(engine: GiveawayEngine): EntryDoor {
  return {
    enterByTickets: (req) => engine.enterByTickets(req),
    entriesOpen: () => engine.drawViews().some((v) => v.active && v.phase === 'open'),
    onDrawsChanged: (fn) => {
      for (const e of ['draw-opened', 'draw-closed', 'draw-finished', 'draw-failed', 'draw-cancelled'] as const) engine.events.on(e, () => fn());
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
  const tokens = envTokenPort({
    bot: chatAccountToken(d.auth.tokens, d.auth.auth),
    ...(t.broadcasterToken
      ? { broadcaster: { token: t.broadcasterToken, refreshToken: t.broadcasterRefreshToken, clientId: t.clientId, clientSecret: t.clientSecret } }
      : {}),
    auth: d.auth.auth,
    logger,
    registerSecret: (v) => registerSecret(logger, v),
  });
  const broadcasterToken = tokens.tokenOf('broadcaster');
  const broadcasterHelix =
    t.clientId && broadcasterToken
      ? new HelixClient({
          apiUrl: t.apiUrl ?? 'https://api.twitch.tv/helix',
          clientId: t.clientId,
          token: broadcasterToken,
          tokenName: broadcasterToken.name,
          dispatcher: d.auth.auth.dispatcher,
          clock,
          logger,
        })
      : undefined;
  const eventSub = t.clientId
    ? new EventSubClient({
        ...(t.eventSubUrl ? { url: t.eventSubUrl } : {}),
        ...d.options?.eventSub,
        helixFor: (account) => (account === 'bot' ? d.twitchApi?.helix : broadcasterHelix),
        clock,
        logger,
      })
    : undefined;
  const problem = (line: string) => {
    if (d.problems.add(line)) log.error(line);
  };
  const wanted = { channelPoints: settings.channelPoints.enabled, bits: settings.bits.enabled };

  const events: TwitchEvents = {
    tokens,
    eventSub,
    async start() {
      const features = (Object.keys(wanted) as (keyof typeof wanted)[]).filter((k) => wanted[k]);
      if (!features.length) return;
      const what = features.map((f) => (f === 'channelPoints' ? 'channelPoints' : 'bits')).join(' and ');
      if (!t.clientId || !eventSub) return problem(`${what} need the Twitch API: set TWITCH_CLIENT_ID (${giftdropCommand('setup')} shows how); they are off.`);
      if (!broadcasterToken || !broadcasterHelix)
        return problem(`${what} need the broadcaster's Twitch login: log the broadcaster in on the setup page, or set TWITCH_BROADCASTER_TOKEN; they are off.`);
      let who;
      try {
        who = await broadcasterToken.identify();
      } catch (err) {
        return problem(`${what} are off: ${(err as Error).message}`);
      }
      if (t.channel && who.login !== t.channel)
        return problem(`${broadcasterToken.name} belongs to "${who.login}", not to the channel "${t.channel}": log the channel's own account in; ${what} are off.`);
      const door = doorOf(d.engine);
      for (const f of features) {
        const scope = SCOPES[f];
        if (!who.scopes.includes(scope)) {
          problem(`${broadcasterToken.name} lacks the scope ${scope}: log the broadcaster in again with it; ${f === 'bits' ? 'bits tickets are' : 'channel points are'} off.`);
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
          });
          await events.channelPoints.start();
        } else {
          events.bits = new BitsEntries({ broadcasterId: who.userId, topics: eventSub, door, logger, onProblem: problem });
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
