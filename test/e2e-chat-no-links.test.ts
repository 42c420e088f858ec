/**
 * Nothing a supporter types becomes a link in chat, end to end: a gifter and a donor named with a
 * URL (and a gift message holding one) reach the real bot through signed sandbox webhooks; every
 * line the bot says in the local chat server (the draw-open line, the alert, the winners line, the
 * nobody-entered line, with templates that name the gifter and the message) carries none of it,
 * while the rest of the line is still said. The scrubber itself (src/shared/plain-text.ts) is
 * checked on the shapes Twitch's link filter reads as links.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { linkFreeText } from '../src/shared/plain-text.js';
import { startLinkStack, type LinkStack } from './support/e2e-link-stack.js';

const GIFTER = 'Claim-your-prize-at-www.phish.example';
const GIFTER_2 = 'free-merch.example/claim';
const DONOR = 'https://free-merch-claim.example/login?twitch=1';
const MESSAGE = 'grab yours at phish.example/gift now';
const LINKISH = /phish|free-merch|:\/\/|www\.|\.example/i;

describe('the link scrubber', () => {
  it('replaces every link shape, keeps ordinary names', () => {
    for (const s of [
      GIFTER,
      GIFTER_2,
      DONOR,
      MESSAGE,
      'HTTPS://X.Y',
      'evil.com',
      'bit.ly/abc',
      'a\u200bwww.\u200bphish.example',
      'me@phish.example',
      'sub.domain.gg/path?x=1',
    ]) {
      const out = linkFreeText(s, 80, ' ');
      expect(out, s).not.toMatch(LINKISH);
      expect(out, s).not.toMatch(/[a-z0-9-]\.[a-z]{2,}/i);
      expect(out, s).toContain('[link]');
    }
    for (const s of ['generous_fan', 'Dora the Donor', 'v2.0 fan', 'J. Doe']) expect(linkFreeText(s, 80, ' ')).toBe(s);
  });

  it('knows the hosts Twitch and browsers read beyond ASCII: IDN and punycode TLDs, IPs with ports, Unicode dots, hidden characters', () => {
    const hosts = [
      'evil.xn--p1ai/free',
      'пример.рф',
      'münchen.de/x',
      '203.0.113.5:8080/free',
      '203.0.113.5',
      '[2001:db8::1]:8080/free',
      'evil\uff0ecom', // full-width dot
      'evil\u3002com', // ideographic full stop
      'evil\uff61com', // half-width ideographic full stop
      'evil\ufe52com/x', // small full stop
      'ev\u00adil.com', // a soft hyphen inside
      'evil.c\u00adom/free',
      'evil\u200b.com', // zero-width space before the dot
      'evil\u2060.\u2060com',
      '\uff45\uff56\uff49\uff4c\uff0e\uff43\uff4f\uff4d', // full-width letters
      'sub.evil.com:8443/login',
      // TLDs whose vowel signs are combining marks (\p{M}), not letters (issue 46)
      'merch.भारत/free',
      'shop.संगठन',
      'evil.ಭಾರತ',
      'evil.ලංකා',
    ];
    for (const host of hosts) {
      for (const line of [host, `free merch at ${host} now`]) {
        const out = linkFreeText(line, 120, ' ');
        expect(out, line).toContain('[link]');
        expect(out, line).not.toMatch(/evil|xn--|пример|münchen|203\.0|2001:|merch\.|shop\.|भारत|संगठन|ಭಾರತ|ලංකා/i);
        expect(out, line).not.toMatch(/[\p{L}\p{M}\p{N}-]\.\p{L}[\p{L}\p{M}]+/u);
      }
    }
  });

  it('leaves ordinary chat alone: "gg.", "1.5x", "v2.0", times, prices, decimals', () => {
    for (const s of [
      'gg.',
      'gg. wp',
      'GG.',
      '1.5x speed',
      'v2.0',
      'at 10:30',
      '10:30:45',
      'until 9:05 pm',
      '$4.99',
      '€12.50 each',
      '4,99 €',
      'lol...',
      'ok.',
      'pi is 3.14159',
      'v1.2.3',
      '2:1 odds',
      'Zoë & Chloé',
      '🎉 thanks!',
    ]) {
      expect(linkFreeText(s, 80, ' '), s).toBe(s);
    }
  });
});

describe('chat lines', { timeout: 120_000 }, () => {
  let s: LinkStack;
  afterAll(async () => {
    await s?.close(true);
  });

  it('a gifter or donor named with a URL never puts it in any chat line', async () => {
    s = await startLinkStack({
      settings: {
        messages: {
          drawOpened: 'OPEN {gifter} gifted {count}x {product}: {message}. Type {enter}!',
          purchaseOpened: 'OPEN {gifter} gifted {count}x {product}: {message}. Type {enter}!',
          winners: 'WON {product} from {gifter}: {winners}. {delivery}',
          noEntrants: 'NOBODY for {product} from {gifter}',
          tooFewEntrants: 'NOBODY for {product} from {gifter}', // a gift draw nobody entered is handed back
        },
        alerts: {
          giftPurchase: { enabled: true, template: 'GIFT by {user}: {products}' },
          donation: { template: 'DONATION by {user}' },
        },
      },
      fourthwall: { drawDurationSeconds: 3 },
    });
    s.fw.control.setLive(true, { broadcasterId: s.chat.channelId, broadcasterLogin: s.chat.channel });
    const from = s.mark();

    s.fw.control.shop.donate({ username: DONOR, amount: 5 });
    expect(await s.nextBotLine(/^DONATION by/, from)).toBe('DONATION by [link]');

    // a draw one viewer enters: open line, alert, winners line
    s.fw.control.simulateGiftPurchase({ quantity: 1, username: GIFTER, message: MESSAGE, durationSeconds: 3 });
    const open = await s.nextBotLine(/^OPEN /, from);
    expect(open).toMatch(/^OPEN \S*\[link\] gifted 1x .+: .*\[link\].*\. Type !enter!$/);
    s.enter(['winner_one']);
    expect(await s.nextBotLine(/^WON /, from, 30_000)).toMatch(/^WON .+ from \S*\[link\]: @winner_one\./);

    // a draw nobody enters
    s.fw.control.simulateGiftPurchase({ quantity: 1, username: GIFTER_2, durationSeconds: 3 });
    expect(await s.nextBotLine(/^NOBODY /, from, 30_000)).toMatch(/^NOBODY for .+ from \[link\]$/);
    expect(await s.nextBotLine(/^GIFT by /, from)).toMatch(/^GIFT by \S*\[link\]: /);

    // the review's line: an IDN top-level domain written with combining marks (merch.भारत)
    const fromIdn = s.mark();
    s.fw.control.simulateGiftPurchase({ quantity: 1, username: 'merch.भारत/free', durationSeconds: 3 });
    expect(await s.nextBotLine(/^OPEN /, fromIdn, 30_000)).toMatch(/^OPEN \[link\] gifted 1x /);

    const lines = s.botLines(from);
    expect(lines.length).toBeGreaterThanOrEqual(7);
    for (const line of lines) expect(line, line).not.toMatch(LINKISH);
    for (const line of lines) expect(line, line).not.toMatch(/भारत|merch\./);
  });
});
