import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhookBody, verifyWebhookSignature } from '../src/fourthwall/index.js';
import { IDS, drawFixture, envelopeFixture } from './support/fourthwall-fixtures.js';

const secret = IDS.webhookSecret;
const appKey = 'app-hmac-key-7f3a91';
const raw = Buffer.from(JSON.stringify(envelopeFixture('GIFT_DRAW_STARTED', drawFixture())), 'utf8');

/** Computed independently of the module under test. */
function expected(body: Buffer, key: string): string {
  return createHmac('sha256', key).update(body).digest('base64');
}

describe('fourthwall webhook signatures', () => {
  it('signWebhookBody gives the known answer', () => {
    // Fixed vector: HMAC-SHA256(key "key", "The quick brown fox jumps over the lazy dog"), base64.
    expect(signWebhookBody('The quick brown fox jumps over the lazy dog', 'key')).toBe(
      '97yD9DBThCSxMpjmqm+xQ+9NWaFJRhdZl0edvC0aPNg=',
    );
    expect(signWebhookBody(raw, secret)).toBe(expected(raw, secret));
  });

  it('accepts a valid shop signature (any header case) and a valid app signature', () => {
    expect(
      verifyWebhookSignature(raw, { 'x-fourthwall-hmac-sha256': expected(raw, secret) }, { webhookSecret: secret }),
    ).toEqual({ ok: true, scheme: 'shop' });
    expect(
      verifyWebhookSignature(raw, { 'X-Fourthwall-Hmac-SHA256': expected(raw, secret) }, { webhookSecret: secret }),
    ).toEqual({ ok: true, scheme: 'shop' });
    expect(
      verifyWebhookSignature(raw, { 'x-fourthwall-hmac-apps-sha256': expected(raw, appKey) }, { appHmacKey: appKey }),
    ).toEqual({ ok: true, scheme: 'app' });
    const both = { webhookSecret: secret, appHmacKey: appKey };
    expect(verifyWebhookSignature(raw, { 'x-fourthwall-hmac-apps-sha256': expected(raw, appKey) }, both)).toEqual({
      ok: true,
      scheme: 'app',
    });
    const h = new Headers({ 'X-Fourthwall-Hmac-SHA256': expected(raw, secret) });
    expect(verifyWebhookSignature(raw, h, both)).toEqual({ ok: true, scheme: 'shop' });
  });

  it('rejects a tampered body, a wrong secret and a cross-scheme signature', () => {
    const tampered = Buffer.from(raw);
    tampered[tampered.length - 2] = tampered[tampered.length - 2]! ^ 1;
    const sig = expected(raw, secret);
    expect(verifyWebhookSignature(tampered, { 'x-fourthwall-hmac-sha256': sig }, { webhookSecret: secret })).toEqual({
      ok: false,
      reason: 'shop: signature mismatch',
    });
    expect(
      verifyWebhookSignature(raw, { 'x-fourthwall-hmac-sha256': expected(raw, 'wrong') }, { webhookSecret: secret }).ok,
    ).toBe(false);
    // The shop secret's signature in the app header is not accepted as an app signature.
    expect(verifyWebhookSignature(raw, { 'x-fourthwall-hmac-apps-sha256': sig }, { appHmacKey: appKey }).ok).toBe(
      false,
    );
    // Parsed-and-reserialized JSON is different bytes: must be rejected (verify raw bytes only).
    const reserialized = Buffer.from(JSON.stringify(JSON.parse(raw.toString()), null, 1));
    expect(
      verifyWebhookSignature(reserialized, { 'x-fourthwall-hmac-sha256': sig }, { webhookSecret: secret }).ok,
    ).toBe(false);
  });

  it('rejects missing, short, long and non-base64 headers without throwing', () => {
    const keys = { webhookSecret: secret, appHmacKey: appKey };
    const sig = expected(raw, secret);
    const cases: [Record<string, string | string[] | undefined>, RegExp][] = [
      [{}, /missing/],
      [{ 'x-fourthwall-hmac-sha256': '' }, /missing/],
      [{ 'x-fourthwall-hmac-sha256': sig.slice(0, 20) }, /base64|length/],
      [{ 'x-fourthwall-hmac-sha256': Buffer.alloc(16).toString('base64') }, /length/],
      [{ 'x-fourthwall-hmac-sha256': Buffer.alloc(33).toString('base64') }, /length/],
      [{ 'x-fourthwall-hmac-sha256': `${sig.slice(0, -4)}!!!=` }, /base64/],
      [{ 'x-fourthwall-hmac-sha256': 'sha256=' + sig }, /base64/],
    ];
    for (const [headers, reason] of cases) {
      const r = verifyWebhookSignature(raw, headers, keys);
      expect(r.ok, JSON.stringify(headers)).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(reason);
    }
    expect(verifyWebhookSignature(raw, { 'x-fourthwall-hmac-sha256': sig }, {})).toEqual({
      ok: false,
      reason: expect.stringMatching(/no webhook secret/),
    });
  });

  it('takes the first value of a repeated header', () => {
    const sig = expected(raw, secret);
    expect(
      verifyWebhookSignature(raw, { 'x-fourthwall-hmac-sha256': [sig, 'junk'] }, { webhookSecret: secret }).ok,
    ).toBe(true);
  });
});
