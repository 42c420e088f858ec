/**
 * SupporterAlerts on an injected clock: the burst window (first alert at once, the rest of the
 * window as one line when it ends, a lone late alert as itself), low priority, disabled kinds,
 * and the cleaning of viewer-supplied names (control and bidi characters, length, chat commands).
 */
import { describe, expect, it } from 'vitest';
import { fileSchema } from '../src/config/schema.js';
import { silentLogger } from '../src/logging/index.js';
import { ManualClock } from '../src/shared/clock.js';
import { SupporterAlerts, cleanText, renderAlert, type AlertView } from '../src/shop/alerts.js';
import { overlayText } from '../src/web/operator/safe-text.js';

function setup(alerts: Record<string, unknown> = {}) {
  const clock = new ManualClock();
  const said: { text: string; priority?: string }[] = [];
  const a = new SupporterAlerts({
    settings: fileSchema.parse({ alerts }).alerts,
    chat: { say: (text, o) => said.push({ text, ...(o?.priority ? { priority: o.priority } : {}) }) },
    clock,
    logger: silentLogger(),
  });
  return { a, clock, said };
}
const order = (user: string): AlertView => ({ kind: 'order', user, products: ['Mug'], at: 'now' });

describe('supporter alert bursts', () => {
  it('says the first at once, coalesces the rest of the window into one low-priority line', () => {
    const { a, clock, said } = setup({ burstWindowSeconds: 60 });
    for (let i = 0; i < 5; i++) a.publish(order(`u${i}`));
    expect(said).toEqual([{ text: '🛍️ u0 just bought Mug. Thank you!', priority: 'low' }]);
    clock.advance(60_000);
    expect(said[1]).toEqual({ text: '4 new orders in the last minute. Thank you u1, u2, u3 and u4!', priority: 'low' });
    // The next window: a single alert is said as itself at its end.
    a.publish(order('late'));
    expect(said).toHaveLength(2);
    clock.advance(60_000);
    expect(said[2]!.text).toBe('🛍️ late just bought Mug. Thank you!');
    // A quiet window closes; the next alert is immediate again.
    clock.advance(60_000);
    a.publish(order('fresh'));
    expect(said[3]!.text).toBe('🛍️ fresh just bought Mug. Thank you!');
    a.close();
  });

  it('keeps kinds apart, skips disabled ones, names at most five supporters', () => {
    const { a, clock, said } = setup({
      donation: { enabled: false },
      giftPurchase: { enabled: true },
      burstWindowSeconds: 2,
    });
    const seen: AlertView[] = [];
    a.on('alert', (v: AlertView) => seen.push(v));
    a.publish({ kind: 'donation', user: 'd', products: [], at: 'now' });
    for (let i = 0; i < 9; i++) a.publish(order(`o${i}`));
    a.publish({ kind: 'giftPurchase', user: 'g', products: ['3× Mug'], at: 'now' });
    expect(said.map((s) => s.text)).toEqual(['🛍️ o0 just bought Mug. Thank you!', '🎁 g just gifted 3× Mug to chat!']);
    clock.advance(2000);
    expect(said[2]!.text).toBe('8 new orders in the last 2 seconds. Thank you o1, o2, o3, o4, o5 and 3 more!');
    expect(seen.map((v) => v.kind)).not.toContain('donation');
    expect(seen).toHaveLength(10);
    // Off by default (the gift draw a purchase opens is announced already): not said, not emitted.
    const plain = setup({});
    const plainSeen: AlertView[] = [];
    plain.a.on('alert', (v: AlertView) => plainSeen.push(v));
    plain.a.publish({ kind: 'giftPurchase', user: 'g', products: ['Mug'], at: 'now' });
    expect(plain.said).toEqual([]);
    expect(plainSeen).toEqual([]);
    plain.a.close();
    a.close();
  });
});

describe('alert text', () => {
  it('cleans viewer-supplied names and neutralises chat commands', () => {
    expect(cleanText('  a\u0000b\nc\u202eevil  ', 40)).toBe('a b c evil');
    expect(cleanText('x'.repeat(50), 10)).toBe(`${'x'.repeat(9)}…`);
    expect(cleanText('\u0007', 10)).toBeUndefined();
    // The overlay's cleaner is the same one: zero-width and BOM characters go too (a name made of
    // nothing visible is no name), and both agree on every character they take out.
    expect(cleanText('\u200b\ufeff\u2060', 10)).toBeUndefined();
    expect(cleanText('ab\u200bcd', 10)).toBe('ab cd');
    const sample = '  \u202eevil\u0007na\u200bme\u2028x\ufeff ';
    expect(cleanText(sample, 40)!.replace(/ /g, '')).toBe(overlayText(sample, 40).replace(/ /g, ''));
    const line = renderAlert('{user} bought {products}{amount}', {
      kind: 'order',
      user: '/ban someone',
      products: ['Mug', 'Tee'],
      amount: { value: 5, currency: 'EUR' },
      at: 'now',
    });
    expect(line).toBe('\u200b/ban someone bought Mug and Tee (5.00 EUR)');
  });
});
