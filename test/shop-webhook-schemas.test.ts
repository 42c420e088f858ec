/**
 * Every webhook type the shop features act on is parsed by schemas that accept what Fourthwall's
 * published document allows: only the required fields, every documented field, and each oneOf
 * branch / enum value (fixtures in support/shop-webhook-fixtures.ts, copied from the document).
 * The parsed event then yields the safe alert view the bot shows, with no PII in it.
 */
import { describe, expect, it } from 'vitest';
import { parseWebhookEvent } from '../src/fourthwall/webhooks.js';
import { shopWebhookTypes } from '../src/shop/webhook-types.js';
import {
  toDonationAlert,
  toGiftPurchaseAlert,
  toOrderAlert,
  toSubscriptionAlert,
  toThankYouAlert,
  type AlertView,
} from '../src/shop/alerts.js';
import { liveCode } from '../src/shop/promotions.js';
import { fileSchema } from '../src/config/schema.js';
import { SHOP_WEBHOOK_FIXTURES } from './support/shop-webhook-fixtures.js';

function envelope(type: string, data: unknown): string {
  return JSON.stringify({
    id: 'weve_fixture',
    webhookId: 'wcon_fixture',
    shopId: 'sh_c689d374-22ca-43d3-8d29-9ef0805cc4cb',
    type,
    apiVersion: 'V1',
    createdAt: '2020-08-13T09:05:36.939Z',
    testMode: false,
    data,
  });
}

const AT = '2026-01-01T00:00:00.000Z';

function view(type: string, data: never): AlertView | undefined {
  switch (type) {
    case 'ORDER_PLACED':
      return toOrderAlert(data, true, AT);
    case 'DONATION':
      return toDonationAlert(data, true, AT);
    case 'SUBSCRIPTION_PURCHASED':
      return toSubscriptionAlert(data, true, AT);
    case 'THANK_YOU_SENT':
      return toThankYouAlert(data, AT);
    case 'GIFT_PURCHASE':
      return toGiftPurchaseAlert(data, true, AT);
    default:
      return undefined;
  }
}

const ALL_SETTINGS_ON = fileSchema.parse({
  alerts: { subscription: { enabled: true }, thankYou: { enabled: true }, giftPurchase: { enabled: true } },
  merchTrain: { enabled: true, product: 'mug' },
  promo: { autoAnnounce: true },
});

describe('webhook schemas of the shop features (from the published document)', () => {
  it('covers every type the bot acts on with everything switched on', () => {
    expect(Object.keys(SHOP_WEBHOOK_FIXTURES).sort()).toEqual(shopWebhookTypes(ALL_SETTINGS_ON).sort());
  });

  for (const [type, f] of Object.entries(SHOP_WEBHOOK_FIXTURES)) {
    const cases: [string, unknown][] = [
      ['required fields only', f.minimal],
      ['every documented field', f.full],
      ...Object.entries(f.variants),
    ];
    for (const [name, data] of cases) {
      it(`${type}: ${name} is accepted and yields a view without PII`, () => {
        const event = parseWebhookEvent(envelope(type, data));
        expect(event.known).toBe(true);
        expect(event.type).toBe(type);
        const v = view(type, event.data as never);
        if (type === 'PROMOTION_STATUS_CHANGED') {
          expect(() => liveCode(event.data as never)).not.toThrow();
          return;
        }
        expect(v).toBeDefined();
        const text = JSON.stringify(v);
        for (const secret of [
          '@fourthwall.com',
          'Main Street',
          'D3XZFWPP',
          '00aa4abd',
          'don_Kpcjx',
          'ty_EdJv',
          'giv_EdJv',
          'Sample message',
          '123456789',
        ]) {
          expect(text).not.toContain(secret);
        }
        expect(v!.user.length).toBeGreaterThan(0);
      });
    }
  }

  it('reads the supporter, products and amount the document puts in each type', () => {
    const F = SHOP_WEBHOOK_FIXTURES;
    const full = (t: string) => view(t, parseWebhookEvent(envelope(t, F[t]!.full)).data as never)!;
    expect(full('ORDER_PLACED')).toMatchObject({
      user: 'Johnny123',
      products: ['My t-shirt'],
      amount: { value: 30, currency: 'USD' },
    });
    expect(
      view('ORDER_PLACED', parseWebhookEvent(envelope('ORDER_PLACED', F.ORDER_PLACED!.minimal)).data as never)!.user,
    ).toBe('someone');
    expect(full('DONATION')).toMatchObject({ user: 'Johnny123', amount: { value: 10 } });
    expect(full('SUBSCRIPTION_PURCHASED')).toMatchObject({ user: 'Johnny123', tier: 'monthly', amount: { value: 5 } });
    expect(full('THANK_YOU_SENT')).toMatchObject({ user: 'Johnny123' });
    expect(full('GIFT_PURCHASE')).toMatchObject({
      user: 'Johnny123',
      products: ['3× My t-shirt'],
      amount: { value: 25 },
    });
    const promo = (name: string) =>
      liveCode(
        parseWebhookEvent(envelope('PROMOTION_STATUS_CHANGED', F.PROMOTION_STATUS_CHANGED!.variants[name]))
          .data as never,
      );
    expect(promo('SHOP_SINGLE')).toBe('STREAM10');
    expect(promo('SHOP_MULTI')).toBe('MULTI20');
    expect(promo('MEMBERSHIPS_SINGLE')).toBeUndefined();
  });
});
