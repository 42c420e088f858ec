/**
 * The composition root of one running bot: builds the adapters (Fourthwall client and shop,
 * Twitch chat, file storage), the giveaway engine, the streaming module, the command registry
 * and the HTTP server, wires them, and shuts them down in order. Live mode and sandbox mode
 * both run exactly this; only the URLs and credentials in the Config differ.
 */
import type { Config } from '../config/index.js';
import { FourthwallClient, type AuthConfig, type FourthwallClientOptions, type WebhookEvent } from '../fourthwall/index.js';
import { GiveawayService } from '../giveaway/service.js';
import type { OperatorPort } from '../giveaway/ports.js';
import { startHttpServer, type BotHttpServer, type HealthReport } from '../http/server.js';
import type { Logger } from '../logging/index.js';
import { CommandRegistry } from '../commands/registry.js';
import { enterCommand } from '../commands/enter.js';
import { giveawayCommand } from '../commands/giveaway.js';
import { claimCommand } from '../commands/claim.js';
import { streamCommand } from '../commands/stream.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { cryptoRandom, type RandomSource } from '../shared/random.js';
import { FileDrawRepository } from '../storage/index.js';
import { StreamingService } from '../streaming/service.js';
import { TwitchChat, type OutboxLimits } from '../twitch/index.js';
import { commandNamesFrom, giveawaySettingsFrom } from './settings.js';
import { beaconForBot, checkHintFor } from './beacon.js';
import { verifyRoute } from '../http/verify-route.js';
import { FourthwallShop, toDrawInfo, toPurchaseInfo } from './shop.js';

export interface BotOptions {
  config: Config;
  logger: Logger;
  clock?: Clock;
  random?: RandomSource;
  /** The streamer's console (links go here). Default: stdout. */
  operator?: OperatorPort;
  /** Outbox limits (tests and the demo may scale windows). */
  outbox?: Partial<OutboxLimits>;
  /** Extra client options (tests shorten timeouts). */
  client?: Partial<FourthwallClientOptions>;
}

export interface Bot {
  readonly config: Config;
  readonly http: BotHttpServer;
  readonly chat: TwitchChat;
  readonly service: GiveawayService;
  readonly streaming: StreamingService;
  readonly repo: FileDrawRepository;
  readonly client: FourthwallClient;
  readonly webhookUrl: string;
  health(): HealthReport;
  /** Clean shutdown: stop webhooks, keep open draws journaled, drain the outbox briefly, flush. */
  stop(reason?: string): Promise<void>;
}

/** Prints to stdout, outside the logger (so links never reach log lines). */
export const stdoutOperator: OperatorPort = {
  notify(line) {
    process.stdout.write(`[giftdrop] ${line}\n`);
  },
};

export function clientAuth(config: Config): AuthConfig {
  const a = config.fourthwall.auth;
  if (a.kind === 'basic') return { basic: { username: a.username, password: a.password } };
  if (a.kind === 'oauth') {
    if (a.clientId)
      return {
        oauth: {
          clientId: a.clientId,
          clientSecret: a.clientSecret,
          tokenUrl: config.fourthwall.tokenUrl,
          accessToken: a.accessToken,
          refreshToken: a.refreshToken,
        },
      };
    return { bearerToken: a.accessToken };
  }
  return {};
}

/** The webhook event types the bot acts on (and subscribes to when it registers its webhook). */
export const BOT_WEBHOOK_TYPES = ['GIFT_DRAW_STARTED', 'GIFT_DRAW_ENDED', 'GIFT_PURCHASE'] as const;

const DRAIN_MS = 2000;
/** How long a clean shutdown waits for Fourthwall to accept "streaming ended". */
const STREAMING_END_MS = 5000;

/** Waits for `p` at most `ms` (real time); never rejects. */
function withTimeout(p: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    t.unref();
    p.then(
      () => (clearTimeout(t), resolve()),
      () => (clearTimeout(t), resolve()),
    );
  });
}

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

  const repo = await FileDrawRepository.open(config.dataDir, { clock, logger });
  const client = new FourthwallClient({
    apiUrl: config.fourthwall.apiUrl,
    auth: clientAuth(config),
    rateLimit: config.fourthwall.rateLimit,
    logger,
    clock,
    ...options.client,
  });
  const shop = new FourthwallShop(client, { logger, shopUrl: config.fourthwall.shopUrl });
  const chat = new TwitchChat({
    url: config.twitch.ircUrl,
    channel: config.twitch.channel,
    username: config.twitch.username,
    token: config.twitch.token,
    logger,
    clock,
    outbox: options.outbox,
  });
  const beacon = await beaconForBot(config, { clock, logger });
  const service = new GiveawayService({
    chat, shop, repo, clock, random, logger, settings, operator,
    beacon: beacon.port,
    beaconWaitMs: file.fairness.beaconWaitSeconds * 1000,
    checkHint: checkHintFor(config),
  });
  const streaming = new StreamingService({ shop, chat, logger });

  const registry = new CommandRegistry({ clock, logger, prefix: names.prefix });
  registry.register(enterCommand(service, names.names.enter, names.aliases.enter ?? []));
  const gw = giveawayCommand(service, names.names.giveaway, names.aliases.giveaway ?? []);
  registry.register({ ...gw, cooldown: { ...gw.cooldown, globalMs: Math.max(gw.cooldown?.globalMs ?? 0, names.statusCooldownMs) } });
  registry.register(claimCommand(service, names.names.claim, names.aliases.claim ?? []));
  registry.register(streamCommand(streaming, names.names.stream, names.aliases.stream ?? []));

  chat.on('message', (msg) => {
    try {
      registry.handle(msg, (text) => chat.say(text));
    } catch (err) {
      log.error({ err }, 'chat message handling failed');
    }
  });

  // Webhooks: in-memory duplicate guard (also between concurrent deliveries) + durable ids.
  const seen = new Set<string>();
  const seenOrder: string[] = [];
  const remember = (id: string) => {
    seen.add(id);
    seenOrder.push(id);
    if (seenOrder.length > 10_000) seen.delete(seenOrder.shift()!);
  };
  const onEvent = async (event: WebhookEvent) => {
    if (await repo.isEventProcessed(event.id)) {
      log.info({ eventId: event.id, type: event.type }, 'webhook already processed before; ignored');
      return;
    }
    await dispatch(event);
    // Marked only once handled (the draw is saved by then): a crash in between lets a
    // redelivery through, and the engine ignores a draw id it already has.
    await repo.markEventProcessed(event.id);
  };
  const dispatch = async (event: WebhookEvent) => {
    if (!event.known) {
      log.debug({ eventId: event.id, type: event.type }, 'unknown webhook type acknowledged and ignored');
      return;
    }
    switch (event.type) {
      case 'GIFT_DRAW_STARTED':
        await service.handleGiftDrawStarted(toDrawInfo(event.data), event.id);
        break;
      case 'GIFT_DRAW_ENDED':
        await service.handleGiftDrawEnded(toDrawInfo(event.data));
        break;
      case 'GIFT_PURCHASE':
        await service.handleGiftPurchase(toPurchaseInfo(event.data), event.id);
        break;
      default:
        log.debug({ eventId: event.id, type: event.type }, 'webhook type not used by the bot; ignored');
    }
  };

  const health = (): HealthReport => ({
    status: 'ok',
    mode: config.mode,
    chat: chat.state,
    openDraws: service.openDrawCount(),
  });

  let http: BotHttpServer | undefined;
  try {
    // Open draws are restored before chat connects, so no `!enter` typed right after the
    // (re)start finds the draw missing. Lines said meanwhile wait in the paused outbox.
    await service.start();
    await chat.connect();
    http = await startHttpServer({
      host: config.http.host,
      port: config.http.port,
      logger,
      secrets: { webhookSecret: config.fourthwall.webhookSecret, appHmacKey: config.fourthwall.appHmacKey },
      seenEvent: (id) => {
        if (seen.has(id)) return true;
        remember(id);
        return false;
      },
      onEvent,
      health,
      handledTypes: new Set(BOT_WEBHOOK_TYPES),
      routes: [verifyRoute(repo, logger)],
    });
  } catch (err) {
    await beacon.close().catch(() => undefined);
    await service.stop().catch(() => undefined);
    await chat.disconnect().catch(() => undefined);
    await repo.close().catch(() => undefined);
    await client.close().catch(() => undefined);
    throw err;
  }
  const httpServer = http;
  const webhookUrl = `${httpServer.url}/webhooks/fourthwall`;

  if (file.streaming.autoStart) {
    try {
      await streaming.goLive();
    } catch (err) {
      log.warn({ err }, 'could not set Fourthwall streaming started');
      chat.say(`⚠️ Could not tell Fourthwall the stream is live: ${(err as Error).message}. Mods: try !${names.names.stream} live`, {
        priority: 'high',
      });
    }
  }

  log.info(
    {
      mode: config.mode,
      channel: config.twitch.channel,
      bot: config.twitch.username,
      chat: config.twitch.ircUrl,
      fourthwall: config.fourthwall.apiUrl,
      webhooks: webhookUrl,
      openDraws: service.openDrawCount(),
      dataDir: config.dataDir,
    },
    `giftdrop ${config.mode}: chat #${config.twitch.channel} as ${config.twitch.username} via ${config.twitch.ircUrl}, Fourthwall at ${config.fourthwall.apiUrl}, webhooks at ${webhookUrl}, ${service.openDrawCount()} open draw(s)`,
  );

  let stopping: Promise<void> | undefined;
  const stop = (reason = 'shutdown') =>
    (stopping ??= (async () => {
      log.info({ reason }, 'shutting down');
      await httpServer.close().catch((err) => log.warn({ err }, 'http close failed'));
      await service.stop().catch((err) => log.warn({ err }, 'giveaway stop failed'));
      await beacon.close().catch(() => undefined);
      // Nothing writes to the history after the engine stopped: flush it before any slow call.
      await repo.close().catch((err) => log.error({ err }, 'history flush failed'));
      if (file.streaming.autoStart) await withTimeout(streaming.endIfStartedByUs(), STREAMING_END_MS);
      await withTimeout(chat.flush(), DRAIN_MS);
      await chat.disconnect().catch(() => undefined);
      await client.close().catch(() => undefined);
      log.info('stopped');
    })());

  return {
    config,
    http: httpServer,
    chat,
    service,
    streaming,
    repo,
    client,
    webhookUrl,
    health,
    stop,
  };
}
