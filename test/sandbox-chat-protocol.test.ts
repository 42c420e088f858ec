/**
 * The sandbox chat server against the real tmi.js 1.8.5 client (and a bare WebSocket client
 * where tmi.js hides the wire): handshake, join, viewer tags per role, cheers, /me, the bot's
 * messages, bad tokens, RECONNECT and dropped sockets, PING/PONG, transcript and waitFor.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type tmi from 'tmi.js';
import { ManualClock } from '../src/shared/clock.js';
import { GiftdropError } from '../src/shared/errors.js';
import { startChatServer, type ChatServer, type ChatServerOptions } from '../src/sandbox/chat/index.js';
import { connectAndJoin, disconnectQuietly, nextEvent, tmiClient } from './support/sandbox-chat-tmi.js';
import { rawClient, rawLogin, type RawIrcClient } from './support/sandbox-chat-raw.js';

type Tags = Record<string, unknown>;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function server(opts: ChatServerOptions = {}): Promise<ChatServer> {
  const s = await startChatServer(opts);
  cleanups.push(() => s.close());
  return s;
}

function client(s: ChatServer, opts: Parameters<typeof tmiClient>[1] = {}): tmi.Client {
  const c = tmiClient(s, opts);
  cleanups.push(() => disconnectQuietly(c));
  return c;
}

async function raw(s: ChatServer, protocol?: string): Promise<RawIrcClient> {
  const r = await rawClient(s.url, protocol);
  cleanups.push(() => r.close());
  return r;
}

/** Collects the (channel, tags, text, self) of each 'message' event. */
function collect(c: tmi.Client, event: 'message' | 'cheer' | 'action' = 'message'): [string, Tags, string, boolean][] {
  const got: [string, Tags, string, boolean][] = [];
  (c as unknown as { on(e: string, fn: (...a: unknown[]) => void): void }).on(event, (...a) => {
    got.push(a as [string, Tags, string, boolean]);
  });
  return got;
}

describe('handshake and join', () => {
  it('lets tmi.js connect and join, and records both', async () => {
    const s = await server({ channel: 'Some_Channel', channelId: '424242' });
    const connected = new Promise((resolve) => s.on('connection', resolve));
    const c = client(s);
    await c.connect();
    expect(await connected).toMatchObject({ login: 'giftdrop_bot', anonymous: false });
    const [channel] = await c.join('some_channel');
    expect(channel).toBe('#some_channel');
    expect(s.url).toBe(`ws://127.0.0.1:${s.port}`);
    expect(s.connections()).toBe(1);
    expect(s.joined()).toEqual(['giftdrop_bot']);
    expect(c.getUsername()).toBe('giftdrop_bot');
    expect(s.transcript.map((e) => e.text)).toEqual(['giftdrop_bot connected', 'giftdrop_bot joined #some_channel']);
  });

  it('speaks the handshake in Twitch order: ACK, welcome, GLOBALUSERSTATE; JOIN, USERSTATE before ROOMSTATE', async () => {
    const s = await server({ roomState: { slow: 3 } });
    const r = await raw(s);
    expect(r.ws.protocol).toBe('irc');
    await rawLogin(r, s.token);
    await r.waitForLine(/GLOBALUSERSTATE/);
    const commands = r.lines.map((l) => l.replace(/^@\S+ /, '').split(' ')[1]);
    expect(commands).toEqual(['CAP', '001', '002', '003', '004', '375', '372', '376', 'GLOBALUSERSTATE']);
    expect(r.lines[0]).toBe(':tmi.twitch.tv CAP * ACK :twitch.tv/tags twitch.tv/commands twitch.tv/membership');
    expect(r.lines.find((l) => l.includes('GLOBALUSERSTATE'))).toContain(`user-id=${s.botUserId}`);
    const from = r.lines.length;
    r.send('JOIN #giftdrop_demo');
    await r.waitForLine(/ROOMSTATE/, from);
    const joinLines = r.lines.slice(from).map((l) => l.replace(/^@\S+ /, '').split(' ')[1]);
    expect(joinLines).toEqual(['JOIN', '353', '366', 'USERSTATE', 'ROOMSTATE']);
    const roomstate = r.lines.at(-1)!;
    expect(roomstate).toBe(
      `@emote-only=0;followers-only=-1;r9k=0;room-id=${s.channelId};slow=3;subs-only=0 :tmi.twitch.tv ROOMSTATE #giftdrop_demo`,
    );
  });

  it('accepts the token with or without oauth:, and several lines in one frame', async () => {
    const s = await server({ token: 'oauth:abcdef123456' });
    expect(s.token).toBe('abcdef123456');
    const r = await raw(s);
    r.send(
      'CAP REQ :twitch.tv/tags twitch.tv/commands',
      'PASS abcdef123456',
      'NICK giftdrop_bot',
      'JOIN #giftdrop_demo',
    );
    await r.waitForLine(/ROOMSTATE #giftdrop_demo/);
    expect(s.joined()).toEqual(['giftdrop_bot']);
  });

  it('rejects a wrong token the way Twitch does, so tmi.js connect rejects without retrying', async () => {
    const s = await server();
    const c = client(s, { password: 'oauth:not-the-token', reconnect: true });
    await expect(c.connect()).rejects.toMatch(/Login authentication failed/);
    await s.waitFor(() => s.connections() === 0, 5000, 'socket closed');
    expect(s.joined()).toEqual([]);
    expect(s.transcript.at(-1)?.text).toMatch(/login rejected/);
    const r = await raw(s);
    r.send('PASS oauth:wrong', 'NICK giftdrop_bot');
    expect(await r.waitForLine(/NOTICE/)).toBe(':tmi.twitch.tv NOTICE * :Login authentication failed');
    await r.closed;
  });

  it('lets an anonymous justinfan read but not speak', async () => {
    const s = await server();
    const c = client(s, { username: 'justinfan12345', password: undefined });
    const got = collect(c);
    await connectAndJoin(s, c);
    s.inject(s.viewer('alice'), 'hello');
    await s.waitFor(() => got.length === 1);
    expect(got[0]![2]).toBe('hello');
    const r = await raw(s);
    r.send('NICK justinfan999', 'JOIN #giftdrop_demo', 'PRIVMSG #giftdrop_demo :can I talk?', 'PING :x');
    await r.waitForLine(/^PONG/);
    expect(s.botMessages()).toEqual([]);
  });

  it('rejects a join of another channel with msg_room_not_found (tmi.js join rejects)', async () => {
    const s = await server();
    const c = client(s);
    await c.connect();
    await expect(c.join('elsewhere')).rejects.toBe('msg_room_not_found');
    expect(s.joined()).toEqual([]);
  });

  it('handles PART, and answers an unknown command with 421', async () => {
    const s = await server();
    const c = client(s);
    await connectAndJoin(s, c);
    await c.part(s.channel);
    expect(s.joined()).toEqual([]);
    const r = await raw(s);
    await rawLogin(r, s.token);
    r.send('WHO #giftdrop_demo');
    expect(await r.waitForLine(/ 421 /)).toBe(':tmi.twitch.tv 421 giftdrop_bot WHO :Unknown command');
  });

  it('strips tags for a client that did not request twitch.tv/tags', async () => {
    const s = await server();
    const r = await raw(s);
    r.send('CAP REQ :twitch.tv/commands', `PASS oauth:${s.token}`, 'NICK giftdrop_bot', 'JOIN #giftdrop_demo');
    await r.waitForLine(/ROOMSTATE/);
    s.inject(s.viewer('alice'), 'no tags please');
    expect(await r.waitForLine(/PRIVMSG/)).toBe(
      ':alice!alice@alice.tmi.twitch.tv PRIVMSG #giftdrop_demo :no tags please',
    );
  });
});

describe('injected viewer messages', () => {
  it('carry the tags Twitch sends, per role, as tmi.js parses them', async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 1, 12));
    const s = await server({ clock, channelId: '5550001' });
    const c = client(s);
    const got = collect(c);
    await connectAndJoin(s, c);

    const plain = s.viewer('Plain_Pete');
    const mod = s.viewer('modmary', { mod: true });
    const vip = s.viewer('vipvic', { vip: true });
    const sub = s.viewer('subsam', { subscriber: true, subMonths: 14, displayName: 'SubSam' });
    const newbie = s.viewer('newbie', { firstMessage: true });
    for (const v of [plain, mod, vip, sub, s.broadcaster, newbie]) s.inject(v, `hi from ${v.login}`);
    s.inject(newbie, 'second message');
    await s.waitFor(() => got.length === 7);

    const byLogin = new Map(got.map(([, tags, text]) => [text, tags]));
    const t = (text: string): Tags => byLogin.get(text)!;
    const common = {
      'room-id': '5550001',
      'tmi-sent-ts': String(clock.now()),
      turbo: false,
      'returning-chatter': false,
      flags: null,
      emotes: null,
    };

    expect(t('hi from plain_pete')).toMatchObject({
      ...common,
      username: 'plain_pete',
      'display-name': 'plain_pete',
      'user-id': plain.userId,
      badges: null,
      'badge-info': null,
      mod: false,
      subscriber: false,
      'first-msg': false,
      'user-type': null,
    });
    expect(t('hi from plain_pete')).not.toHaveProperty('vip');
    expect(t('hi from plain_pete').id).toMatch(/^[0-9a-f-]{36}$/);
    expect(t('hi from plain_pete').color).toMatch(/^#[0-9A-F]{6}$/);
    expect(t('hi from modmary')).toMatchObject({
      ...common,
      badges: { moderator: '1' },
      mod: true,
      'user-type': 'mod',
      'user-id': mod.userId,
    });
    expect(t('hi from vipvic')).toMatchObject({ ...common, badges: { vip: '1' }, vip: true, mod: false });
    expect(t('hi from subsam')).toMatchObject({
      ...common,
      'display-name': 'SubSam',
      subscriber: true,
      badges: { subscriber: '12' },
      'badge-info': { subscriber: '14' },
    });
    expect(t('hi from giftdrop_demo')).toMatchObject({ ...common, badges: { broadcaster: '1' }, 'user-id': '5550001' });
    expect(t('hi from newbie')['first-msg']).toBe(true);
    expect(t('second message')['first-msg']).toBe(false);
    expect(s.broadcaster.userId).toBe(s.channelId);

    expect(s.transcript.filter((e) => e.kind === 'viewer').map((e) => [e.login, e.userId, e.text])).toEqual([
      ['plain_pete', plain.userId, 'hi from plain_pete'],
      ['modmary', mod.userId, 'hi from modmary'],
      ['vipvic', vip.userId, 'hi from vipvic'],
      ['subsam', sub.userId, 'hi from subsam'],
      ['giftdrop_demo', '5550001', 'hi from giftdrop_demo'],
      ['newbie', newbie.userId, 'hi from newbie'],
      ['newbie', newbie.userId, 'second message'],
    ]);
    const entry = s.transcript.find((e) => e.text === 'hi from modmary')!;
    expect(entry.messageId).toBe(t('hi from modmary').id);
    expect(entry.at).toBe(clock.now());
  });

  it('derives stable numeric user ids that tmi.js keeps as strings', async () => {
    const s = await server();
    const a = s.viewer('Someone');
    expect(a.userId).toMatch(/^[1-9]\d{11}$/);
    expect(s.viewer('someone').userId).toBe(a.userId);
    expect(s.viewer('someone_else').userId).not.toBe(a.userId);
    const other = await server();
    expect(other.viewer('someone').userId).toBe(a.userId);
  });

  it('delivers bits through cheer (with the cheer badge) and /me through action', async () => {
    const s = await server();
    const c = client(s);
    const cheers = collect(c, 'cheer');
    const actions = collect(c, 'action');
    const messages = collect(c);
    await connectAndJoin(s, c);
    s.inject(s.viewer('cheerer', { subMonths: 3 }), 'Cheer250 take my bits', { bits: 250 });
    s.inject(s.viewer('dancer'), 'dances wildly', { action: true });
    await s.waitFor(() => cheers.length === 1 && actions.length === 1);
    const [, cheerTags, cheerText] = cheers[0]!;
    expect(cheerTags).toMatchObject({ bits: '250', badges: { subscriber: '3', bits: '100' }, username: 'cheerer' });
    expect(cheerText).toBe('Cheer250 take my bits');
    expect(actions[0]![1]).toMatchObject({ 'message-type': 'action', username: 'dancer' });
    expect(actions[0]![2]).toBe('dances wildly');
    expect(messages.map((m) => m[2])).toEqual(['dances wildly']);
    expect(s.formatPrivmsg(s.viewer('dancer'), 'x', { action: true })).toMatch(
      /PRIVMSG #giftdrop_demo :\u0001ACTION x\u0001$/,
    );
    expect(s.transcript.filter((e) => e.kind === 'viewer').map((e) => [e.bits, e.action])).toEqual([
      [250, undefined],
      [undefined, true],
    ]);
  });

  it('escapes tag values per IRCv3 so tmi.js reads them back', async () => {
    const s = await server();
    const line = s.formatPrivmsg(s.viewer('odd', { displayName: 'Semi;Colon\\Back' }), 'text; with spaces');
    expect(line).toContain('display-name=Semi\\:Colon\\\\Back;');
    expect(line).toMatch(/:text; with spaces$/);
    const c = client(s);
    const got = collect(c);
    await connectAndJoin(s, c);
    s.inject(s.viewer('odd', { displayName: 'Semi;Colon' }), 'text; with spaces');
    await s.waitFor(() => got.length === 1);
    expect(got[0]![1]['display-name']).toBe('Semi;Colon');
    expect(got[0]![2]).toBe('text; with spaces');
  });

  it('refuses bad input with a clear error and records nothing', async () => {
    const s = await server();
    const catchErr = (fn: () => unknown): GiftdropError => {
      try {
        fn();
      } catch (err) {
        return err as GiftdropError;
      }
      throw new Error('expected a throw');
    };
    expect(catchErr(() => s.viewer('bad login!'))).toMatchObject({
      code: 'SANDBOX_CHAT_BAD_INPUT',
      message: expect.stringMatching(/login must be/),
    });
    expect(catchErr(() => s.inject(s.viewer('ok'), 'two\r\nlines'))).toMatchObject({ code: 'SANDBOX_CHAT_BAD_INPUT' });
    expect(catchErr(() => s.inject(s.viewer('ok'), ''))).toMatchObject({ code: 'SANDBOX_CHAT_BAD_INPUT' });
    expect(catchErr(() => s.inject(s.viewer('ok'), 'x', { bits: 0 }))).toMatchObject({
      code: 'SANDBOX_CHAT_BAD_INPUT',
    });
    expect(catchErr(() => s.setRoomState({ slow: -2 }))).toMatchObject({ code: 'SANDBOX_CHAT_BAD_INPUT' });
    expect(s.transcript).toEqual([]);
    await expect(startChatServer({ channelId: '1' })).rejects.toMatchObject({ code: 'SANDBOX_CHAT_BAD_INPUT' });
    await expect(startChatServer({ port: s.port })).rejects.toMatchObject({ code: 'SANDBOX_CHAT_LISTEN' });
  });

  /** A server with two clients in the channel: tmi.js first (its messages in `got`), then a raw socket. */
  async function tmiAndRawJoined() {
    const s = await server();
    const c = client(s);
    const got = collect(c);
    await connectAndJoin(s, c);
    const r = await raw(s);
    await rawLogin(r, s.token);
    r.send('JOIN #giftdrop_demo');
    await r.waitForLine(/ROOMSTATE/);
    return { s, got, r };
  }

  it('injectRaw batches many lines per frame and tmi.js receives every one', async () => {
    const { s, got, r } = await tmiAndRawJoined();
    const framesBefore = r.frames;
    const linesBefore = r.lines.length;
    const viewers = Array.from({ length: 50 }, (_, i) => s.viewer(`bulk${i}`));
    const lines = Array.from({ length: 5000 }, (_, i) => s.formatPrivmsg(viewers[i % 50]!, `!enter ${i}`));
    s.injectRaw(lines);
    await s.waitFor(() => got.length === 5000 && r.lines.length - linesBefore === 5000, 10_000, '5000 raw lines');
    expect(r.frames - framesBefore).toBeLessThan(50);
    expect(got.map((g) => g[2]).slice(0, 3)).toEqual(['!enter 0', '!enter 1', '!enter 2']);
    expect(got[4999]![1]['user-id']).toBe(viewers[4999 % 50]!.userId);
    expect(s.transcript.filter((e) => e.kind === 'viewer')).toEqual([]);
  });

  it('injectRaw with `only` reaches just the client at that place in join order', async () => {
    const { s, got, r } = await tmiAndRawJoined();
    expect(s.joined()).toHaveLength(2);
    const v = s.viewer('turns');
    const linesBefore = r.lines.length;
    s.injectRaw([s.formatPrivmsg(v, 'to the raw client')], { only: 1 });
    await r.waitForLine(/to the raw client/);
    s.injectRaw([s.formatPrivmsg(v, 'to tmi.js')], { only: 0 });
    await s.waitFor(() => got.length === 1, 5000, 'the line for tmi.js');
    expect(got.map((g) => g[2])).toEqual(['to tmi.js']);
    // the raw client got its own line and never tmi.js's (it came after, on the same server)
    s.injectRaw([s.formatPrivmsg(v, 'to both')]);
    await r.waitForLine(/to both/);
    await s.waitFor(() => got.length === 2, 5000, 'the line for both');
    expect(r.lines.slice(linesBefore).filter((l) => l.includes('PRIVMSG'))).toEqual([
      expect.stringContaining('to the raw client'),
      expect.stringContaining('to both'),
    ]);
    expect(got.map((g) => g[2])).toEqual(['to tmi.js', 'to both']);
  });
});

describe('what the bot says', () => {
  it('lands in the transcript, is answered by USERSTATE, never echoed, and reaches other clients', async () => {
    const clock = new ManualClock();
    const s = await server({ clock });
    const botMessages: unknown[] = [];
    s.on('bot-message', (e) => botMessages.push(e));
    const bot = client(s);
    const seen: string[] = [];
    (bot as unknown as { on(e: string, fn: (m: { command: string }) => void): void }).on('raw_message', (m) =>
      seen.push(m.command),
    );
    await connectAndJoin(s, bot);
    const watcher = client(s, { username: 'justinfan7', password: undefined });
    const watched = collect(watcher);
    await connectAndJoin(s, watcher);

    const before = seen.length;
    await bot.say(s.channel, 'The giveaway is open! Type !enter');
    await s.waitFor(() => watched.length === 1);
    clock.advance(1000);
    await bot.action(s.channel, 'waves');
    await s.waitFor(() => watched.length === 2);

    expect(s.botMessages()).toEqual(['The giveaway is open! Type !enter', 'waves']);
    const bots = s.transcript.filter((e) => e.kind === 'bot');
    expect(bots.map((e) => [e.login, e.userId, e.action])).toEqual([
      ['giftdrop_bot', s.botUserId, undefined],
      ['giftdrop_bot', s.botUserId, true],
    ]);
    expect(botMessages).toEqual(bots);
    await s.waitFor(() => seen.slice(before).filter((c) => c === 'USERSTATE').length === 2, 5000, 'two USERSTATE');
    expect(seen.slice(before)).not.toContain('PRIVMSG');
    expect(watched[0]![1]).toMatchObject({ username: 'giftdrop_bot', 'user-id': s.botUserId, id: bots[0]!.messageId });
    expect(watched[1]![2]).toBe('waves');
    expect(watched[1]![1]['message-type']).toBe('action');
  });

  it('records the reply parent of a reply', async () => {
    const s = await server();
    const r = await raw(s);
    await rawLogin(r, s.token);
    r.send('JOIN #giftdrop_demo', '@reply-parent-msg-id=abc-123 PRIVMSG #giftdrop_demo :you won!');
    await r.waitForLine(/USERSTATE #giftdrop_demo$/, r.lines.findIndex((l) => l.includes('ROOMSTATE')) + 1);
    expect(s.transcript.at(-1)).toMatchObject({ kind: 'bot', text: 'you won!', replyTo: 'abc-123' });
  });

  it('answers a removed slash command with unrecognized_cmd and delivers nothing', async () => {
    const s = await server();
    const c = client(s);
    await connectAndJoin(s, c);
    const notice = nextEvent<[string, string, string]>(c, 'notice');
    await c.say(s.channel, '/ban someone');
    const [channel, msgId] = await notice;
    expect([channel, msgId]).toEqual(['#giftdrop_demo', 'unrecognized_cmd']);
    expect(s.botMessages()).toEqual([]);
    expect(s.notices().map((n) => n.msgId)).toEqual(['unrecognized_cmd']);
  });

  it('tells the bot when it becomes a mod, and sends room modes as ROOMSTATE', async () => {
    const s = await server();
    const c = client(s);
    await connectAndJoin(s, c);
    expect(c.isMod(s.channel, 'giftdrop_bot')).toBe(false);
    const modEvent = nextEvent<[string, string]>(c, 'mod');
    s.setBotMod(true);
    expect(await modEvent).toEqual(['#giftdrop_demo', 'giftdrop_bot']);
    await s.waitFor(() => c.isMod(s.channel, 'giftdrop_bot'));
    const userstate = (c as unknown as { userstate: Record<string, Tags> }).userstate;
    expect(userstate['#giftdrop_demo']).toMatchObject({ mod: true, badges: { moderator: '1' }, 'user-type': 'mod' });

    const slow = nextEvent<[string, boolean, number]>(c, 'slowmode');
    const rooms = collect(c, 'roomstate' as 'message');
    s.setRoomState({ slow: 10, subsOnly: true });
    expect(await slow).toEqual(['#giftdrop_demo', true, 10]);
    await s.waitFor(() => rooms.length === 2);
    expect(rooms.map((r) => r[1])).toEqual([
      expect.objectContaining({ slow: '10', 'room-id': s.channelId }),
      expect.objectContaining({ 'subs-only': true }),
    ]);
    expect(s.roomState).toMatchObject({ slow: 10, subsOnly: true, followersOnly: -1 });
  });
});

describe('connection lifecycle', () => {
  it('RECONNECT makes tmi.js reconnect and re-join', async () => {
    const s = await server();
    let joins = 0;
    s.on('join', () => joins++);
    const c = client(s, { reconnect: true, channels: ['giftdrop_demo'] });
    const got = collect(c);
    await c.connect();
    await s.waitFor(() => joins === 1);
    s.sendReconnect();
    await s.waitFor(() => joins === 2 && s.connections() === 1, 10_000, 're-join after RECONNECT');
    s.inject(s.viewer('after'), 'still here?');
    await s.waitFor(() => got.length === 1);
    expect(got[0]![2]).toBe('still here?');
    expect(s.transcript.some((e) => e.text.startsWith('RECONNECT sent'))).toBe(true);
  });

  it('a dropped socket makes tmi.js reconnect and re-join', async () => {
    const s = await server();
    const disconnects: unknown[] = [];
    s.on('disconnect', (info) => disconnects.push(info));
    const c = client(s, { reconnect: true, channels: ['giftdrop_demo'] });
    await c.connect();
    await s.waitFor(() => s.joined().length === 1);
    s.dropConnections();
    await s.waitFor(() => disconnects.length === 1);
    expect(disconnects[0]).toMatchObject({ login: 'giftdrop_bot' });
    await s.waitFor(() => s.joined().length === 1 && s.connections() === 1, 10_000, 're-join after drop');
    await c.say(s.channel, 'back again');
    await s.waitFor(() => s.botMessages().length === 1);
  });

  it('answers PING with PONG and PINGs clients', async () => {
    const s = await server();
    const c = client(s);
    await connectAndJoin(s, c);
    const [latency] = await c.ping();
    expect(latency).toBeGreaterThanOrEqual(0);
    const pinged = nextEvent(c, 'ping');
    expect(await s.ping()).toBe(1);
    await pinged;
    const silent = await raw(s);
    await rawLogin(silent, s.token);
    silent.ws.removeAllListeners('message');
    silent.ws.pause();
    await expect(s.ping(100)).rejects.toThrow(/no PONG/);
  });

  it('close() ends every socket and is idempotent', async () => {
    const s = await startChatServer();
    const c = tmiClient(s);
    await connectAndJoin(s, c);
    const closed = nextEvent(c, 'disconnected');
    await s.close();
    await closed;
    expect(s.connections()).toBe(0);
    await s.close();
  });
});

describe('waitFor', () => {
  it('resolves when the predicate turns true and rejects clearly on timeout', async () => {
    const s = await server();
    const waiting = s.waitFor(() => s.transcript.some((e) => e.text === 'ping me'), 5000);
    s.inject(s.viewer('someone'), 'ping me');
    await waiting;
    await expect(s.waitFor(() => false, 30, 'the impossible')).rejects.toThrow(
      /waitFor\(the impossible\) timed out after 30 ms; last transcript: viewer someone: ping me/,
    );
    await expect(
      s.waitFor(() => {
        throw new Error('predicate broke');
      }),
    ).rejects.toThrow('predicate broke');
  });
});
