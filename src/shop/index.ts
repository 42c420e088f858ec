/**
 * The shop on stream, assembled: supporter alerts, the merch train, the catalog behind `!merch`,
 * promotions behind `!promo`, and the recent-orders feed, over narrow ports of the Fourthwall
 * client, chat and the giveaway engine.
 *
 * Contract: `handle(event)` is the one hook the event dispatch (src/events/dispatch.ts) calls for
 * every verified, de-duplicated event; it acts on ORDER_PLACED, DONATION, SUBSCRIPTION_PURCHASED, THANK_YOU_SENT,
 * GIFT_PURCHASE and PROMOTION_STATUS_CHANGED, ignores the rest, and never rejects (a failure is
 * logged; the giveaway path is never held up by it). `alerts` emits `alert` with the safe view
 * model (for the overlay); `feed` is the dashboard's read-only port.
 */
import type { EventEmitter } from 'node:events';
import type { FileSettings } from '../config/index.js';
import type { FourthwallClient, WebhookEvent } from '../fourthwall/index.js';
import type { GiveawayEventMap } from '../giveaway/context.js';
import type { ChatPort } from '../giveaway/ports.js';
import type { Logger } from '../logging/index.js';
import type { Clock } from '../shared/clock.js';
import type { ChatMessage } from '../shared/chat.js';
import type { ActionResult } from '../giveaway/flows/link-giveaway.js';
import {
  SupporterAlerts,
  isRedemption,
  toDonationAlert,
  toGiftPurchaseAlert,
  toOrderAlert,
  toSubscriptionAlert,
  toThankYouAlert,
} from './alerts.js';
import { Catalog, findProduct } from './catalog.js';
import { MerchTrain } from './merch-train.js';
import { OrderFeed } from './order-feed.js';
import { Promotions } from './promotions.js';

export { SupporterAlerts, type AlertView } from './alerts.js';
export { webhookTypesFor } from './webhook-types.js';

type ShopApi = Pick<
  FourthwallClient,
  | 'listAllProducts'
  | 'updateProductAvailability'
  | 'fetchProductFeed'
  | 'listPromotions'
  | 'listOrders'
  | 'listDonations'
  | 'getStreamingStatus'
>;

export interface ShopFeaturesDeps {
  settings: Pick<FileSettings, 'alerts' | 'merchTrain' | 'merch' | 'promo'>;
  api: ShopApi;
  shopUrl?: string;
  shopDomain(): Promise<string>;
  dataDir: string;
  chat: Pick<ChatPort, 'say' | 'channelLogin' | 'channelId'>;
  /** The giveaway history (a departure interrupted by a crash is found there). */
  history?: {
    listDraws(options?: {
      limit?: number;
    }): Promise<{ id: string; kind: string; openedAt: string; startedBy?: { login: string } }[]>;
  };
  engine: {
    startLinkGiveaway(by: ChatMessage, query: string, winners?: number, seconds?: number): Promise<ActionResult>;
    events: EventEmitter<GiveawayEventMap>;
  };
  clock: Clock;
  logger: Logger;
}

/** A link giveaway the merch train opened at or after `since`. */
async function findDeparture(
  history: NonNullable<ShopFeaturesDeps['history']>,
  since: string,
): Promise<string | undefined> {
  const from = Date.parse(since);
  const hit = (await history.listDraws({ limit: 50 })).find(
    (r) => r.kind === 'link-giveaway' && r.startedBy?.login === 'merch_train' && Date.parse(r.openedAt) >= from,
  );
  return hit?.id;
}

export class ShopFeatures {
  readonly alerts: SupporterAlerts;
  readonly train: MerchTrain;
  readonly catalog: Catalog;
  readonly promotions: Promotions;
  readonly feed: OrderFeed;
  private readonly log: Logger;

  constructor(private readonly d: ShopFeaturesDeps) {
    this.log = d.logger.child({ module: 'shop-features' });
    const s = d.settings;
    this.alerts = new SupporterAlerts({ settings: s.alerts, chat: d.chat, clock: d.clock, logger: d.logger });
    this.train = new MerchTrain({
      settings: s.merchTrain,
      dataDir: d.dataDir,
      startLinkGiveaway: (...a) => d.engine.startLinkGiveaway(...a),
      events: d.engine.events,
      isLive: () => this.isLive(),
      productName: async (query: string) => {
        const match = findProduct(await d.api.listAllProducts({ maxPages: 5 }), query);
        return match.ok ? match.product.name : undefined;
      },
      ...(d.history ? { findDeparture: (since: string) => findDeparture(d.history!, since) } : {}),
      chat: d.chat,
      clock: d.clock,
      logger: d.logger,
    });
    this.catalog = new Catalog({
      api: d.api,
      ...(d.shopUrl ? { shopUrl: d.shopUrl } : {}),
      shopDomain: d.shopDomain,
      refreshMs: s.merch.refreshMinutes * 60_000,
      clock: d.clock,
      logger: d.logger,
    });
    this.promotions = new Promotions({ api: d.api, settings: s.promo, logger: d.logger });
    this.feed = new OrderFeed({ api: d.api, logger: d.logger });
  }

  /** Reads the train's counter (a corrupt file stops start-up, naming it). The loads over the API wait for `startBackground()`. */
  async start(): Promise<void> {
    await this.train.start();
  }

  /**
   * The catalog's first refresh and the order feed's load, in the background (never rejects). The
   * bot calls it once its HTTP server answers: they load the HTTP client and call Fourthwall, and
   * readiness waits for neither.
   */
  startBackground(): void {
    if (this.d.settings.merch.enabled) this.catalog.start();
    void this.feed.load();
  }

  async stop(): Promise<void> {
    this.alerts.close();
    this.catalog.stop();
    await this.train.stop();
  }

  /** Asked per counted order (orders are rare next to the API's rate limit), so never stale. */
  private async isLive(): Promise<boolean> {
    const status = await this.d.api.getStreamingStatus();
    return status.services.some((x) => x.status === 'ONLINE');
  }

  /** The webhook hook (see the module header). */
  async handle(event: WebhookEvent): Promise<void> {
    if (!event.known) return;
    try {
      const at = new Date(this.d.clock.now()).toISOString();
      const show = this.alerts.showAmounts;
      switch (event.type) {
        case 'ORDER_PLACED':
          this.feed.addOrder(event.data);
          if (!isRedemption(event.data)) this.alerts.publish(toOrderAlert(event.data, show, at));
          await this.train.onOrder(event.data);
          break;
        case 'DONATION':
          if (event.data.status && event.data.status !== 'COMPLETED') break;
          this.feed.addDonation(event.data);
          this.alerts.publish(toDonationAlert(event.data, show, at));
          break;
        case 'SUBSCRIPTION_PURCHASED':
          this.alerts.publish(toSubscriptionAlert(event.data, show, at));
          break;
        case 'THANK_YOU_SENT':
          this.alerts.publish(toThankYouAlert(event.data, at));
          break;
        case 'GIFT_PURCHASE':
          this.alerts.publish(toGiftPurchaseAlert(event.data, show, at));
          break;
        case 'PROMOTION_STATUS_CHANGED': {
          const line = this.promotions.onStatusChanged(event.data);
          if (line) this.d.chat.say(line, { priority: 'low' });
          break;
        }
        default:
          break;
      }
    } catch (err) {
      this.log.error({ err, eventId: event.id, type: event.type }, 'shop event handling failed');
    }
  }
}
