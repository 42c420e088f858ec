/**
 * The shop-on-stream settings (alerts, merchTrain, merch, promo): the example file documents every
 * key with its default, a misspelt key or a merch train without a product is a clear error, and
 * the webhook types follow the enabled features.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/index.js';
import { fileSchema } from '../src/config/schema.js';
import { shopWebhookTypes } from '../src/shop/webhook-types.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function settingsFile(content: unknown): { env: Record<string, string>; cwd: string } {
  const dir = mkdtempSync(join(tmpdir(), 'gd-config-shop-'));
  dirs.push(dir);
  const file = join(dir, 'settings.json');
  writeFileSync(file, JSON.stringify(content));
  return { env: { GIFTDROP_CONFIG: file }, cwd: dir };
}

describe('shop settings', () => {
  it('the example file shows every shop key with its default value (the merch train product aside)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-config-shop-'));
    dirs.push(dir);
    const c = loadConfig({
      env: { GIFTDROP_CONFIG: join(import.meta.dirname, '..', 'config', 'giftdrop.example.json') },
      cwd: dir,
    });
    const defaults = fileSchema.parse({});
    expect(c.settings.alerts).toEqual(defaults.alerts);
    expect(c.settings.merch).toEqual(defaults.merch);
    expect(c.settings.promo).toEqual(defaults.promo);
    expect({ ...c.settings.merchTrain, product: undefined }).toEqual({ ...defaults.merchTrain, product: undefined });
  });

  it('rejects a misspelt key and a merch train without a product, naming the fix', () => {
    expect(() => loadConfig({ ...settingsFile({ alerts: { orders: { enabled: true } } }), dotenv: false })).toThrow(
      ConfigError,
    );
    let err: unknown;
    try {
      loadConfig({ ...settingsFile({ merchTrain: { enabled: true } }), dotenv: false });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain('merchTrain.product is required when merchTrain.enabled is true');
  });

  it('subscribes to the types the enabled features need, and no more', () => {
    // The gift-purchase alert is off by default (the gift draw is announced already): the
    // giveaway flow subscribes to GIFT_PURCHASE itself (BOT_WEBHOOK_TYPES), the alerts do not.
    expect(fileSchema.parse({}).alerts.giftPurchase.enabled).toBe(false);
    expect(shopWebhookTypes(fileSchema.parse({})).sort()).toEqual(['DONATION', 'ORDER_PLACED']);
    expect(shopWebhookTypes(fileSchema.parse({ alerts: { giftPurchase: { enabled: true } } })).sort()).toEqual([
      'DONATION',
      'GIFT_PURCHASE',
      'ORDER_PLACED',
    ]);
    const off = fileSchema.parse({
      alerts: { order: { enabled: false }, donation: { enabled: false }, giftPurchase: { enabled: false } },
    });
    expect(shopWebhookTypes(off)).toEqual([]);
    const train = fileSchema.parse({ ...off, merchTrain: { enabled: true, product: 'mug' } });
    expect(shopWebhookTypes(train)).toEqual(['ORDER_PLACED']);
    const all = fileSchema.parse({
      alerts: { subscription: { enabled: true }, thankYou: { enabled: true }, giftPurchase: { enabled: true } },
      promo: { autoAnnounce: true },
    });
    expect(shopWebhookTypes(all).sort()).toEqual([
      'DONATION',
      'GIFT_PURCHASE',
      'ORDER_PLACED',
      'PROMOTION_STATUS_CHANGED',
      'SUBSCRIPTION_PURCHASED',
      'THANK_YOU_SENT',
    ]);
  });
});
