/**
 * Getting prizes to winners, wired from the Config (src/delivery): the claim page (claim.ts),
 * whispers (with TWITCH_CLIENT_ID; on once the validated token has user:manage:whispers; their queue
 * and budget kept in DATA_DIR/whispers.json, whisper-file.ts), the
 * redemption poll on the Fourthwall client (redemption.ts) and the delivery tracker over the
 * draw storage. src/app/bot.ts builds it once, mounts `claimRoute`, hands `tracker` to the engine, the
 * dashboard and the stream-start hooks, and calls `stop` on shutdown.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config/index.js';
import { DeliveryTracker, type DeliveryStore } from './tracker.js';
import type { FourthwallClient } from '../fourthwall/index.js';
import type { Order } from '../fourthwall/schemas.js';
import type { GiveawayEngine } from '../giveaway/engine.js';
import type { ChatPort } from '../giveaway/ports.js';
import type { GiveawaySettings } from '../giveaway/settings.js';
import type { Logger } from '../logging/index.js';
import type { Clock } from '../shared/clock.js';
import type { ChatToken } from '../twitch/token.js';
import { TwitchWhispers, WHISPER_SCOPE } from '../twitch/whispers.js';
import { claimPageFor } from './claim.js';
import { fourthwallRedemption } from './redemption.js';
import { whisperFile } from './whisper-file.js';

export interface DeliveryWiring {
  tracker: DeliveryTracker;
  /** The claim page's route for the HTTP server (absent without the claim page). */
  claimRoute?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** ORDER_PLACED: a gift or giveaway link redeemed (`source.giftId`) is delivered. */
  onOrder(order: Pick<Order, 'friendlyId' | 'createdAt' | 'source'>): Promise<void>;
  /** After the chat login (the token is validated): says when whispers are off, re-queues unsent ones. */
  afterLogin(): void;
  /** Stops the tracker and the whispers; resolves once the whisper queue is saved. */
  stop(): Promise<void>;
}

export function startDelivery(d: {
  config: Config;
  store: DeliveryStore;
  engine: Pick<GiveawayEngine, 'events'>;
  chat: Pick<ChatPort, 'say'>;
  messages: GiveawaySettings['messages'];
  client: FourthwallClient;
  tokens: ChatToken;
  clock: Clock;
  logger: Logger;
}): DeliveryWiring {
  const { config, clock, logger } = d;
  const log = logger.child({ module: 'delivery' });
  const claimPage = claimPageFor(config, logger);
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
  const tracker = new DeliveryTracker({
    store: d.store,
    events: d.engine.events,
    chat: d.chat,
    messages: d.messages,
    clock,
    logger,
    settings: config.settings.delivery,
    redemption: fourthwallRedemption(d.client),
    ...(claimPage ? { claimUrl: claimPage.url } : {}),
    ...(whispers ? { whispers } : {}),
  });
  return {
    tracker,
    ...(claimPage ? { claimRoute: claimPage.mount({ prizes: tracker, channel: config.twitch.channel ?? '', clock }) } : {}),
    async onOrder(order) {
      const giftId = order.source?.giftId;
      if (giftId) await tracker.redeemed(giftId, { friendlyId: order.friendlyId ?? undefined, createdAt: order.createdAt ?? undefined });
    },
    afterLogin() {
      if (config.settings.delivery.whispers && whispers && !whispers.available())
        log.info(`whispers to winners are off: TWITCH_TOKEN lacks the scope ${WHISPER_SCOPE} (add it to whisper each winner the claim page or link)`);
      void tracker.resumeWhispers().catch((err: unknown) => log.warn({ err }, 'could not queue the whispers left from before'));
    },
    async stop() {
      tracker.stop();
      whispers?.stop();
      await whispers?.idle();
    },
  };
}
