/**
 * The interactive sandbox prompt's parser (/as, /gift, /viewers, /help, /quit, plain chat) and
 * the printer's markers (bot lines distinct from viewers', control characters removed, colour
 * only when asked).
 */
import { describe, expect, it } from 'vitest';
import { DEMO_HELP, MAX_DEMO_GIFTS, MAX_DEMO_VIEWERS, parseDemoCommand } from '../src/local/demo/commands.js';
import { clean, compactLogStream, DemoPrinter } from '../src/local/demo/output.js';
import type { TranscriptEntry } from '../src/sandbox/chat/index.js';

describe('parseDemoCommand', () => {
  it('plain text is said by the broadcaster; blank lines do nothing', () => {
    expect(parseDemoCommand('  !giveaway start mug 1 20 ')).toEqual({ kind: 'say', text: '!giveaway start mug 1 20' });
    expect(parseDemoCommand('hello chat')).toEqual({ kind: 'say', text: 'hello chat' });
    expect(parseDemoCommand('   ')).toEqual({ kind: 'empty' });
  });

  it("/shared speaks as a partner channel's viewer during Shared Chat (default partner, or #named); /shared end ends it", () => {
    expect(parseDemoCommand('/shared cozy_fan !enter')).toEqual({
      kind: 'shared',
      partner: 'cozy_partner',
      login: 'cozy_fan',
      text: '!enter',
    });
    expect(parseDemoCommand('/shared #Other_Stream @Bob hi there')).toEqual({
      kind: 'shared',
      partner: 'other_stream',
      login: 'bob',
      text: 'hi there',
    });
    expect(parseDemoCommand('/shared end')).toEqual({ kind: 'shared-end' });
    for (const line of ['/shared', '/shared bob', '/shared #bad-partner bob hi', '/shared not-a-login! hi']) {
      const c = parseDemoCommand(line);
      expect(c.kind, line).toBe('error');
      expect(c.kind === 'error' && c.message).toMatch(/usage: \/shared/);
    }
    expect(DEMO_HELP).toContain('/shared [#partner] <login> <text>');
  });

  it('help, quit and exit without the slash are the commands; another command word without it is said, with a hint', () => {
    expect(parseDemoCommand('help')).toEqual({ kind: 'help' });
    expect(parseDemoCommand(' Quit ')).toEqual({ kind: 'quit' });
    expect(parseDemoCommand('exit')).toEqual({ kind: 'quit' });
    expect(parseDemoCommand('gift 3 mug')).toEqual({
      kind: 'say',
      text: 'gift 3 mug',
      hint: 'Said in chat as the broadcaster. For the command, type /gift ... (/help lists them).',
    });
    expect(parseDemoCommand('help me win')).toMatchObject({
      kind: 'say',
      text: 'help me win',
      hint: expect.stringContaining('/help'),
    });
    expect(parseDemoCommand('gifts are nice')).toEqual({ kind: 'say', text: 'gifts are nice' });
  });

  it('/order places a paid order, of a product or the default one', () => {
    expect(parseDemoCommand('/order giftdrop mug')).toEqual({ kind: 'order', product: 'giftdrop mug' });
    expect(parseDemoCommand('/order')).toEqual({ kind: 'order' });
    expect(DEMO_HELP).toContain('/order [product]');
  });

  it('/as speaks as a viewer, with optional roles', () => {
    expect(parseDemoCommand('/as Alice !enter')).toEqual({
      kind: 'as',
      login: 'alice',
      text: '!enter',
      roles: {},
      extra: {},
    });
    expect(parseDemoCommand('/as +mod +sub6 bob hi there')).toEqual({
      kind: 'as',
      login: 'bob',
      text: 'hi there',
      roles: { mod: true, subscriber: true, subMonths: 6 },
      extra: {},
    });
    expect(parseDemoCommand('/as +first +me carl waves')).toMatchObject({
      kind: 'as',
      login: 'carl',
      text: 'waves',
      extra: { firstMessage: true, action: true },
    });
  });

  it('/as without text, with a bad login or an unknown role is an error that says the usage', () => {
    for (const line of ['/as', '/as alice', '/as not-a-login! hi', '/as +king alice hi']) {
      const c = parseDemoCommand(line);
      expect(c.kind, line).toBe('error');
      expect(c.kind === 'error' && c.message).toMatch(/usage: \/as/);
    }
  });

  it('/gift takes a count and an optional product (several words)', () => {
    expect(parseDemoCommand('/gift 3')).toEqual({ kind: 'gift', quantity: 3 });
    expect(parseDemoCommand('/gift 2 Giftdrop Mug')).toEqual({ kind: 'gift', quantity: 2, product: 'Giftdrop Mug' });
    for (const line of ['/gift', '/gift 0', `/gift ${MAX_DEMO_GIFTS + 1}`, '/gift two', '/gift -1', '/gift 1.5']) {
      expect(parseDemoCommand(line).kind, line).toBe('error');
    }
  });

  it('/viewers takes one count within bounds', () => {
    expect(parseDemoCommand('/viewers 12')).toEqual({ kind: 'viewers', count: 12 });
    for (const line of [
      '/viewers',
      '/viewers 0',
      `/viewers ${MAX_DEMO_VIEWERS + 1}`,
      '/viewers 3 4',
      '/viewers lots',
    ]) {
      expect(parseDemoCommand(line).kind, line).toBe('error');
    }
  });

  it('/help, /quit and unknown commands', () => {
    expect(parseDemoCommand('/help')).toEqual({ kind: 'help' });
    expect(parseDemoCommand('/HELP')).toEqual({ kind: 'help' });
    expect(parseDemoCommand('/quit')).toEqual({ kind: 'quit' });
    expect(parseDemoCommand('/exit')).toEqual({ kind: 'quit' });
    expect(parseDemoCommand('/dance now')).toEqual({
      kind: 'error',
      message: 'unknown command /dance: /help lists the commands',
    });
    for (const cmd of ['/as', '/gift', '/viewers', '/redeem', '/help', '/quit']) expect(DEMO_HELP).toContain(cmd);
    expect(parseDemoCommand('/redeem @Ana_1')).toEqual({ kind: 'redeem', login: 'ana_1' });
    expect(parseDemoCommand('/redeem')).toMatchObject({ kind: 'error', message: 'usage: /redeem <login>' });
    expect(parseDemoCommand('/redeem a b')).toMatchObject({ kind: 'error' });
    for (const cmd of ['/points', '/bits']) expect(DEMO_HELP).toContain(cmd);
    expect(parseDemoCommand('/points @Ana_1')).toEqual({ kind: 'points', login: 'ana_1' });
    expect(parseDemoCommand('/points')).toMatchObject({ kind: 'error', message: 'usage: /points <login>' });
    expect(parseDemoCommand('/bits ana 250')).toEqual({ kind: 'bits', login: 'ana', bits: 250 });
    expect(parseDemoCommand('/bits ana')).toMatchObject({
      kind: 'error',
      message: expect.stringMatching(/^usage: \/bits/),
    });
    expect(parseDemoCommand('/bits ana 0')).toMatchObject({ kind: 'error' });
  });
});

describe('DemoPrinter', () => {
  const entry = (e: Partial<TranscriptEntry>): TranscriptEntry => ({ at: 0, kind: 'viewer', text: '', ...e });

  function printer(colour: boolean) {
    let out = '';
    const p = new DemoPrinter({
      out: { write: (t: string) => (out += t) },
      colour,
      botLogin: 'giftdrop_bot',
      channel: 'giftdrop_demo',
      badges: (l) => (l === 'mia' ? 'mod' : undefined),
    });
    return { p, out: () => out };
  }

  it('marks bot lines, the broadcaster, badges, notices and private lines in plain text', () => {
    const { p, out } = printer(false);
    p.chat(entry({ kind: 'bot', login: 'giftdrop_bot', text: 'hello' }));
    p.chat(entry({ login: 'mia', text: '!enter' }));
    p.chat(entry({ login: 'giftdrop_demo', text: '!stream live' }));
    p.chat(entry({ login: 'zed', text: 'dances', action: true }));
    p.chat(entry({ kind: 'notice', msgId: 'msg_ratelimit', text: 'slow down' }));
    p.chat(entry({ kind: 'system', text: 'joined' }));
    p.private('link for @mia: http://x/gifts/gft_1');
    p.narrate('step');
    expect(out().split('\n')).toEqual([
      '[chat] bot> giftdrop_bot: hello',
      '[chat] mia (mod): !enter',
      '[chat] giftdrop_demo (broadcaster): !stream live',
      '[chat] zed: * dances',
      '[chat] Twitch notice to the bot (msg_ratelimit): slow down',
      '[private] operator console: link for @mia: http://x/gifts/gft_1',
      '▶ step',
      '',
    ]);
  });

  it('colours only when asked, and strips control characters from chat text', () => {
    const plain = printer(false);
    plain.p.chat(entry({ login: 'eve', text: 'hi\u001b[31m red\u0007\nnext' }));
    expect(plain.out()).toBe('[chat] eve: hi[31m red next\n');
    expect(clean('a\u001b[2Jb')).toBe('a[2Jb');
    const coloured = printer(true);
    coloured.p.chat(entry({ kind: 'bot', text: 'hello' }));
    expect(coloured.out()).toContain('\u001b[');
    expect(coloured.out()).toContain('bot> giftdrop_bot:');
  });

  it('compactLogStream prints one short line per pino JSON line', () => {
    let out = '';
    const s = compactLogStream({ write: (t: string) => (out += t) }, false);
    s.write('{"level":40,"module":"twitch","msg":"chat notice"}\n{"level":50,"msg":"boom","err":{"message":"bad"}}\n');
    expect(out).toBe('[log warn] twitch: chat notice\n[log error] boom (bad)\n');
  });
});
