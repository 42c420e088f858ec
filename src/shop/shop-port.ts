/**
 * The ShopPort adapter: the giveaway domain's view of Fourthwall, over the typed client.
 * Maps wire shapes to domain types (nulls become absent) and translates the client's error
 * family into ShopError kinds the domain reconciles on. Owns no giveaway logic.
 */
import {
  FourthwallApiError,
  FourthwallAuthError,
  FourthwallOutcomeUnknownError,
  FourthwallSchemaError,
  type Draw,
  type FourthwallClient,
  type GiftPurchase,
  type Product,
  type StreamingStatus,
} from '../fourthwall/index.js';
import type { Logger } from '../logging/index.js';
import type {
  GiftDrawInfo,
  GiftPurchaseInfo,
  GiveawayLinkInfo,
  ProductInfo,
  StreamingInfo,
} from '../giveaway/model.js';
import { ShopError, type ShopPort } from '../giveaway/ports.js';

const NON_IDEMPOTENT = new Set(['finishDraw', 'createGiveawayLinks']);

/** Translates a client error into the domain's ShopError. */
export function toShopError(err: unknown, operation: string): ShopError {
  if (err instanceof ShopError) return err;
  if (err instanceof FourthwallOutcomeUnknownError)
    return new ShopError('outcome-unknown', `Fourthwall may or may not have done ${operation}`, { cause: err });
  if (err instanceof FourthwallAuthError)
    return new ShopError('auth', `Fourthwall refused the credentials (${err.status})`, { cause: err });
  if (err instanceof FourthwallApiError) {
    if (err.apiCode === 'GIVEAWAY_DRAW_ALREADY_FINISHED')
      return new ShopError('already-finished', 'Fourthwall says the draw is already finished', { cause: err });
    if (err.status === 401 || err.status === 403)
      return new ShopError('auth', `Fourthwall refused the credentials (${err.status})`, { cause: err });
    if (err.status === 404) return new ShopError('not-found', `Fourthwall: ${err.code}`, { cause: err });
    if (err.status >= 400 && err.status < 500 && err.status !== 429)
      return new ShopError('rejected', `Fourthwall refused it: ${err.code}`, { cause: err });
    return new ShopError('unavailable', `Fourthwall is not answering properly (${err.status})`, { cause: err });
  }
  if (err instanceof FourthwallSchemaError)
    return NON_IDEMPOTENT.has(operation)
      ? new ShopError('outcome-unknown', `Fourthwall answered ${operation} in an unexpected shape`, { cause: err })
      : new ShopError('unavailable', `Fourthwall answered ${operation} in an unexpected shape`, { cause: err });
  return new ShopError('unavailable', `Fourthwall could not be reached for ${operation}`, { cause: err });
}

const opt = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

export function toDrawInfo(d: Draw): GiftDrawInfo {
  return {
    id: d.id,
    type: d.type,
    giveawayId: opt(d.giveawayId),
    giveawayFriendlyId: opt(d.giveawayFriendlyId),
    offer: { id: d.offer.id, name: d.offer.name, slug: opt(d.offer.slug) },
    username: opt(d.username),
    message: opt(d.message),
    gifts: d.gifts.map((g) => ({
      id: g.id,
      status: g.status,
      winner: g.winner
        ? { username: opt(g.winner.username), redeemUri: opt(g.winner.redeemUri), selectedAt: opt(g.winner.selectedAt) }
        : undefined,
    })),
    createdAt: d.createdAt,
    durationSeconds: d.durationSeconds,
  };
}

export function toPurchaseInfo(p: GiftPurchase): GiftPurchaseInfo {
  return {
    id: p.id,
    friendlyId: opt(p.friendlyId),
    offer: { id: p.offer.id, name: p.offer.name, slug: opt(p.offer.slug) },
    username: opt(p.username),
    message: opt(p.message),
    quantity: opt(p.quantity),
    gifts: p.gifts.map((g) => ({
      id: g.id,
      status: g.status,
      winner: g.winner ? { username: opt(g.winner.username), selectedAt: opt(g.winner.selectedAt) } : undefined,
    })),
    createdAt: p.createdAt,
  };
}

/** A product as the domain sees it, with its first image and its stock over all variants. */
function toProductInfo(p: Product): ProductInfo {
  const info: ProductInfo = { id: p.id, name: p.name, slug: p.slug ?? '' };
  const image = p.images?.find((i) => i?.url)?.url;
  if (image) info.imageUrl = image;
  const stocks = (p.variants ?? []).map((v) => v.stock).filter((x): x is NonNullable<typeof x> => !!x);
  if (stocks.some((x) => x.type === 'UNLIMITED')) info.stock = 'unlimited';
  else if (stocks.some((x) => typeof x.inStock === 'number'))
    info.stock = stocks.reduce((n, x) => n + (x.inStock ?? 0), 0);
  return info;
}

function toStreamingInfo(s: StreamingStatus): StreamingInfo {
  const twitch = s.services.find((x) => x.type === 'TWITCH') ?? s.services[0];
  const status = twitch?.status === 'ONLINE' ? 'ONLINE' : twitch?.status === 'OFFLINE' ? 'OFFLINE' : 'UNKNOWN';
  return { status, broadcasterLogin: opt(twitch?.broadcasterLogin) };
}

export class FourthwallShop implements ShopPort {
  private domain: string | undefined;
  private readonly log: Logger;

  constructor(
    private readonly client: FourthwallClient,
    options: { logger: Logger; shopUrl?: string },
  ) {
    this.log = options.logger.child({ module: 'shop' });
    if (options.shopUrl) this.domain = new URL(options.shopUrl).host;
  }

  private async call<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toShopError(err, operation);
    }
  }

  finishDraw(drawId: string, participants: { userId: string; userName: string }[]): Promise<GiftDrawInfo> {
    return this.call('finishDraw', async () =>
      toDrawInfo(
        await this.client.finishDraw(drawId, {
          participants: participants.map((p) => ({ service: 'TWITCH', userId: p.userId, userName: p.userName })),
        }),
      ),
    );
  }

  getDraw(drawId: string): Promise<GiftDrawInfo> {
    return this.call('getDraw', async () => toDrawInfo(await this.client.getDraw(drawId)));
  }

  createGiveawayLinks(productId: string, count: number): Promise<{ packageId: string; links: GiveawayLinkInfo[] }> {
    return this.call('createGiveawayLinks', async () => {
      const pkg = await this.client.createGiveawayLinks({ productId, number: count });
      // The package exists now: a later failure must not read as retryable, or it is created twice.
      let domain: string | undefined;
      if (pkg.giveawayLinks.some((l) => !l.link)) {
        try {
          domain = await this.shopDomain();
        } catch (err) {
          throw new ShopError(
            'outcome-unknown',
            `giveaway links were created (package ${pkg.packageId}) but the shop domain for their URLs could not be read`,
            { cause: err },
          );
        }
      }
      const links: GiveawayLinkInfo[] = pkg.giveawayLinks.map((l) => ({
        id: l.id,
        link: l.link ? l.link : `https://${domain}/gifts/${l.id}`,
      }));
      return { packageId: pkg.packageId, links };
    });
  }

  listGiveawayPackages(): Promise<{ packageId: string; createdAt?: string }[]> {
    return this.call('listGiveawayPackages', async () =>
      (await this.client.listGiveawayPackages()).packages.map((p) => ({
        packageId: p.packageId,
        createdAt: opt(p.createdAt),
      })),
    );
  }

  getGiveawayPackage(
    packageId: string,
  ): Promise<{ packageId: string; links: (GiveawayLinkInfo & { productId?: string })[] }> {
    return this.call('getGiveawayPackage', async () => {
      const pkg = await this.client.getGiveawayPackage(packageId);
      const domain = pkg.giveawayLinks.some((l) => !l.link) ? await this.shopDomain() : undefined;
      return {
        packageId: pkg.packageId,
        links: pkg.giveawayLinks.map((l) => ({
          id: l.id,
          link: l.link ? l.link : `https://${domain}/gifts/${l.id}`,
          ...(l.productId ? { productId: l.productId } : {}),
        })),
      };
    });
  }

  listProducts(): Promise<ProductInfo[]> {
    return this.call('listProducts', async () => (await this.client.listAllProducts()).map(toProductInfo));
  }

  getProduct(productId: string): Promise<ProductInfo> {
    return this.call('getProduct', async () => toProductInfo(await this.client.getProduct(productId)));
  }

  streamingStart(input: {
    broadcasterId: string;
    broadcasterLogin: string;
    thumbnailUrl?: string;
  }): Promise<StreamingInfo> {
    return this.call('streamingStart', async () =>
      toStreamingInfo(await this.client.streamingStart({ services: [{ type: 'TWITCH', ...input }] })),
    );
  }

  streamingEnd(): Promise<StreamingInfo> {
    return this.call('streamingEnd', async () =>
      toStreamingInfo(await this.client.streamingEnd({ services: ['TWITCH'] })),
    );
  }

  streamingStatus(): Promise<StreamingInfo> {
    return this.call('streamingStatus', async () => toStreamingInfo(await this.client.getStreamingStatus()));
  }

  async shopDomain(): Promise<string> {
    if (this.domain) return this.domain;
    const shop = await this.call('getCurrentShop', () => this.client.getCurrentShop());
    const domain = shop.publicDomain ?? shop.domain;
    this.domain = domain;
    return domain;
  }

  async giftingEntrySeconds(): Promise<number | undefined> {
    try {
      const cfg = await this.client.getGiftingConfig();
      const s = cfg.entryTimeLimitSeconds ?? undefined;
      return s !== undefined && s >= 20 && s <= 180 ? s : undefined;
    } catch (err) {
      this.log.debug(
        { reason: (err as Error).message },
        'gifting configuration not available; using the configured window',
      );
      return undefined;
    }
  }
}
