/**
 * What every step of a start (bot.ts) reads: the options startBot was given, with their defaults,
 * the settings mapped for the engine and the commands, the one stop list and the start-up
 * problems. Built once per start; holds no running part.
 */
import type { LoginStore } from '../twitch/login-store.js';
import type { HttpRoute } from '../http/server.js';
import type { Config } from '../config/index.js';
import type { FourthwallClientOptions } from '../fourthwall/index.js';
import type { DrawRepository, OperatorPort } from '../giveaway/ports.js';
import type { Logger } from '../logging/index.js';
import { systemClock, type Clock } from '../shared/clock.js';
import type { Backoff } from '../shared/retry.js';
import { cryptoRandom, type RandomSource } from '../shared/random.js';
import type { FileSystem } from '../storage/index.js';
import type { OutboxLimits } from '../twitch/index.js';
import type { ChatConnectOptions } from '../twitch/startup.js';
import { consoleOperator } from '../console/operator-console.js';
import { commandNamesFrom, giveawaySettingsFrom } from './settings.js';
import { StopList } from './stop-list.js';
import { StartupProblems } from './credential-problems.js';
import type { TwitchEventsOptions } from './twitch-events.js';

export interface BotOptions {
  config: Config;
  logger: Logger;
  clock?: Clock;
  random?: RandomSource;
  /** The streamer's console (links go here). Default: stdout. */
  operator?: OperatorPort;
  /** Outbox limits (tests and the demo may scale windows). */
  outbox?: Partial<OutboxLimits>;
  /** Start-up chat connection: backoff and an abort signal (tests). */
  chatConnect?: ChatConnectOptions;
  /** Extra client options (tests shorten timeouts). */
  client?: Partial<FourthwallClientOptions>;
  /** Event intake and catch-up poll tuning (tests: clock, short retry and poll intervals, poll in sandbox mode). */
  events?: { clock?: Clock; retryBaseMs?: number; pollIntervalMs?: number; forcePoll?: boolean };
  /** The file system under the storage's disk protocol (benches time its syncs). Default: this machine's. */
  fileSystem?: FileSystem;
  /** Wraps the draw storage the engine uses (fault-injection tests). */
  wrapRepository?: (repo: DrawRepository) => DrawRepository;
  /** Twitch API tuning (tests: short retry backoff). */
  twitchApi?: { retry?: Backoff };
  /** The setup page's saved Twitch logins (the process's one store; default: opened from DATA_DIR in live mode). */
  loginStore?: LoginStore;
  /** More routes on the streamer's own listener (the setup page), tried before the dashboard's. */
  localRoutes?: HttpRoute[];
  /** More routes on the public listener (the setup page's address check), tried after verify and claim. */
  publicRoutes?: HttpRoute[];
  /** EventSub and channel-point tuning (tests: keepalive window, backoffs). */
  twitchEvents?: TwitchEventsOptions;
  /**
   * A stop asked for while starting: aborts the start-up work in flight (chat connect and its
   * retries, Fourthwall calls, the catch-up poll), keeps the open draws journaled, and startBot
   * rejects with the signal's reason (or StopIncomplete when something could not be saved).
   */
  signal?: AbortSignal;
}

/** What every step reads: the options with their defaults, the settings, and the one stop list. */
export interface BotContext {
  options: BotOptions;
  config: Config;
  logger: Logger;
  log: Logger;
  clock: Clock;
  /** The clock of the event intake, the catch-up poll and the HTTP server's replay check (tests may set their own). */
  eventClock: Clock;
  random: RandomSource;
  operator: OperatorPort;
  file: Config['settings'];
  settings: ReturnType<typeof giveawaySettingsFrom>;
  names: ReturnType<typeof commandNamesFrom>;
  /** What to stop, in the one order of stop-list.ts; each part is registered as it is built. */
  stops: StopList;
  /** Credential problems found while starting (credential-problems.ts), for /healthz and the dashboard. */
  problems: StartupProblems;
}

export function botContext(options: BotOptions): BotContext {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  return {
    options,
    config,
    logger,
    log: logger.child({ module: 'bot' }),
    clock,
    eventClock: options.events?.clock ?? clock,
    random: options.random ?? cryptoRandom,
    // Prints to stdout, outside the logger; links only when stdout is a terminal (operator-console.ts).
    operator: options.operator ?? consoleOperator(),
    file: config.settings,
    settings: giveawaySettingsFrom(config.settings),
    names: commandNamesFrom(config.settings),
    stops: new StopList(),
    problems: new StartupProblems(),
  };
}
