/**
 * Wires the shop-on-stream features into a running bot in a few calls: builds ShopFeatures from
 * the config and the bot's adapters, and registers `!merch` / `!promo` (when enabled).
 */
import type { Config } from '../config/index.js';
import type { FourthwallClient } from '../fourthwall/index.js';
import type { CommandRegistry } from '../commands/registry.js';
import { merchCommand } from '../commands/merch.js';
import { promoCommand } from '../commands/promo.js';
import type { Logger } from '../logging/index.js';
import type { Clock } from '../shared/clock.js';
import { ShopFeatures, type ShopFeaturesDeps } from './index.js';

export function createShopFeatures(o: {
  config: Config;
  client: FourthwallClient;
  shopDomain(): Promise<string>;
  chat: ShopFeaturesDeps['chat'];
  engine: ShopFeaturesDeps['engine'];
  history?: ShopFeaturesDeps['history'];
  clock: Clock;
  logger: Logger;
}): ShopFeatures {
  return new ShopFeatures({
    settings: o.config.settings,
    api: o.client,
    ...(o.config.fourthwall.shopUrl ? { shopUrl: o.config.fourthwall.shopUrl } : {}),
    shopDomain: o.shopDomain,
    dataDir: o.config.dataDir,
    chat: o.chat,
    engine: o.engine,
    ...(o.history ? { history: o.history } : {}),
    clock: o.clock,
    logger: o.logger,
  });
}

export function registerShopCommands(registry: CommandRegistry, features: ShopFeatures, config: Config): void {
  const s = config.settings;
  if (s.merch.enabled)
    registry.register(
      merchCommand(
        {
          merchLine: () => features.catalog.merchLine(s.merch.products),
          trainLine: () => features.train.statusLine(),
          setAvailable: (q, available) => features.catalog.setAvailable(q, available),
        },
        { cooldownMs: s.merch.cooldownSeconds * 1000 },
      ),
    );
  if (s.promo.enabled) registry.register(promoCommand((code) => features.promotions.promoLine(code)));
}
