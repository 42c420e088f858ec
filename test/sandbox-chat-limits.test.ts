/**
 * Twitch's limits on what the bot sends, as the sandbox chat server enforces them on an
 * injected ManualClock: first the policy alone (exact window arithmetic), then end to end
 * through tmi.js, checking each violation gets Twitch's NOTICE and is recorded, not delivered.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type tmi from 'tmi.js';
import { ManualClock } from '../src/shared/clock.js';
import { OutboundPolicy, type RoomModes, type SenderStatus } from '../src/sandbox/chat/limits.js';
import { startChatServer, type ChatServer, type ChatServerOptions } from '../src/sandbox/chat/index.js';
import { connectAndJoin, disconnectQuietly, tmiClient } from './support/sandbox-chat-tmi.js';
import { rawClient, rawLogin } from './support/sandbox-chat-raw.js';

const OFF: RoomModes = { slow: 0, followersOnly: -1, subsOnly: false, emoteOnly: false, r9k: false };
const BOT: SenderStatus = { login: 'bot', privileged: false, subscriber: false, following: false };
const MOD: SenderStatus = { ...BOT, privileged: true };

describe('OutboundPolicy', () => {
  it('allows 20 per 30 s for a non-mod, counting dropped attempts too', () => {
    const p = new OutboundPolicy({ minIntervalMs: 0 });
    const verdicts = Array.from({ length: 22 }, (_, i) => p.judge(0, 'c', BOT, `m${i}`, OFF));
    expect(verdicts.filter((v) => v.ok)).toHaveLength(20);
    expect(verdicts.slice(20)).toEqual([
      expect.objectContaining({ ok: false, msgId: 'msg_ratelimit' }),
      expect.objectContaining({ ok: false, msgId: 'msg_ratelimit' }),
    ]);
    // The 20 delivered and the 2 dropped at t=0 all leave the window at t=30 000.
    expect(p.judge(29_999, 'c', BOT, 'still blocked', OFF)).toMatchObject({ ok: false, msgId: 'msg_ratelimit' });
    expect(p.inWindow('bot', 29_999)).toBe(23);
    expect(p.judge(30_000, 'c', BOT, 'free again', OFF)).toEqual({ ok: true });
    // only the dropped attempt at 29 999 and this one are left in the window
    expect(p.inWindow('bot', 30_000)).toBe(2);
  });

  it('allows 100 per window for a mod and exempts mods from pacing, duplicates and modes', () => {
    const p = new OutboundPolicy();
    const modes: RoomModes = { slow: 30, followersOnly: 10, subsOnly: true, emoteOnly: true, r9k: false };
    const verdicts = Array.from({ length: 101 }, () => p.judge(0, 'c', MOD, 'same text', modes));
    expect(verdicts.filter((v) => v.ok)).toHaveLength(100);
    expect(verdicts[100]).toMatchObject({ ok: false, msgId: 'msg_ratelimit' });
  });

  it('paces a non-mod at minIntervalMs per channel, and per channel only', () => {
    const p = new OutboundPolicy();
    expect(p.judge(0, 'a', BOT, 'one', OFF).ok).toBe(true);
    expect(p.judge(999, 'a', BOT, 'two', OFF)).toMatchObject({ ok: false, msgId: 'msg_ratelimit' });
    expect(p.judge(999, 'b', BOT, 'other channel', OFF).ok).toBe(true);
    expect(p.judge(1000, 'a', BOT, 'three', OFF).ok).toBe(true);
  });

  it('applies slow mode, measured from the last delivered message', () => {
    const p = new OutboundPolicy();
    const slow = { ...OFF, slow: 5 };
    expect(p.judge(0, 'c', BOT, 'one', slow).ok).toBe(true);
    expect(p.judge(3000, 'c', BOT, 'two', slow)).toMatchObject({
      ok: false,
      msgId: 'msg_slowmode',
      text: 'This room is in slow mode and you are sending messages too quickly. You will be able to talk again in 2 seconds.',
    });
    expect(p.judge(5000, 'c', BOT, 'three', slow).ok).toBe(true);
  });

  it('drops the same text within 30 s of the last delivered one', () => {
    const p = new OutboundPolicy();
    expect(p.judge(0, 'c', BOT, 'hello', OFF).ok).toBe(true);
    expect(p.judge(1000, 'c', BOT, 'hello ', OFF)).toMatchObject({ ok: false, msgId: 'msg_duplicate' });
    expect(p.judge(2000, 'c', BOT, 'something else', OFF).ok).toBe(true);
    expect(p.judge(3000, 'c', BOT, 'hello', OFF).ok).toBe(true);
    expect(p.judge(4000, 'c', BOT, 'hello', OFF)).toMatchObject({ ok: false, msgId: 'msg_duplicate' });
    expect(p.judge(33_000, 'c', BOT, 'hello', OFF).ok).toBe(true);
  });

  it('enforces subs-only, followers-only and emote-only unless the bot qualifies', () => {
    const p = new OutboundPolicy({ minIntervalMs: 0 });
    expect(p.judge(0, 'c', BOT, 'a', { ...OFF, subsOnly: true })).toMatchObject({ msgId: 'msg_subsonly' });
    expect(p.judge(0, 'c', { ...BOT, subscriber: true }, 'b', { ...OFF, subsOnly: true }).ok).toBe(true);
    expect(p.judge(0, 'c', BOT, 'c', { ...OFF, followersOnly: 0 })).toMatchObject({ msgId: 'msg_followersonly' });
    expect(p.judge(0, 'c', { ...BOT, following: true }, 'd', { ...OFF, followersOnly: 0 }).ok).toBe(true);
    expect(p.judge(0, 'c', BOT, 'e', { ...OFF, emoteOnly: true })).toMatchObject({ msgId: 'msg_emoteonly' });
  });

  it('drops text over maxLength silently, counting code points, not UTF-16 units', () => {
    const p = new OutboundPolicy({ minIntervalMs: 0 });
    expect(p.judge(0, 'c', BOT, 'x'.repeat(500), OFF).ok).toBe(true);
    expect(p.judge(0, 'c', BOT, '🎁'.repeat(500), OFF).ok).toBe(true);
    expect(p.judge(0, 'c', BOT, 'y'.repeat(501), OFF)).toMatchObject({
      ok: false,
      msgId: 'msg_too_long',
      silent: true,
    });
    expect(p.judge(0, 'c', MOD, 'y'.repeat(501), OFF)).toMatchObject({ ok: false, msgId: 'msg_too_long' });
    expect(p.inWindow('bot', 0)).toBe(4);
  });

  it('rejects nonsense limits', () => {
    expect(() => new OutboundPolicy({ messages: -1 })).toThrow(/limits.messages must be a non-negative number/);
    expect(() => new OutboundPolicy({ windowMs: Number.NaN })).toThrow(/limits.windowMs/);
  });
});

describe('limits end to end through tmi.js', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  async function setup(
    opts: ChatServerOptions = {},
  ): Promise<{ s: ChatServer; c: tmi.Client; clock: ManualClock; notices: [string, string, string][] }> {
    const clock = new ManualClock();
    const s = await startChatServer({ clock, ...opts });
    cleanups.push(() => s.close());
    const c = tmiClient(s);
    cleanups.push(() => disconnectQuietly(c));
    const notices: [string, string, string][] = [];
    c.on('notice', (channel, msgId, message) => notices.push([channel, msgId, message]));
    await connectAndJoin(s, c);
    return { s, c, clock, notices };
  }

  /** Says `text` and waits until the server has judged it. */
  async function say(s: ChatServer, c: tmi.Client, text: string): Promise<void> {
    const judged = s.transcript.filter((e) => e.kind === 'bot' || e.kind === 'notice').length;
    await c.say(s.channel, text);
    await s.waitFor(
      () => s.transcript.filter((e) => e.kind === 'bot' || e.kind === 'notice').length === judged + 1,
      5000,
      `judgement of "${text}"`,
    );
  }

  it('answers the 21st message in 30 s with msg_ratelimit, and a mod gets 100', async () => {
    const { s, c, clock, notices } = await setup({ limits: { minIntervalMs: 0 } });
    for (let i = 0; i < 21; i++) await say(s, c, `line ${i}`);
    expect(s.botMessages()).toHaveLength(20);
    await s.waitFor(() => notices.length === 1);
    expect(notices[0]).toEqual([
      '#giftdrop_demo',
      'msg_ratelimit',
      'Your message was not sent because you are sending messages too quickly.',
    ]);
    expect(s.notices()).toEqual([
      { msgId: 'msg_ratelimit', text: 'Your message was not sent because you are sending messages too quickly.' },
    ]);
    expect(s.transcript.at(-1)).toMatchObject({ kind: 'notice', attempted: 'line 20', login: 'giftdrop_bot' });

    s.setBotMod(true);
    await s.waitFor(() => c.isMod(s.channel, 'giftdrop_bot'));
    for (let i = 21; i < 100; i++) await say(s, c, `line ${i}`);
    expect(s.botMessages()).toHaveLength(99); // 21 earlier attempts + 79 delivered = 100 in the window
    await say(s, c, 'line 100');
    expect(s.notices()).toHaveLength(2);
    clock.advance(30_001);
    await say(s, c, 'after the window');
    expect(s.botMessages().at(-1)).toBe('after the window');
  });

  it('answers pacing, slow mode, duplicates, subs-only, followers-only and emote-only with their NOTICEs', async () => {
    const { s, c, clock, notices } = await setup();
    await say(s, c, 'first');
    await say(s, c, 'too soon');
    clock.advance(1000);
    await say(s, c, 'first');
    clock.advance(1000);
    s.setRoomState({ slow: 10 });
    await say(s, c, 'slow down');
    clock.advance(9000);
    await say(s, c, 'slow enough');
    s.setRoomState({ slow: 0, subsOnly: true });
    clock.advance(1000);
    await say(s, c, 'subs only');
    s.setRoomState({ subsOnly: false, followersOnly: 10 });
    await say(s, c, 'followers only');
    s.setRoomState({ followersOnly: -1, emoteOnly: true });
    await say(s, c, 'emotes only');
    s.setRoomState({ emoteOnly: false });
    await say(s, c, 'all clear');

    await s.waitFor(() => notices.length === 6);
    expect(notices.map((n) => n[1])).toEqual([
      'msg_ratelimit',
      'msg_duplicate',
      'msg_slowmode',
      'msg_subsonly',
      'msg_followersonly',
      'msg_emoteonly',
    ]);
    expect(notices[1]![2]).toBe(
      'Your message was not sent because it is identical to the previous one you sent, less than 30 seconds ago.',
    );
    expect(notices[2]![2]).toMatch(/slow mode .* talk again in 8 seconds/);
    expect(notices[3]![2]).toMatch(/^This room is in subscribers-only mode\./);
    expect(notices[4]![2]).toBe('This room is in followers-only mode. Follow giftdrop_demo to join the community!');
    expect(s.botMessages()).toEqual(['first', 'slow enough', 'all clear']);
    expect(s.notices().map((n) => n.msgId)).toEqual(notices.map((n) => n[1]));
  });

  it('lets a subscribed, following bot talk in subs-only and followers-only rooms', async () => {
    const { s, c } = await setup({
      botIsSubscriber: true,
      botFollowing: true,
      roomState: { subsOnly: true, followersOnly: 0 },
    });
    await say(s, c, 'I may talk');
    expect(s.botMessages()).toEqual(['I may talk']);
  });

  it('exempts a mod bot from pacing, duplicates and slow mode', async () => {
    const { s, c } = await setup({ botIsMod: true, roomState: { slow: 30 } });
    await say(s, c, 'same');
    await say(s, c, 'same');
    await say(s, c, 'same');
    expect(s.botMessages()).toEqual(['same', 'same', 'same']);
    s.setBotMod(false);
    await say(s, c, 'now I am just a bot');
    expect(s.notices().map((n) => n.msgId)).toEqual(['msg_slowmode']);
  });

  it('drops a message over 500 characters silently and records it as msg_too_long', async () => {
    const clock = new ManualClock();
    const s = await startChatServer({ clock, limits: { minIntervalMs: 0 } });
    cleanups.push(() => s.close());
    const r = await rawClient(s.url);
    cleanups.push(() => r.close());
    await rawLogin(r, s.token);
    r.send('JOIN #giftdrop_demo');
    await r.waitForLine(/ROOMSTATE/);
    const from = r.lines.length;
    r.send(`PRIVMSG #giftdrop_demo :${'z'.repeat(501)}`, `PRIVMSG #giftdrop_demo :${'a'.repeat(500)}`, 'PING :end');
    await r.waitForLine(/^PONG :end$/, from);
    expect(r.lines.slice(from).some((l) => l.includes('NOTICE'))).toBe(false);
    expect(r.lines.slice(from).filter((l) => l.includes('USERSTATE'))).toHaveLength(1);
    expect(s.notices()).toEqual([{ msgId: 'msg_too_long', text: expect.stringMatching(/longer than 500 characters/) }]);
    expect(s.transcript.find((e) => e.kind === 'notice')?.attempted).toHaveLength(501);
    expect(s.botMessages()).toEqual(['a'.repeat(500)]);
  });

  it('honours configured limits (short windows for tests)', async () => {
    const { s, c, clock } = await setup({
      limits: { messages: 2, windowMs: 1000, minIntervalMs: 0, duplicateWindowMs: 100, maxLength: 10 },
    });
    await say(s, c, 'one');
    await say(s, c, 'two');
    await say(s, c, 'three');
    clock.advance(1001);
    await say(s, c, 'two');
    clock.advance(10);
    await say(s, c, 'elevenchars');
    expect(s.botMessages()).toEqual(['one', 'two', 'two']);
    expect(s.notices().map((n) => n.msgId)).toEqual(['msg_ratelimit', 'msg_too_long']);
  });
});
