/**
 * Getting prizes to winners, wired from the Config in two steps, so the composition root builds
 * in a straight line. `deliveryChannels` needs no engine: the whispers (with TWITCH_CLIENT_ID; on
 * once the validated token has user:manage:whispers; queue and budget in DATA_DIR/whispers.json,
 * whisper-file.ts) and `via()`, how the winners line says links reach the winners (the engine's
 * `privateDelivery`). `startDelivery` builds the delivery tracker over the draw storage once the
 * engine exists, with the redemption poll on the Fourthwall client (redemption.ts).
 * Does not: serve the claim page (src/web/public/ does; its address comes in as `claimUrl`).
 */
import type { Config } from '../config/index.js';
import { DeliveryTracker, privateDeliveryVia, type DeliveryStore } from './tracker.js';
import type { FourthwallClient } from '../fourthwall/index.js';
import type { Order } from '../fourthwall/schemas.js';
import type { GiveawayEngine } from '../giveaway/engine.js';
import type { ChatPort, PrivateDelivery } from '../giveaway/ports.js';
import type { GiveawaySettings } from '../giveaway/settings.js';
import type { Logger } from '../logging/index.js';
import type { Clock } from '../shared/clock.js';
import type { ChatToken } from '../twitch/token.js';
import { TwitchWhispers } from '../twitch/whispers.js';
import { fourthwallRedemption } from './redemption.js';
import { whisperFile } from './whisper-file.js';
import { claimPageFacts, claimPageReach, whisperReach, type Reach } from './winner-reach.js';

/** The ways a prize reaches its winner, known before the engine exists. */
export interface DeliveryChannels {
  /** `<GIFTDROP_PUBLIC_URL>/claim`, when the claim page is on. */
  readonly claimUrl?: string;
  /** Whispers from the bot account; they hold no timer or connection until the first send. */
  readonly whispers?: TwitchWhispers;
  /** How the winners line says links reach the winners (the engine's `privateDelivery`). */
  via(): PrivateDelivery;
  /** The claim page and the whispers: on, off (and what turns each on), or not known yet. */
  reach(): Reach[];
}

export function deliveryChannels(d: {
  config: Config;
  tokens: ChatToken;
  claimUrl: string | undefined;
  clock: Clock;
  logger: Logger;
}): DeliveryChannels {
  const { config, clock, logger, claimUrl } = d;
  // The client the bot's token was issued to (a saved login's may differ from TWITCH_CLIENT_ID).
  const clientId = d.tokens.clientId() ?? config.twitch.clientId;
  const whispers = clientId
    ? new TwitchWhispers({
        apiUrl: config.twitch.apiUrl ?? 'https://api.twitch.tv/helix',
        clientId,
        token: d.tokens,
        identity: () => {
          const v = d.tokens.validated();
          return v ? { userId: v.userId, scopes: v.scopes } : undefined;
        },
        clock,
        logger,
        store: whisperFile(config.dataDir),
      })
    : undefined;
  const whispersOn = config.settings.delivery.whispers;
  const whisperFacts = () => ({
    setting: whispersOn,
    token: config.twitch.token ? ('env' as const) : config.twitch.savedLogin ? ('login' as const) : ('none' as const),
    ...(d.tokens.validated() ? { scopes: d.tokens.validated()!.scopes } : {}),
    clientId: whispers !== undefined,
    claimPage: claimUrl !== undefined,
  });
  return {
    ...(claimUrl ? { claimUrl } : {}),
    ...(whispers ? { whispers } : {}),
    via: () => privateDeliveryVia(whispersOn && (whispers?.available() ?? false), claimUrl),
    reach: () => [
      claimPageReach(claimPageFacts(config), { mounted: claimUrl !== undefined }),
      whisperReach(whisperFacts()),
    ],
  };
}

export interface DeliveryWiring {
  tracker: DeliveryTracker;
  /** ORDER_PLACED: a gift or giveaway link redeemed (`source.giftId`) is delivered. */
  onOrder(order: Pick<Order, 'friendlyId' | 'createdAt' | 'source'>): Promise<void>;
  /** After the chat login (the token is validated): says when whispers are off, re-queues unsent ones. */
  afterLogin(): void;
  /** The claim page and the whispers, on or off and what turns each on (the dashboard's `reach`). */
  reach(): Reach[];
  /** Stops the tracker and the whispers; resolves once the whisper queue is saved. */
  stop(): Promise<void>;
}

export function startDelivery(
  channels: DeliveryChannels,
  d: {
    config: Config;
    store: DeliveryStore;
    engine: Pick<GiveawayEngine, 'events'>;
    chat: Pick<ChatPort, 'say'>;
    messages: GiveawaySettings['messages'];
    client: FourthwallClient;
    clock: Clock;
    logger: Logger;
  },
): DeliveryWiring {
  const { config, clock, logger } = d;
  const { whispers, claimUrl } = channels;
  const log = logger.child({ module: 'delivery' });
  const tracker = new DeliveryTracker({
    store: d.store,
    events: d.engine.events,
    chat: d.chat,
    messages: d.messages,
    clock,
    logger,
    settings: config.settings.delivery,
    redemption: fourthwallRedemption(d.client),
    ...(claimUrl ? { claimUrl } : {}),
    ...(whispers ? { whispers } : {}),
  });
  return {
    tracker,
    reach: () => channels.reach(),
    async onOrder(order) {
      const giftId = order.source?.giftId;
      if (giftId)
        await tracker.redeemed(giftId, {
          friendlyId: order.friendlyId ?? undefined,
          createdAt: order.createdAt ?? undefined,
        });
    },
    afterLogin() {
      const w = channels.reach().find((r) => r.id === 'whispers');
      if (config.settings.delivery.whispers && w?.status === 'off') log.info(`whispers to winners are ${w.detail}`);
      void tracker
        .resumeWhispers()
        .catch((err: unknown) => log.warn({ err }, 'could not queue the whispers left from before'));
    },
    async stop() {
      tracker.stop();
      whispers?.stop();
      await whispers?.idle();
    },
  };
}
