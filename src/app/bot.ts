/**
 * The composition root of one running bot: builds the adapters (Fourthwall client and shop,
 * Twitch chat, file storage), the giveaway engine, the streaming module, the command registry
 * and the HTTP server, wires them, and registers each part's stop in one StopList as it is built
 * (stop-list.ts declares the order), which a failed start-up and `stop()` both run. Live mode and
 * sandbox mode both run exactly this; only the URLs and credentials in the Config differ.
 */
import type { Config } from '../config/index.js';
import { FourthwallClient, type FourthwallClientOptions } from '../fourthwall/index.js';
import { clientAuth } from '../fourthwall/auth.js';
import { GiveawayEngine } from '../giveaway/engine.js';
import type { PrivateDelivery } from '../giveaway/ports.js';
import type { DrawRepository, OperatorPort } from '../giveaway/ports.js';
import { startHttpServer, type BotHttpServerWithPages, type HealthReport } from '../http/server.js';
import { parseTrustProxy } from '../http/surfaces.js';
import type { Logger } from '../logging/index.js';
import { CommandRegistry } from '../commands/registry.js';
import { ChatLines } from '../commands/chat-lines.js';
import { enterCommand } from '../commands/enter.js';
import { giveawayCommand } from '../commands/giveaway.js';
import { claimCommand } from '../commands/claim.js';
import { streamCommand } from '../commands/stream.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { cryptoRandom, type RandomSource } from '../shared/random.js';
import { FileDrawRepository } from '../storage/index.js';
import { StreamingService } from '../streaming/service.js';
import { TwitchChat, type OutboxLimits } from '../twitch/index.js';
import { startTwitchAuth, type ChatConnectOptions } from '../twitch/startup.js';
import { startOperatorPages, type OperatorPages } from '../web/index.js';
import { commandNamesFrom, giveawaySettingsFrom } from './settings.js';
import { beaconForBot, checkHintFor } from '../fairness/beacon-client/bot-beacon.js';
import { verifyRoute } from '../http/verify-route.js';
import { FourthwallShop } from '../shop/shop-port.js';
import { EventIntake } from '../events/event-intake.js';
import { eventDispatch } from '../events/dispatch.js';
import type { EventPoller } from '../events/event-poll.js';
import { basicOnlyNotice, pinnedShopId, startCatchUp } from '../events/catch-up.js';
import { webhookTypesFor, type ShopFeatures } from '../shop/index.js';
import { createShopFeatures, registerShopCommands } from '../shop/wire.js';
import { consoleOperator } from '../console/operator-console.js';
import { twitchApiFor, type TwitchApi } from '../twitch/api.js';
import { DELIVERY_WEBHOOK_TYPES, type DeliveryTracker } from '../delivery/tracker.js';
import { startDelivery } from '../delivery/wire.js';
import { StopList, withTimeout } from './stop-list.js';

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
  /** Wraps the draw storage the engine uses (fault-injection tests). */
  wrapRepository?: (repo: DrawRepository) => DrawRepository;
  /** Twitch API tuning (tests: short retry backoff). */
  twitchApi?: { retryDelaysMs?: readonly number[] };
  /**
   * A stop asked for while starting: aborts the start-up work in flight (chat connect and its
   * retries, Fourthwall calls, the catch-up poll), keeps the open draws journaled, and startBot
   * rejects with the signal's reason (or StopIncomplete when something could not be saved).
   */
  signal?: AbortSignal;
}

/** A stop that ran to its end but could not save something; `message` says what. */
export class StopIncomplete extends Error {
  constructor(readonly unsaved: string[]) {
    super(`stopped, but ${unsaved.join('; ')}`);
    this.name = 'StopIncomplete';
  }
}

export interface Bot {
  readonly config: Config;
  readonly http: BotHttpServerWithPages;
  readonly chat: TwitchChat;
  readonly engine: GiveawayEngine;
  readonly streaming: StreamingService;
  readonly repo: FileDrawRepository;
  readonly client: FourthwallClient;
  /** Where every Fourthwall event enters (webhooks and the catch-up poll). */
  readonly events: EventIntake;
  /** The catch-up poll of GET /webhook-events (live mode, interval above 0). */
  readonly poller?: EventPoller;
  readonly webhookUrl: string;
  /** Supporter alerts, merch train, catalog, promotions, order feed (src/shop). */
  readonly shop: ShopFeatures;
  /** The webhook event types the bot subscribes to with the current settings. */
  readonly webhookTypes: readonly string[];
  /** The overlay and the dashboard (src/web). */
  readonly pages: OperatorPages;
  /** The Twitch API features (only with TWITCH_CLIENT_ID). */
  readonly twitchApi?: TwitchApi;
  /** Getting prizes to winners: delivery states, redemption, whispers, reminders (src/delivery). */
  readonly delivery: DeliveryTracker;
  health(): HealthReport;
  /**
   * Clean shutdown: stop webhooks, keep open draws journaled, drain the outbox briefly, flush.
   * Rejects with StopIncomplete when the draws or the history could not be saved.
   */
  stop(reason?: string): Promise<void>;
}

/** Prints to stdout, outside the logger; links only when stdout is a terminal (operator-console.ts). */
export const stdoutOperator: OperatorPort = consoleOperator();

/** The webhook event types the bot acts on (and subscribes to when it registers its webhook). */
export const BOT_WEBHOOK_TYPES = ['GIFT_DRAW_STARTED', 'GIFT_DRAW_ENDED', 'GIFT_PURCHASE'] as const;

const DRAIN_MS = 2000;
/** How long a clean shutdown waits for Fourthwall to accept "streaming ended" (beside the drain). */
const STREAMING_END_MS = 2000;
/** How long a start-up that failed or was stopped waits for each connection to close. */
const CLOSE_MS = 1000;

export async function startBot(options: BotOptions): Promise<Bot> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const random = options.random ?? cryptoRandom;
  const operator = options.operator ?? stdoutOperator;
  const log = logger.child({ module: 'bot' });
  const file = config.settings;
  const settings = giveawaySettingsFrom(file);
  const names = commandNamesFrom(file);

  if (!config.twitch.channel || !config.twitch.username || !config.twitch.token)
    throw new Error('startBot needs TWITCH_CHANNEL, TWITCH_USERNAME and TWITCH_TOKEN');

  // What to stop, in the one order of stop-list.ts; each part is registered as it is built.
  const stops = new StopList();
  const repo = await FileDrawRepository.open(config.dataDir, { clock, logger, mode: config.mode });
  stops.save('history', 'the draw history', () => repo.close());
  const client = new FourthwallClient({
    apiUrl: config.fourthwall.apiUrl,
    auth: clientAuth(config),
    rateLimit: config.fourthwall.rateLimit,
    logger,
    clock,
    ...(options.signal ? { signal: options.signal } : {}),
    ...options.client,
  });
  stops.close('fourthwall', () => client.close());
  const shop = new FourthwallShop(client, { logger, shopUrl: config.fourthwall.shopUrl });
  const twitchAuth = startTwitchAuth(config, logger, clock);
  stops.close('twitch-auth', () => twitchAuth.close());
  const chat = new TwitchChat({
    url: config.twitch.ircUrl,
    channel: config.twitch.channel,
    username: config.twitch.username,
    token: config.twitch.token,
    tokens: twitchAuth.tokens,
    logger,
    clock,
    outbox: { ...(config.twitch.outboxMax !== undefined ? { maxQueued: config.twitch.outboxMax } : {}), ...options.outbox },
  });
  stops.close('chat', () => chat.disconnect());
  const engineRepo = options.wrapRepository ? options.wrapRepository(repo) : repo;
  const twitchApi = twitchApiFor({ config, auth: twitchAuth, chat, shop, clock, logger, onLive: () => void delivery.tracker.streamStarted(), ...options.twitchApi });
  if (twitchApi) stops.close('twitch-api', () => twitchApi.stop());
  const beacon = await beaconForBot(config, { clock, logger });
  stops.close('beacon', () => beacon.close());
  const engine = new GiveawayEngine({
    chat, shop, repo: engineRepo, clock, random, logger, settings, operator,
    beacon: beacon.port,
    beaconWaitMs: file.fairness.beaconWaitSeconds * 1000,
    checkHint: checkHintFor(config),
    privateDelivery: (): PrivateDelivery => delivery.tracker.via(),
    ...(twitchApi?.accounts ? { accounts: twitchApi.accounts } : {}),
  });
  stops.save('engine', 'the open draws', () => engine.stop());
  // Account-check warm-up: entrants are queued as they enter (no wait), cleared when a draw closes.
  const warmUp = twitchApi?.warmUp;
  if (warmUp) {
    engine.events.on('entered', (_drawId, userId) => warmUp.add(userId));
    engine.events.on('draw-closed', () => warmUp.clear());
  }
  // Prizes to winners: claim page, whispers, redemption tracking, reminders (src/delivery).
  const delivery = startDelivery({ config, store: repo, engine, chat, messages: settings.messages, client, tokens: twitchAuth.tokens, clock, logger });
  stops.close('delivery', async () => {
    delivery.stop();
    await delivery.tracker.idle(); // its writes in flight end before the history is flushed
  });
  const streaming = new StreamingService({ shop, chat, logger, onLive: () => void delivery.tracker.streamStarted() });
  const shopFeatures = createShopFeatures({ config, client, shopDomain: () => shop.shopDomain(), chat, engine, history: repo, clock, logger });
  stops.close('shop-features', () => shopFeatures.stop());
  const webhookTypes = webhookTypesFor([...BOT_WEBHOOK_TYPES, ...DELIVERY_WEBHOOK_TYPES], file);
  // The giveaway types plus the ones the enabled shop features (alerts, merch train) act on.
  const handledTypes: ReadonlySet<string> = new Set(webhookTypes);

  const registry = new CommandRegistry({ clock, logger, prefix: names.prefix });
  registry.register(enterCommand(engine, names.names.enter, names.aliases.enter ?? []));
  const gw = giveawayCommand(engine, names.names.giveaway, names.aliases.giveaway ?? [], () => twitchApi?.accounts?.summary());
  registry.register({ ...gw, cooldown: { ...gw.cooldown, globalMs: Math.max(gw.cooldown?.globalMs ?? 0, names.statusCooldownMs) } });
  registry.register(claimCommand(engine, names.names.claim, names.aliases.claim ?? []));
  registry.register(streamCommand(streaming, names.names.stream, names.aliases.stream ?? [], () => twitchApi?.watch));
  registerShopCommands(registry, shopFeatures, config);

  // Chat connects while the rest of the bot starts (below); the lines it reads before the open
  // draws are restored are held, in order, and handled right after (commands/chat-lines.ts).
  const lines = new ChatLines(registry, (text) => chat.say(text), log);
  chat.on('message', lines.onMessage);

  // Fourthwall events (webhooks and the catch-up poll): one intake, one dedupe by event id.
  const shopId = pinnedShopId(client, log);
  const intake = new EventIntake({
    mode: config.mode,
    // The intake sets aside unknown and unused types (logged there), so only handled ones get here.
    handle: eventDispatch({ engine, delivery, shop: shopFeatures }),
    handledTypes,
    store: repo,
    shopId,
    clock: options.events?.clock ?? clock,
    logger,
    ...(options.events?.retryBaseMs !== undefined ? { retryBaseMs: options.events.retryBaseMs } : {}),
  });
  stops.close('intake', () => intake.stop());
  const health = (): HealthReport => {
    const c = chat.health();
    return { status: 'ok', mode: config.mode, chat: c.chat, ...(c.reason ? { chatReason: c.reason } : {}), openDraws: engine.openDrawCount() };
  };

  let http: BotHttpServerWithPages | undefined;
  let poller: EventPoller | undefined;
  let pages: OperatorPages | undefined;
  // The start-up connection (token check, socket, login, join) runs beside the rest of the start.
  const chatStop = new AbortController();
  stops.close('chat-connect', () => chatStop.abort());
  // The chat connect is aborted by a failed start-up (chatStop), a stop asked for (options.signal)
  // or the caller's own signal (tests).
  const chatSignals = [options.chatConnect?.signal, options.signal, chatStop.signal].filter((x): x is AbortSignal => x !== undefined);
  const chatConnected = twitchAuth.connect(chat, { ...options.chatConnect, signal: AbortSignal.any(chatSignals) });
  chatConnected.catch(() => undefined); // (awaited below; a failure meanwhile is not unhandled)
  try {
    // Open draws are restored before chat lines are handled, so no `!enter` typed right after the
    // (re)start finds the draw missing. Lines said meanwhile wait in the paused outbox.
    await engine.start();
    await shopFeatures.start();
    await delivery.tracker.start();
    options.signal?.throwIfAborted(); // a stop asked for meanwhile: no HTTP server, no chat
    lines.release();
    // The HTTP server (webhooks, /healthz) does not wait for chat: a webhook handled before chat
    // is connected queues its lines in the paused outbox like a restored draw's.
    const web = (pages = await startOperatorPages({
      config,
      engine,
      streaming,
      shop,
      repo,
      chat,
      settings,
      clock,
      logger,
      sessions: { now: () => clock.now() },
      ...(twitchApi?.accounts ? { accountRules: twitchApi.accounts.rules } : {}),
      delivery: delivery.tracker,
    }));
    stops.close('pages', () => web.close());
    const verify = verifyRoute(repo, logger);
    // A draw's page is rebuilt only when its record changed: a reroll, or winners reconciled at finish.
    engine.events.on('rerolled', (record) => verify.forget(record.id));
    engine.events.on('draw-finished', (record) => verify.forget(record.id));
    const server = (http = await startHttpServer({
      host: config.http.host,
      port: config.http.port,
      logger,
      secrets: { webhookSecret: config.fourthwall.webhookSecret, appHmacKey: config.fourthwall.appHmacKey },
      seenEvent: (id) => intake.isKnown(id),
      onEvent: async (event) => void (await intake.submit(event, 'webhook')),
      health,
      handledTypes,
      routes: [verify, ...(delivery.claimRoute ? [delivery.claimRoute] : [])],
      // The streamer's own pages on their own listener (loopback unless GIFTDROP_LOCAL_BIND).
      local: {
        host: config.http.localBind,
        port: config.http.localPort,
        routes: [(req, res) => web.handle(req, res)],
        localHosts: new Set(config.http.localHosts ?? []),
        ...(config.overlayKey ? { overlayKey: config.overlayKey } : {}),
      },
      trustProxy: parseTrustProxy(config.http.trustProxy),
      now: () => (options.events?.clock ?? clock).now(),
    }));
    stops.close('http', () => server.close());
    // Readiness reached: what loads the HTTP client or chat starts from here on.
    shopFeatures.startBackground();
    const notice = config.mode === 'live' ? basicOnlyNotice(config) : undefined;
    if (notice) log.warn(notice);
    // The shop id is pinned in the background; an event meanwhile waits for it (and a failure is
    // retried per event), so an unreachable Fourthwall never holds up the start.
    void shopId().catch((err: unknown) => log.warn({ err }, 'could not read the shop (GET /shops/current) yet; events wait until it is known'));
    poller = startCatchUp({
      config,
      client,
      intake,
      // Only the giveaway types: a late alert for an hour-old order would read wrong in chat.
      types: BOT_WEBHOOK_TYPES,
      clock: options.events?.clock ?? clock,
      logger,
      ...(options.events?.pollIntervalMs !== undefined ? { intervalMs: options.events.pollIntervalMs } : {}),
      force: options.events?.forcePoll,
    });
    const catchUp = poller;
    if (catchUp) stops.close('poller', () => catchUp.stop());
    options.signal?.throwIfAborted();
    await chatConnected;
    delivery.afterLogin();
  } catch (err) {
    // Start-up failed or was stopped: what talks to the outside gets CLOSE_MS each; the open draws
    // (journaled as they go) and the history are flushed in full, and a failure there is reported.
    const stopped = options.signal?.aborted === true && err === options.signal.reason;
    if (stopped) log.info('stop asked for during start-up: start-up work aborted');
    const unsaved = await stops.run(log, { closeMs: CLOSE_MS });
    if (stopped) {
      if (unsaved.length) throw new StopIncomplete(unsaved);
      log.info('stopped');
    }
    throw err;
  }
  const httpServer = http;
  const operatorPages = pages;
  const webhookUrl = `${httpServer.url}/webhooks/fourthwall`;
  // A clean stop drains the outbox and ends the streaming status we set, both bounded and side by
  // side, so a stop takes about DRAIN_MS at most (a start-up that failed has nothing to drain).
  stops.close('drain', () =>
    Promise.all([
      file.streaming.autoStart ? withTimeout(streaming.endIfStartedByUs(), STREAMING_END_MS) : undefined,
      withTimeout(chat.flush(), DRAIN_MS),
    ]),
  );

  void twitchApi?.startWatch().catch((err: unknown) => log.warn({ err }, 'auto streaming could not start; the Fourthwall streaming status stays as it is (mods: !stream live / offline)'));
  if (file.streaming.autoStart && !twitchApi?.autoStreaming) {
    await streaming.goLiveAtStart(names.names.stream);
  }

  log.info(
    {
      mode: config.mode,
      channel: config.twitch.channel,
      bot: config.twitch.username,
      chat: config.twitch.ircUrl,
      fourthwall: config.fourthwall.apiUrl,
      webhooks: webhookUrl,
      openDraws: engine.openDrawCount(),
      dataDir: config.dataDir,
    },
    `giftdrop ${config.mode}: chat #${config.twitch.channel} as ${config.twitch.username} via ${config.twitch.ircUrl}, Fourthwall at ${config.fourthwall.apiUrl}, webhooks at ${webhookUrl}, ${engine.openDrawCount()} open draw(s)`,
  );

  const tokenFrom = operatorPages.token.source === 'env' ? 'GIFTDROP_DASHBOARD_TOKEN' : operatorPages.token.file;
  log.info(
    { overlay: `${httpServer.localUrl}/overlay`, dashboard: `${httpServer.localUrl}/dashboard` },
    `overlay (OBS browser source) at ${httpServer.localUrl}/overlay; dashboard at ${httpServer.localUrl}/dashboard (sign in once with the token in ${tokenFrom})`,
  );

  let stopping: Promise<void> | undefined;
  const stop = (reason = 'shutdown') =>
    (stopping ??= (async () => {
      log.info({ reason }, 'shutting down');
      const unsaved = await stops.run(log);
      if (unsaved.length) throw new StopIncomplete(unsaved);
      log.info('stopped');
    })());

  return {
    config,
    http: httpServer,
    chat,
    engine,
    streaming,
    repo,
    client,
    events: intake,
    poller,
    webhookUrl,
    shop: shopFeatures,
    webhookTypes,
    pages: operatorPages,
    ...(twitchApi ? { twitchApi } : {}),
    delivery: delivery.tracker,
    health,
    stop,
  };
}
