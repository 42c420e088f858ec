/**
 * TwitchChat end to end over real sockets against the sandbox chat server (tmi.js on the wire).
 * Pacing tests share one ManualClock between server and client and advance it step by step,
 * waiting for the server to judge each written line: no sleeps, no timing luck.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startChatServer } from '../src/sandbox/chat/index.js';
import { TwitchAuthError, TwitchChat } from '../src/twitch/client.js';
import { silentLogger } from '../src/logging/index.js';
import { capturingLogger } from './support/twitch-fakes.js';
import { drive, ManualClock, startPair, stateReached, type Pair } from './support/twitch-e2e.js';

const open: Pair[] = [];
async function pair(...args: Parameters<typeof startPair>): Promise<Pair> {
  const p = await startPair(...args);
  open.push(p);
  return p;
}
afterEach(async () => {
  for (const p of open.splice(0)) await p.close();
});

describe('TwitchChat receiving', () => {
  it('connects, joins and learns the channel id; not mod until USERSTATE says so', async () => {
    const p = await pair();
    expect(p.chat.state).toBe('connected');
    expect(p.states).toEqual(['connecting', 'connected']);
    expect(p.chat.channelId()).toBe(p.server.channelId);
    expect(p.chat.isMod()).toBe(false);
    expect(p.server.joined()).toEqual([p.server.botLogin]);
    p.server.setBotMod(true);
    await p.server.waitFor(() => p.chat.isMod(), 5000, 'bot sees mod status');
    p.server.setRoomState({ slow: 5, followersOnly: 10, subsOnly: true });
    await p.server.waitFor(() => p.chat.roomState().subsOnly, 5000, 'room state');
    expect(p.chat.roomState()).toEqual({ slow: 5, followersOnly: 10, subsOnly: true, emoteOnly: false });
    p.server.setRoomState({ slow: 0, followersOnly: -1, subsOnly: false });
    await p.server.waitFor(
      () => !p.chat.roomState().subsOnly && p.chat.roomState().followersOnly === -1,
      5000,
      'room state off',
    );
    expect(p.chat.roomState().slow).toBe(0);
  });

  it('delivers messages from every role with the right ChatMessage fields', async () => {
    const p = await pair();
    const s = p.server;
    const viewer = s.viewer('plain_viewer');
    const mod = s.viewer('a_mod', { mod: true });
    const vip = s.viewer('a_vip', { vip: true });
    const sub = s.viewer('a_sub', { subscriber: true, subMonths: 14, displayName: 'A_Sub' });
    const newbie = s.viewer('newbie', { firstMessage: true });
    s.inject(viewer, '!enter');
    s.inject(mod, '!giveaway end');
    s.inject(vip, 'hi');
    s.inject(sub, '!ENTER   now 😀 Tシャツ');
    s.inject(newbie, 'first!');
    s.inject(newbie, 'second');
    s.inject(s.broadcaster, '!giveaway start hoodie');
    s.inject(viewer, 'Cheer100 !enter', { bits: 100 });
    s.inject(viewer, 'dances', { action: true });
    s.inject(viewer, 'x'.repeat(500));
    await s.waitFor(() => p.messages.length === 10, 5000, '10 messages');
    const m = p.messages;
    expect(m.map((x) => x.login)).toEqual([
      'plain_viewer',
      'a_mod',
      'a_vip',
      'a_sub',
      'newbie',
      'newbie',
      s.channel,
      'plain_viewer',
      'plain_viewer',
      'plain_viewer',
    ]);
    for (const x of m) {
      expect(x.channel).toBe(s.channel);
      expect(x.channelId).toBe(s.channelId);
      expect(x.self).toBe(false);
      expect(x.id).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(m[0]!.userId).toBe(viewer.userId);
    expect(m[0]!.roles).toEqual({
      broadcaster: false,
      moderator: false,
      vip: false,
      subscriber: false,
      subMonths: 0,
      firstMessage: false,
    });
    expect(m[1]!.roles).toMatchObject({ moderator: true, broadcaster: false });
    expect(m[2]!.roles).toMatchObject({ vip: true, moderator: false });
    expect(m[3]).toMatchObject({
      displayName: 'A_Sub',
      text: '!ENTER   now 😀 Tシャツ',
      roles: { subscriber: true, subMonths: 14 },
    });
    expect(m[4]!.roles.firstMessage).toBe(true);
    expect(m[5]!.roles.firstMessage).toBe(false);
    expect(m[6]!.roles.broadcaster).toBe(true);
    expect(m[6]!.userId).toBe(s.channelId);
    expect(m[7]).toMatchObject({ bits: 100, text: 'Cheer100 !enter', action: false });
    expect(m[8]).toMatchObject({ action: true, text: 'dances', bits: 0 });
    expect(m[9]!.text).toHaveLength(500);
  });

  it('hands on the lines of one socket read in order; a handler that throws is logged and the next lines still arrive', async () => {
    const { logger, capture } = capturingLogger();
    const p = await pair({ logger });
    const s = p.server;
    const viewers = [0, 1, 2, 3, 4].map((i) => s.viewer(`burst_${i}`));
    p.chat.on('message', (m: { text: string }) => {
      if (m.text === 'boom') throw new Error('handler failed on purpose');
    });
    const lines = viewers.map((v, i) =>
      s.formatPrivmsg(v, i === 1 ? 'boom' : `line ${i}`, i === 3 ? { bits: 50 } : {}),
    );
    s.injectRaw(lines); // one frame: one socket read
    await s.waitFor(() => p.messages.length === 5, 5000, '5 messages');
    expect(p.messages.map((m) => m.text)).toEqual(['line 0', 'boom', 'line 2', 'line 3', 'line 4']);
    expect(p.messages[3]!.bits).toBe(50);
    await s.waitFor(() => capture.text().includes('handler failed on purpose'), 5000, 'the failure logged');
    expect(capture.json().find((l) => l['msg'] === 'chat line handling failed')).toBeDefined();
    s.inject(viewers[0]!, 'after');
    await s.waitFor(() => p.messages.length === 6, 5000, 'a later line');
    expect(p.chat.state).toBe('connected');
  });

  it('stamps the lines of one socket read with one reading of the clock, and a later read with a later one', async () => {
    const clock = new ManualClock();
    const p = await pair({ clock });
    const s = p.server;
    const viewers = [0, 1, 2].map((i) => s.viewer(`stamp_${i}`));
    const first = clock.now();
    s.injectRaw(viewers.map((v) => s.formatPrivmsg(v, '!enter'))); // one frame
    await s.waitFor(() => p.messages.length === 3, 5000, '3 messages');
    clock.advance(1_000);
    s.inject(viewers[0]!, 'later');
    await s.waitFor(() => p.messages.length === 4, 5000, 'a later line');
    expect(p.messages.map((m) => m.receivedAt)).toEqual([first, first, first, first + 1_000]);
  });
});

describe('TwitchChat sending (shared ManualClock)', () => {
  it('a burst of 200 lines trips none of the server limits as a regular user (Twitch windows, simulated time)', async () => {
    const clock = new ManualClock();
    const p = await pair({ clock });
    const texts = Array.from({ length: 200 }, (_, i) => `announcement ${i}: ${'lorem ipsum '.repeat(i % 30)}`.trim());
    texts[7] = `${'long '.repeat(250)}end`; // 1253 characters: split into 3 lines
    for (const t of texts) p.chat.say(t);
    const steps = await drive(p, () => p.chat.outboxStats().queued === 0 && p.chat.outboxStats().sent === 202, {
      stepMs: 500,
    });
    expect(p.server.notices()).toEqual([]);
    const got = p.server.botMessages();
    expect(got).toHaveLength(202);
    for (const line of got) expect(line.length).toBeLessThanOrEqual(500);
    expect(got.slice(7, 10).join(' ')).toBe(texts[7]);
    expect([...got.slice(0, 7), ...got.slice(10)]).toEqual([...texts.slice(0, 7), ...texts.slice(8)]);
    // 202 lines at 20 per 32 s need at least 10 full windows of simulated time.
    expect(steps * 500).toBeGreaterThanOrEqual(320_000);
  });

  it('a burst of 200 lines as moderator uses the 100-per-window bucket without tripping limits', async () => {
    const clock = new ManualClock();
    const p = await pair({ clock, server: { botIsMod: true } });
    await p.server.waitFor(() => p.chat.isMod(), 5000, 'mod confirmed');
    for (let i = 0; i < 200; i++) p.chat.say(i % 2 ? 'same text again' : `line ${i}`);
    const steps = await drive(p, () => p.chat.outboxStats().sent === 200, { stepMs: 1000 });
    expect(p.server.notices()).toEqual([]);
    expect(p.server.botMessages()).toHaveLength(200);
    // Mods may repeat themselves: the text is sent verbatim.
    expect(p.server.botMessages().filter((t) => t === 'same text again')).toHaveLength(100);
    expect(steps).toBeGreaterThanOrEqual(32);
    expect(steps).toBeLessThan(40);
  });

  it('varies repeated lines for a regular user so Twitch drops none as duplicates', async () => {
    const clock = new ManualClock();
    const p = await pair({ clock });
    for (let i = 0; i < 4; i++) p.chat.say('Type !enter to join the giveaway');
    await drive(p, () => p.chat.outboxStats().sent === 4);
    expect(p.server.notices()).toEqual([]);
    const got = p.server.botMessages();
    expect(new Set(got).size).toBe(4);
    for (const g of got) expect(g.replace(/[\s\u{E0000}]+$/u, '')).toBe('Type !enter to join the giveaway');
  });

  it('honours slow mode announced by ROOMSTATE', async () => {
    const clock = new ManualClock();
    const p = await pair({ clock, server: { roomState: { slow: 3 } } });
    expect(p.chat.roomState().slow).toBe(3);
    for (let i = 0; i < 4; i++) p.chat.say(`slow line ${i}`);
    await drive(p, () => p.chat.outboxStats().sent === 4);
    expect(p.server.notices()).toEqual([]);
    const at = p.server.transcript.filter((e) => e.kind === 'bot').map((e) => e.at);
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(3000);
  });

  for (const how of ['RECONNECT', 'dropped socket'] as const) {
    it(`survives a ${how} in the middle of a burst: nothing lost, nothing doubled`, async () => {
      const clock = new ManualClock();
      const p = await pair({ clock });
      const texts = Array.from({ length: 30 }, (_, i) => `burst line ${i}`);
      for (const t of texts) p.chat.say(t, { priority: 'high' });
      let cut = false;
      await drive(p, () => p.server.botMessages().length === 30, {
        stepMs: 200,
        between: async () => {
          if (cut || p.server.botMessages().length < 10) return;
          cut = true;
          if (how === 'RECONNECT') p.server.sendReconnect();
          else p.server.dropConnections();
          // The client notices the lost connection before its clock moves on (see the report on
          // lines written into a socket that is already dead but not yet known to be).
          await stateReached(p.chat, 'disconnected');
          // Time passes while disconnected; lines queued meanwhile must wait, not be lost.
          clock.advance(5_000);
          p.chat.say('queued while away');
          texts.push('queued while away');
          await stateReached(p.chat, 'connected');
        },
      });
      await drive(p, () => p.server.botMessages().length === 31, { stepMs: 200 });
      expect(cut).toBe(true);
      expect(p.server.botMessages()).toEqual(texts);
      expect(p.server.notices()).toEqual([]);
      expect(p.states).toEqual(['connecting', 'connected', 'disconnected', 'connecting', 'connected']);
      expect(p.server.joined()).toEqual([p.server.botLogin]);
      expect(p.chat.channelId()).toBe(p.server.channelId);
    });
  }
});

describe('TwitchChat failures', () => {
  it('rejects a bad token with TwitchAuthError naming TWITCH_TOKEN, and does not retry', async () => {
    const server = await startChatServer();
    const { logger, capture } = capturingLogger();
    let sockets = 0;
    server.on('disconnect', () => sockets++);
    const chat = new TwitchChat({
      url: server.url,
      channel: server.channel,
      username: server.botLogin,
      token: 'oauth:definitely-wrong',
      logger,
      reconnect: { intervalMs: 5, maxIntervalMs: 5 },
    });
    try {
      const err = await chat.connect().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TwitchAuthError);
      expect((err as TwitchAuthError).code).toBe('TWITCH_AUTH');
      expect((err as Error).message).toContain('TWITCH_TOKEN');
      expect((err as Error).message).toContain('Login authentication failed');
      expect(chat.state).toBe('disconnected');
      // A good client connecting afterwards takes many reconnect intervals: a retry loop would show.
      const good = new TwitchChat({
        url: server.url,
        channel: server.channel,
        username: server.botLogin,
        token: server.token,
        logger: silentLogger(),
      });
      await good.connect();
      await good.disconnect();
      await server.waitFor(() => server.connections() === 0, 5000, 'all closed');
      // One socket for the bad login, one for the good client.
      expect(sockets).toBe(2);
      expect(capture.text()).not.toContain('definitely-wrong');
    } finally {
      await chat.disconnect();
      await server.close();
    }
  });

  it('rejects an unreachable server with TwitchConnectError and stays disconnected', async () => {
    const server = await startChatServer();
    const url = server.url;
    await server.close();
    const chat = new TwitchChat({ url, channel: 'x_channel', username: 'bot', token: 'abc', logger: silentLogger() });
    await expect(chat.connect()).rejects.toMatchObject({ code: 'TWITCH_CONNECT' });
    expect(chat.state).toBe('disconnected');
  });

  it('refuses a URL tmi.js cannot use', () => {
    const make = (url: string) => () =>
      new TwitchChat({ url, channel: 'c', username: 'b', token: 't', logger: silentLogger() });
    expect(make('http://127.0.0.1:1')).toThrow(/ws:\/\/ or wss:\/\//);
    expect(make('wss://example.test:8443')).toThrow(/port 443/);
    expect(make('not a url')).toThrow(/not a URL/);
  });

  it('disconnect() during connect(), stays disconnected: connect() fails, nothing reconnects, the queued line stays', async () => {
    const server = await startChatServer();
    let sockets = 0;
    server.on('disconnect', () => sockets++);
    const chat = new TwitchChat({
      url: server.url,
      channel: server.channel,
      username: server.botLogin,
      token: server.token,
      logger: silentLogger(),
    });
    try {
      chat.say('queued before any connection');
      // (the outcome is taken at once: connect() fails while disconnect() is still under way)
      const outcome = chat.connect().then(
        () => 'connected',
        (err: unknown) => err,
      );
      expect(chat.state).toBe('connecting');
      await chat.disconnect();
      expect(await outcome).toMatchObject({ code: 'TWITCH_CONNECT' });
      expect(chat.state).toBe('disconnected');
      expect(chat.outboxStats().queued).toBe(1);
      // A client connecting afterwards is the first socket the server sees.
      const good = new TwitchChat({
        url: server.url,
        channel: server.channel,
        username: server.botLogin,
        token: server.token,
        logger: silentLogger(),
      });
      await good.connect();
      await good.disconnect();
      await server.waitFor(() => server.connections() === 0, 5000, 'all closed');
      expect(sockets).toBe(1);
    } finally {
      await chat.disconnect();
      await server.close();
    }
  });

  it('disconnect() is final: no reconnect, queued lines kept', async () => {
    const clock = new ManualClock();
    const p = await pair({ clock });
    await p.chat.disconnect();
    expect(p.chat.state).toBe('disconnected');
    p.chat.say('after the end');
    await p.server.waitFor(() => p.server.connections() === 0, 5000, 'socket closed');
    expect(p.chat.outboxStats().queued).toBe(1);
    expect(p.server.botMessages()).toEqual([]);
  });
});
