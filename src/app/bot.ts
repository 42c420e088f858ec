/**
 * The composition root of one running bot. `startBot` reads top to bottom as the steps of a start:
 * each step builds one part from what the steps above built, registers its stop in the one
 * StopList (stop-list.ts declares the order; a failed start-up and `stop()` both run it) and hands
 * on what the next steps need. Nothing is bound late: what the engine needs of prize delivery
 * (how links reach winners) is built before it, and the delivery tracker after it.
 * Live mode and sandbox mode both run exactly this; only the URLs and credentials in the Config differ.
 */
import type { Config } from '../config/index.js';
import { FourthwallClient } from '../fourthwall/index.js';
import { GiveawayEngine } from '../giveaway/engine.js';
import { startHttpServer, type BotHttpServerWithPages, type HealthReport, type HttpRoute } from '../http/server.js';
import { parseTrustProxy } from '../http/surfaces.js';
import { ChatLines } from '../commands/chat-lines.js';
import { giveawayCommands } from '../commands/wire.js';
import { commandGate } from '../giveaway/shared-chat.js';
import { ChannelLogins } from '../twitch/channel-directory.js';
import { FileDrawRepository } from '../storage/index.js';
import { StreamingService } from '../streaming/service.js';
import { linkChat } from './chat-transport.js';
import type { ChatConnection } from '../twitch/chat-connection.js';
import { TwitchTokenError } from '../twitch/auth.js';
import { keepWebhookCurrent, type WebhookOutcome } from '../events/webhook-registration.js';
import { faviconRoute } from '../web/favicon.js';
import { startOperatorPages, type OperatorPages } from '../web/operator/index.js';
import { claimPageFor, type ClaimPageWiring } from '../web/public/claim-wiring.js';
import { verifyRoute } from '../web/public/verify-route.js';
import { botContext, type BotContext, type BotOptions } from './context.js';
import { openAdapters, type Adapters } from './adapters.js';
import { announcePages, announceStart } from './announce.js';
import { beaconForBot, checkHintFor } from '../beacon/bot-beacon.js';
import { EventIntake } from '../events/event-intake.js';
import { eventDispatch } from '../events/dispatch.js';
import type { EventPoller } from '../events/event-poll.js';
import { basicOnlyNotice, pinnedShopId, startCatchUp } from '../events/catch-up.js';
import { webhookTypesFor, type ShopFeatures } from '../shop/index.js';
import { createShopFeatures, registerShopCommands } from '../shop/wire.js';
import { twitchApiFor, type TwitchApi } from '../twitch/api.js';
import { DELIVERY_WEBHOOK_TYPES, type DeliveryTracker } from '../delivery/tracker.js';
import { deliveryChannels, startDelivery, type DeliveryChannels, type DeliveryWiring } from '../delivery/wire.js';
import type { Reach } from '../delivery/winner-reach.js';
import { withTimeout } from './stop-list.js';
import { fourthwallCredentialProblem } from './credential-problems.js';
import { startTwitchEvents, type TwitchEvents } from './twitch-events.js';

export type { BotOptions };

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
  /** Twitch chat, over IRC (the default) or EventSub (`chat.transport`): src/twitch/chat-connection.ts. */
  readonly chat: ChatConnection;
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
  /** The overlay and the dashboard (src/web/operator). */
  readonly pages: OperatorPages;
  /** The Twitch API features (only with TWITCH_CLIENT_ID). */
  readonly twitchApi?: TwitchApi;
  /** Getting prizes to winners: delivery states, redemption, whispers, reminders (src/delivery). */
  readonly delivery: DeliveryTracker;
  /** Whether the claim page and the whispers are on, and what turns each on (the dashboard and the setup page say it). */
  reach(): Reach[];
  /** Live mode with GIFTDROP_PUBLIC_URL: the webhook configuration brought to that address (undefined: refused). */
  readonly webhookRegistered?: Promise<WebhookOutcome | undefined>;
  /** Twitch beyond chat: the token port, the EventSub client, channel points and bits (app/twitch-events.ts). */
  readonly twitchEvents: TwitchEvents;
  health(): HealthReport;
  /**
   * Clean shutdown: stop webhooks, keep open draws journaled, drain the outbox briefly, flush.
   * Rejects with StopIncomplete when the draws or the history could not be saved.
   */
  stop(reason?: string): Promise<void>;
}

/** The webhook event types the bot acts on (and subscribes to when it registers its webhook). */
export const BOT_WEBHOOK_TYPES = ['GIFT_DRAW_STARTED', 'GIFT_DRAW_ENDED', 'GIFT_PURCHASE'] as const;

const DRAIN_MS = 2000;
/** How long a clean shutdown waits for Fourthwall to accept "streaming ended" (beside the drain). */
const STREAMING_END_MS = 2000;
/** How long a start-up that failed or was stopped waits for each connection to close. */
const CLOSE_MS = 1000;

/**
 * Starts one bot, one step a line. A start-up that fails (or is stopped) after the chat connect
 * began runs the stop list with CLOSE_MS per connection (serveAndConnect).
 */
export async function startBot(options: BotOptions): Promise<Bot> {
  const c = botContext(options);
  const adapters = await openAdapters(c);
  const streaming = new StreamingService({ shop: adapters.shop, chat: adapters.chat, logger: c.logger });
  const twitchApi = startTwitchApi(c, adapters, streaming);
  // Prize delivery in two steps: how links reach winners before the engine, its tracker after it.
  const claimPage = claimPageFor(c.config, c.logger);
  const channels = startDeliveryChannels(c, adapters, claimPage);
  const channelLogins = channelDirectory(c, adapters, twitchApi);
  const engine = await buildEngine(c, adapters, twitchApi, channels, channelLogins);
  const delivery = startPrizeDelivery(c, adapters, engine, channels);
  const twitchEvents = startTwitchEventsFor(c, adapters, twitchApi, engine);
  linkChatTransport(c, adapters, { twitchApi, twitchEvents, channelLogins });
  streaming.on('live', () => void delivery.tracker.streamStarted());
  const shop = startShopFeatures(c, adapters, engine);
  const lines = wireChatCommands(c, { chat: adapters.chat, engine, streaming, shop, twitchApi });
  const intake = startEventIntake(c, adapters, { engine, delivery, shop });
  const health = healthReport(c, adapters.chat, engine, twitchEvents);
  const chatConnected = connectChatAtStart(c, adapters);
  const parts = { adapters, engine, streaming, delivery, claimPage, shop, lines, intake, health, twitchApi };
  const served = await serveAndConnect(c, { ...parts, twitchEvents, chatConnected });
  registerDrain(c, streaming, adapters.chat);
  await startStreamingStatus(c, twitchApi, streaming);
  const webhookUrl = `${served.http.url}/webhooks/fourthwall`;
  announceStart(c, { engine, webhookUrl });
  const webhookRegistered = keepWebhookAddress(c, adapters.client, shop.webhookTypes);
  checkPublicAddress(c);
  return {
    config: c.config,
    http: served.http,
    chat: adapters.chat,
    engine,
    streaming,
    repo: adapters.repo,
    client: adapters.client,
    events: intake.intake,
    poller: served.poller,
    webhookUrl,
    shop: shop.features,
    webhookTypes: shop.webhookTypes,
    pages: served.pages,
    ...(twitchApi ? { twitchApi } : {}),
    delivery: delivery.tracker,
    reach: () => delivery.reach(),
    ...(webhookRegistered ? { webhookRegistered } : {}),
    twitchEvents,
    health,
    stop: stopOnce(c),
  };
}

/** Live mode: a public address that does not reach this bot (a stopped or renewed tunnel) is one problem line. */
function checkPublicAddress(c: BotContext): void {
  const { config, options } = c;
  if (config.mode !== 'live' || !config.publicUrl || !options.checkPublicUrl) return;
  const stop = new AbortController();
  c.stops.close('public-address-check', () => stop.abort());
  void options.checkPublicUrl(config.publicUrl, stop.signal).then((line) => {
    if (line && !stop.signal.aborted && c.problems.add(line)) c.log.error(line);
  });
}

/**
 * A new tunnel address costs nothing: in live mode with GIFTDROP_PUBLIC_URL, the one webhook
 * configuration at Fourthwall follows it (events/webhook-registration.ts), in the background; a
 * refusal is one line for /healthz and the dashboard.
 */
function keepWebhookAddress(c: BotContext, client: FourthwallClient, types: readonly string[]) {
  const { config } = c;
  if (config.mode !== 'live' || !config.publicUrl) return undefined;
  return keepWebhookCurrent({
    client,
    publicUrl: config.publicUrl,
    types,
    dataDir: config.dataDir,
    log: c.log,
    problem: (line) => (c.problems.add(line) ? c.log.error(line) : undefined),
  });
}

/** The logins of the channels whose viewers may chat here (Shared Chat's participants, by id). */
function channelDirectory(c: BotContext, a: Adapters, twitchApi: TwitchApi | undefined): ChannelLogins {
  const { clock, logger } = c;
  return new ChannelLogins({ chat: a.chat, ...(twitchApi ? { api: twitchApi.helix } : {}), clock, logger });
}

/** What the EventSub chat transport reaches Twitch through, once built (app/chat-transport.ts). */
function linkChatTransport(
  c: BotContext,
  a: Adapters,
  p: { twitchApi: TwitchApi | undefined; twitchEvents: TwitchEvents; channelLogins: ChannelLogins },
): void {
  const { twitchApi, twitchEvents, channelLogins: channels } = p;
  linkChat(c, a.chat, { twitchAuth: a.twitchAuth, helix: twitchApi?.helix, eventSub: twitchEvents.eventSub, channels });
}

/**
 * The Twitch API (with TWITCH_CLIENT_ID): Helix, auto streaming, account rules. A stream start
 * its watch tells Fourthwall reaches the streaming module's `live` listeners.
 */
function startTwitchApi(c: BotContext, a: Adapters, streaming: StreamingService): TwitchApi | undefined {
  const twitchApi = twitchApiFor({
    config: c.config,
    auth: a.twitchAuth,
    chat: a.chat,
    shop: a.shop,
    clock: c.clock,
    logger: c.logger,
    onLive: () => streaming.startedElsewhere(),
    ...c.options.twitchApi,
  });
  if (twitchApi) c.stops.close('twitch-api', () => twitchApi.stop());
  return twitchApi;
}

/**
 * The drand beacon and the giveaway engine over the (possibly wrapped) history, told how links
 * reach winners (`channels`); the account-check warm-up fed by its events.
 */
async function buildEngine(
  c: BotContext,
  a: Adapters,
  twitchApi: TwitchApi | undefined,
  channels: DeliveryChannels,
  channelLogins: ChannelLogins,
): Promise<GiveawayEngine> {
  const { config, clock, logger, options, stops } = c;
  const beacon = await beaconForBot(config, { clock, logger });
  stops.close('beacon', () => beacon.close());
  const engine = new GiveawayEngine({
    chat: a.chat,
    shop: a.shop,
    repo: options.wrapRepository ? options.wrapRepository(a.repo) : a.repo,
    clock,
    random: c.random,
    logger,
    settings: c.settings,
    operator: c.operator,
    beacon: beacon.port,
    beaconWaitMs: c.file.fairness.beaconWaitSeconds * 1000,
    checkHint: checkHintFor(config),
    privateDelivery: () => channels.via(),
    channelDirectory: channelLogins,
    ...(twitchApi?.accounts ? { accounts: twitchApi.accounts } : {}),
  });
  stops.save('engine', 'the open draws', () => engine.stop());
  // Account-check warm-up: entrants are queued as they enter (no wait), cleared when a draw closes.
  const warmUp = twitchApi?.warmUp;
  if (warmUp) {
    engine.events.on('entered', (_drawId, userId) => warmUp.add(userId));
    engine.events.on('draw-closed', () => warmUp.clear());
  }
  return engine;
}

/** What needs no engine of prize delivery: the whispers, and how links reach winners (src/delivery). */
function startDeliveryChannels(c: BotContext, a: Adapters, claimPage?: ClaimPageWiring): DeliveryChannels {
  const { config, clock, logger } = c;
  return deliveryChannels({ config, tokens: a.twitchAuth.tokens, claimUrl: claimPage?.url, clock, logger });
}

/** The delivery tracker over the history, following the engine's winners (src/delivery). */
function startPrizeDelivery(c: BotContext, a: Adapters, engine: GiveawayEngine, channels: DeliveryChannels) {
  const { config, clock, logger } = c;
  const { repo: store, chat, client } = a;
  const messages = c.settings.messages;
  const delivery = startDelivery(channels, { config, store, engine, chat, messages, client, clock, logger });
  c.stops.close('delivery', async () => {
    await delivery.stop(); // the whisper queue saved
    await delivery.tracker.idle(); // its writes in flight end before the history is flushed
  });
  return delivery;
}

/** Channel points, bits and the EventSub client (app/twitch-events.ts); started once the open draws are restored. */
function startTwitchEventsFor(c: BotContext, a: Adapters, twitchApi: TwitchApi | undefined, engine: GiveawayEngine) {
  const { config, problems, clock, logger } = c;
  const options = c.options.twitchEvents;
  const events = startTwitchEvents({ config, auth: a.twitchAuth, twitchApi, engine, problems, clock, logger, options });
  c.stops.close('twitch-events', () => events.stop());
  return events;
}

interface ShopWiring {
  features: ShopFeatures;
  /** The webhook event types the bot subscribes to with the current settings. */
  webhookTypes: readonly string[];
  /** The giveaway types plus the ones the enabled shop features (alerts, merch train) act on. */
  handledTypes: ReadonlySet<string>;
}

function startShopFeatures(c: BotContext, a: Adapters, engine: GiveawayEngine): ShopWiring {
  const { config, clock, logger } = c;
  const { client, chat, repo: history } = a;
  const shopDomain = () => a.shop.shopDomain();
  const features = createShopFeatures({ config, client, shopDomain, chat, engine, history, clock, logger });
  c.stops.close('shop-features', () => features.stop());
  const webhookTypes = webhookTypesFor([...BOT_WEBHOOK_TYPES, ...DELIVERY_WEBHOOK_TYPES], c.file);
  return { features, webhookTypes, handledTypes: new Set(webhookTypes) };
}

/**
 * The chat commands, and chat lines into them. Chat connects while the rest of the bot starts;
 * the lines it reads before the open draws are restored are held, in order, and handled right
 * after (commands/chat-lines.ts).
 */
interface CommandParts {
  chat: ChatConnection;
  engine: GiveawayEngine;
  streaming: StreamingService;
  shop: ShopWiring;
  twitchApi?: TwitchApi;
}

function wireChatCommands(c: BotContext, p: CommandParts): ChatLines {
  const { chat, engine, streaming, twitchApi } = p;
  const { names, clock, logger } = c;
  const statusNote = () =>
    twitchApi?.accounts?.summary(
      engine
        .drawViews()
        .filter((v) => v.active)
        .map((v) => v.record.id),
    );
  const autoStreaming = () => twitchApi?.watch;
  const admit = commandGate(c.settings.sharedChat, () => chat.channelId());
  const registry = giveawayCommands({ names, engine, streaming, statusNote, autoStreaming, admit, clock, logger });
  registerShopCommands(registry, p.shop.features, c.config);
  const lines = new ChatLines(registry, (text) => chat.say(text), c.log);
  chat.on('message', lines.onMessage);
  return lines;
}

interface EventWiring {
  intake: EventIntake;
  /** The shop id, pinned once (in the background after start-up); events wait for it. */
  shopId: () => Promise<string>;
}

/** Fourthwall events (webhooks and the catch-up poll): one intake, one dedupe by event id. */
function startEventIntake(
  c: BotContext,
  a: Adapters,
  p: { engine: GiveawayEngine; delivery: DeliveryWiring; shop: ShopWiring },
): EventWiring {
  const { options } = c;
  const shopId = pinnedShopId(a.client, c.log);
  const intake = new EventIntake({
    mode: c.config.mode,
    // The intake sets aside unknown and unused types (logged there), so only handled ones get here.
    handle: eventDispatch({ engine: p.engine, delivery: p.delivery, shop: p.shop.features }),
    handledTypes: p.shop.handledTypes,
    store: a.repo,
    shopId,
    clock: c.eventClock,
    logger: c.logger,
    ...(options.events?.retryBaseMs !== undefined ? { retryBaseMs: options.events.retryBaseMs } : {}),
  });
  c.stops.close('intake', () => intake.stop());
  return { intake, shopId };
}

function healthReport(
  c: BotContext,
  chat: ChatConnection,
  engine: GiveawayEngine,
  twitch: TwitchEvents,
): () => HealthReport {
  return () => {
    const h = chat.health();
    const problems = c.problems.list();
    return {
      status: 'ok',
      mode: c.config.mode,
      chat: h.chat,
      ...(h.reason ? { chatReason: h.reason } : {}),
      chatTransport: chat.transport,
      ...twitch.health(),
      openDraws: engine.openDrawCount(),
      ...(problems.length ? { problems } : {}),
    };
  };
}

/**
 * The start-up connection (token check, socket, login, join), run beside the rest of the start.
 * Aborted by a failed start-up (its stop), a stop asked for (options.signal) or the caller's own
 * signal (tests). Awaited by serveAndConnect; a failure meanwhile is not unhandled.
 */
function connectChatAtStart(c: BotContext, a: Adapters): Promise<void> {
  const { options } = c;
  const chatStop = new AbortController();
  c.stops.close('chat-connect', () => chatStop.abort());
  const signals = [options.chatConnect?.signal, options.signal, chatStop.signal].filter((x) => x !== undefined);
  const connecting = a.twitchAuth.connect(a.chat, { ...options.chatConnect, signal: AbortSignal.any(signals) });
  const chatConnected = connecting.catch((err: unknown) => {
    // A saved login Twitch refuses does not stop the bot: the dashboard and /healthz say to log in
    // again on the setup page (which restarts the bot); chat stays off meanwhile.
    if (a.twitchAuth.logins.source('bot')?.source !== 'saved' || !(err instanceof TwitchTokenError)) throw err;
    if (!a.twitchAuth.tokens.revoked() && c.problems.add(err.message)) c.log.error(err.message);
  });
  chatConnected.catch(() => undefined);
  return chatConnected;
}

interface StartedParts {
  adapters: Adapters;
  engine: GiveawayEngine;
  streaming: StreamingService;
  delivery: DeliveryWiring;
  /** The claim page (with GIFTDROP_PUBLIC_URL and the Twitch application's id and secret). */
  claimPage: ClaimPageWiring | undefined;
  shop: ShopWiring;
  lines: ChatLines;
  intake: EventWiring;
  health: () => HealthReport;
  twitchApi: TwitchApi | undefined;
  twitchEvents: TwitchEvents;
  chatConnected: Promise<void>;
}

interface Served {
  http: BotHttpServerWithPages;
  pages: OperatorPages;
  poller?: EventPoller;
}

/**
 * Restores the open draws, starts the pages, the HTTP server and the background work, then waits
 * for chat. A failure (or a stop asked for) on the way stops what was built: what talks to the
 * outside gets CLOSE_MS each; the open draws (journaled as they go) and the history are flushed in
 * full, and a failure there is reported.
 */
async function serveAndConnect(c: BotContext, p: StartedParts): Promise<Served> {
  const { options, log } = c;
  try {
    await restoreBeforeChat(c, p);
    const pages = await startPages(c, p);
    const http = await startServer(c, p, pages);
    announcePages(c, http, pages);
    const poller = startBackground(c, p);
    options.signal?.throwIfAborted();
    await p.chatConnected;
    p.delivery.afterLogin();
    return { http, pages, poller };
  } catch (err) {
    const stopped = options.signal?.aborted === true && err === options.signal.reason;
    if (stopped) log.info('stop asked for during start-up: start-up work aborted');
    const unsaved = await c.stops.run(log, { closeMs: CLOSE_MS });
    if (stopped) {
      if (unsaved.length) throw new StopIncomplete(unsaved);
      log.info('stopped');
    }
    throw err;
  }
}

/**
 * Open draws are restored before chat lines are handled, so no `!enter` typed right after the
 * (re)start finds the draw missing. Lines said meanwhile wait in the paused outbox.
 */
async function restoreBeforeChat(c: BotContext, p: StartedParts): Promise<void> {
  await p.engine.start();
  await p.shop.features.start();
  await p.delivery.tracker.start();
  c.options.signal?.throwIfAborted(); // a stop asked for meanwhile: no HTTP server, no chat
  p.lines.release();
}

/** The overlay and the dashboard (src/web/operator). */
async function startPages(c: BotContext, p: StartedParts): Promise<OperatorPages> {
  const { config, clock, logger } = c;
  const web = await startOperatorPages({
    config,
    engine: p.engine,
    streaming: p.streaming,
    shop: p.adapters.shop,
    repo: p.adapters.repo,
    chat: p.adapters.chat,
    settings: c.settings,
    clock,
    logger,
    ...(p.twitchApi?.accounts ? { accountRules: p.twitchApi.accounts.rules } : {}),
    delivery: p.delivery.tracker,
    problems: () => c.problems.list(),
    alerts: p.shop.features.alerts,
    twitchEvents: () => p.twitchEvents.health(),
    reach: () => p.delivery.reach(),
  });
  c.stops.close('pages', () => web.close());
  return web;
}

/** The public pages' routes (src/web/public): verify, claim (when on), and the icon. */
function publicRoutes(c: BotContext, p: StartedParts): HttpRoute[] {
  const { engine, claimPage } = p;
  const verify = verifyRoute(p.adapters.repo, c.logger);
  // A draw's page is rebuilt only when its record changed: a reroll, or winners reconciled at finish.
  engine.events.on('rerolled', (record) => verify.forget(record.id));
  engine.events.on('draw-finished', (record) => verify.forget(record.id));
  const channel = c.config.twitch.channel ?? '';
  const claim = claimPage?.mount({ prizes: p.delivery.tracker, channel, clock: c.clock });
  return [verify, ...(claim ? [claim] : []), ...(c.options.publicRoutes ?? []), faviconRoute];
}

/**
 * The HTTP server (webhooks, /healthz, verify, claim and the pages). It does not wait for chat: a
 * webhook handled before chat is connected queues its lines in the paused outbox like a restored draw's.
 */
async function startServer(c: BotContext, p: StartedParts, web: OperatorPages): Promise<BotHttpServerWithPages> {
  const { config, logger } = c;
  const { intake } = p;
  const server = await startHttpServer({
    host: config.http.host,
    port: config.http.port,
    logger,
    secrets: { webhookSecret: config.fourthwall.webhookSecret, appHmacKey: config.fourthwall.appHmacKey },
    // Answered 200 once the event is safe (its id and what it opened synced), 503 otherwise.
    onEvent: (event) => intake.intake.receive(event),
    health: p.health,
    handledTypes: p.shop.handledTypes,
    routes: publicRoutes(c, p),
    // The streamer's own pages on their own listener (loopback unless GIFTDROP_LOCAL_BIND).
    local: {
      host: config.http.localBind,
      port: config.http.localPort,
      routes: [...(c.options.localRoutes ?? []), (req, res) => web.handle(req, res)],
      localHosts: new Set(config.http.localHosts ?? []),
      ...(config.overlayKey ? { overlayKey: config.overlayKey } : {}),
    },
    trustProxy: parseTrustProxy(config.http.trustProxy),
    now: () => c.eventClock.now(),
  });
  c.stops.close('http', () => server.close());
  return server;
}

/**
 * Readiness reached: what loads the HTTP client or chat starts from here on (shop background
 * work, the shop id, the catch-up poll).
 */
function startBackground(c: BotContext, p: StartedParts): EventPoller | undefined {
  const { config, log, options } = c;
  p.shop.features.startBackground();
  // Channel points and bits, now that the open draws are restored (a pending redemption finds its draw).
  void p.twitchEvents.start().catch((err: unknown) => log.error({ err }, 'channel points / bits could not start'));
  const notice = config.mode === 'live' ? basicOnlyNotice(config) : undefined;
  if (notice) log.warn(notice);
  // The shop id is pinned in the background; an event meanwhile waits for it (and a failure is
  // retried per event), so an unreachable Fourthwall never holds up the start.
  // Credentials Fourthwall refuses are said once, in one line naming the variables (and kept for
  // /healthz and the dashboard); anything else is retried with the next event.
  void p.intake.shopId().catch((err: unknown) => {
    // Credentials the setup page saved are fixed there (a value from .env wins and is fixed in .env).
    const fromPage = Boolean(config.savedSetup?.live && !config.savedSetup.overridden.includes('FOURTHWALL_PASSWORD'));
    const problem = fourthwallCredentialProblem(config.fourthwall.auth, err, { fromPage });
    const waiting = 'could not read the shop (GET /shops/current) yet; events wait until it is known';
    if (!problem) return log.warn({ err }, waiting);
    if (c.problems.add(problem)) log.error(problem);
  });
  const poller = startCatchUp({
    config,
    client: p.adapters.client,
    intake: p.intake.intake,
    // Only the giveaway types: a late alert for an hour-old order would read wrong in chat.
    types: BOT_WEBHOOK_TYPES,
    clock: c.eventClock,
    logger: c.logger,
    ...(options.events?.pollIntervalMs !== undefined ? { intervalMs: options.events.pollIntervalMs } : {}),
    force: options.events?.forcePoll,
  });
  if (poller) c.stops.close('poller', () => poller.stop());
  return poller;
}

/**
 * A clean stop drains the outbox and ends the streaming status we set, both bounded and side by
 * side, so a stop takes about DRAIN_MS at most (a start-up that failed has nothing to drain).
 */
function registerDrain(c: BotContext, streaming: StreamingService, chat: ChatConnection): void {
  c.stops.close('drain', () =>
    Promise.all([
      c.file.streaming.autoStart ? withTimeout(streaming.endIfStartedByUs(), STREAMING_END_MS) : undefined,
      withTimeout(chat.flush(), DRAIN_MS),
    ]),
  );
}

/** The Fourthwall streaming status: the stream watch (`streaming.auto`), or `streaming.autoStart` at start. */
async function startStreamingStatus(c: BotContext, twitchApi: TwitchApi | undefined, streaming: StreamingService) {
  const notStarted =
    'auto streaming could not start; the Fourthwall streaming status stays as it is (mods: !stream live / offline)';
  void twitchApi?.startWatch().catch((err: unknown) => c.log.warn({ err }, notStarted));
  if (c.file.streaming.autoStart && !twitchApi?.autoStreaming) {
    await streaming.goLiveAtStart(c.names.names.stream);
  }
}

/** `Bot.stop`: runs the stop list once (a second call gets the first call's promise). */
function stopOnce(c: BotContext): (reason?: string) => Promise<void> {
  let stopping: Promise<void> | undefined;
  return (reason = 'shutdown') =>
    (stopping ??= (async () => {
      c.log.info({ reason }, 'shutting down');
      const unsaved = await c.stops.run(c.log);
      if (unsaved.length) throw new StopIncomplete(unsaved);
      c.log.info('stopped');
    })());
}
