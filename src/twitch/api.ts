/**
 * What the Twitch API adds to a running bot, wired from its Config (only with TWITCH_CLIENT_ID):
 * the Helix client (sharing the auth client's connection pool and the chat token, so a refresh
 * serves both, and one rate budget serves every caller), auto streaming (`streaming.auto`,
 * src/twitch/stream-watch.ts) and the account rules checked for the picks
 * (`eligibility.followersOnly|minFollowDays|minAccountDays`, src/giveaway/account-rules.ts and
 * winner-picks.ts over src/twitch/account-info.ts).
 *
 * Contract: `twitchApiFor` returns undefined without a client id (the bot then works on chat
 * alone, as before); `autoStreaming` says at once whether auto streaming owns the streaming
 * status (the bot then skips `streaming.autoStart`); `startWatch` runs after chat joined (the
 * room id is the broadcaster id); `stop` stops the poll and closes the client, and a
 * `startWatch` still looking the channel up when `stop` came starts nothing. Never throws at
 * start for an unreachable API.
 */
import type { Config } from '../config/index.js';
import { AccountGate, accountRulesActive, type AccountRules } from '../giveaway/account-rules.js';
import type { ChatPort, ShopPort } from '../giveaway/ports.js';
import type { Logger } from '../logging/index.js';
import type { Clock } from '../shared/clock.js';
import type { Backoff } from '../shared/retry.js';
import { HelixAccountInfo } from './account-info.js';
import { HelixClient } from './helix.js';
import { StreamWatch } from './stream-watch.js';
import { AccountWarmUp } from './warm-up.js';
import type { TwitchAuthStartup } from './startup.js';
import { giftdropCommand } from '../platform/invocation.js';

export interface TwitchApi {
  helix: HelixClient;
  /** The account rules gate for the engine, when any rule is set. */
  accounts?: AccountGate;
  /** With `eligibility.warmUp`: looks entrants up during the entry window (the bot feeds it the engine's `entered` events). */
  warmUp?: AccountWarmUp;
  /** `streaming.auto` is on: the stream watch, not `streaming.autoStart`, sets the status. Known at once. */
  readonly autoStreaming: boolean;
  /** Set by startWatch when `streaming.auto` is on. */
  watch?: StreamWatch;
  startWatch(): Promise<void>;
  stop(): Promise<void>;
}

export interface TwitchApiDeps {
  config: Config;
  auth: TwitchAuthStartup;
  chat: ChatPort;
  shop: ShopPort;
  clock: Clock;
  logger: Logger;
  /** Tests: Helix retry backoff. */
  retry?: Backoff;
  /** Called after auto streaming told Fourthwall the stream started (delivery reminders). */
  onLive?: () => void;
}

export function accountRulesFrom(config: Config): AccountRules {
  const e = config.settings.eligibility;
  return {
    followersOnly: e.followersOnly,
    minFollowDays: e.minFollowDays,
    minAccountDays: e.minAccountDays,
    uncheckable: e.uncheckable,
  };
}

export function twitchApiFor(d: TwitchApiDeps): TwitchApi | undefined {
  const { config, logger, clock, chat } = d;
  const log = logger.child({ module: 'twitch-api' });
  // The client the bot's token was issued to (a saved login's may differ from TWITCH_CLIENT_ID).
  const clientId = d.auth.clientId;
  const s = config.settings;
  const rules = accountRulesFrom(config);
  if (!clientId) {
    if (s.streaming.auto || accountRulesActive(rules))
      log.warn(
        'streaming.auto and the follower / account-age rules need TWITCH_CLIENT_ID (the Twitch API); they are off',
      );
    return undefined;
  }
  const helix = new HelixClient({
    apiUrl: config.twitch.apiUrl ?? 'https://api.twitch.tv/helix',
    clientId,
    token: d.auth.tokens,
    dispatcher: d.auth.auth.dispatcher,
    clock,
    logger,
    ...(d.retry ? { retry: d.retry } : {}),
  });
  const info = accountRulesActive(rules)
    ? new HelixAccountInfo({ helix, broadcasterId: () => chat.channelId(), clock, logger })
    : undefined;
  const accounts = info ? new AccountGate({ port: info, rules, chat, now: () => clock.now() }) : undefined;
  const warmUp =
    info && s.eligibility.warmUp
      ? new AccountWarmUp({
          accounts: info,
          budget: () => helix.budget(),
          follows: rules.followersOnly || rules.minFollowDays > 0,
          created: rules.minAccountDays > 0,
          clock,
          logger,
        })
      : undefined;
  // The follower rules need moderator:read:followers: say so at start rather than at the first close.
  const checkFollowScope = async () => {
    try {
      const v = await d.auth.auth.validate(d.auth.tokens.current());
      if (v.valid && !v.scopes.includes('moderator:read:followers'))
        log.warn(
          `TWITCH_TOKEN lacks the scope moderator:read:followers: the follower rules cannot check anyone (eligibility.uncheckable decides). Generate the token with it (${giftdropCommand('setup')} shows what is missing).`,
        );
    } catch (err) {
      log.debug({ err }, 'could not check the token scopes for the follower rules');
    }
  };
  let stopped = false;
  const api: TwitchApi = {
    helix,
    ...(accounts ? { accounts } : {}),
    ...(warmUp ? { warmUp } : {}),
    autoStreaming: s.streaming.auto,
    async startWatch() {
      if (stopped) return;
      if (accounts && (rules.followersOnly || rules.minFollowDays > 0)) void checkFollowScope();
      if (!s.streaming.auto) return;
      let id = chat.channelId();
      let why = 'not joined';
      if (!id) {
        try {
          id = (await helix.userByLogin(chat.channelLogin))?.id;
        } catch (err) {
          why = `the Twitch API did not answer: ${(err as Error).message}`;
          log.debug({ err }, 'could not look the channel up on the Twitch API');
        }
      }
      if (stopped) return; // stop() came while the channel was looked up
      if (!id) {
        // one line: what failed and what the bot does instead
        log.warn(
          `auto streaming is off: the channel id is not known (${why}); mods can set the streaming status with !stream live / offline`,
        );
        return;
      }
      const watch = new StreamWatch(
        {
          stream: (uid) => helix.stream(uid),
          start: async (info) => {
            const status = await d.shop.streamingStart(info);
            d.onLive?.();
            return status;
          },
          end: () => d.shop.streamingEnd(),
          status: () => d.shop.streamingStatus(),
          warn: (text) => chat.say(text, { priority: 'high' }),
          announce: (text) => chat.say(text),
        },
        {
          broadcaster: { id, login: chat.channelLogin },
          clock,
          logger,
          pollMs: s.streaming.pollSeconds * 1000,
          graceMs: s.streaming.offlineGraceSeconds * 1000,
        },
      );
      api.watch = watch;
      log.info(
        { pollSeconds: s.streaming.pollSeconds, graceSeconds: s.streaming.offlineGraceSeconds },
        'auto streaming: following the stream on the Twitch API',
      );
      await watch.start();
    },
    async stop() {
      stopped = true;
      warmUp?.stop();
      api.watch?.stop();
      await api.watch?.idle();
      await helix.close();
    },
  };
  return api;
}
