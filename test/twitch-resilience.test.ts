/**
 * Twitch resilience through the real sandbox chat server and real tmi.js over sockets: start-up
 * retry, lines confirmed by USERSTATE and re-sent after a drop (half-open socket included), the
 * outbox cap while disconnected. Waits are on events (server transcript, client events), never
 * on sleeps; the confirmation watchdog runs on a ManualClock the test advances.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../src/sandbox/chat/index.js';
import { TwitchChat } from '../src/twitch/client.js';
import { connectChat, type ConnectStatus } from '../src/twitch/connector.js';
import { silentLogger } from '../src/logging/index.js';
import { systemClock } from '../src/shared/clock.js';
import { capturingLogger } from './support/twitch-fakes.js';
import { ManualClock, stateReached, swallowed } from './support/twitch-e2e.js';
import { freePort } from './support/e2e-stack.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

function chatFor(
  server: Pick<ChatServer, 'url' | 'channel' | 'botLogin' | 'token'>,
  extra: Partial<ConstructorParameters<typeof TwitchChat>[0]> = {},
): TwitchChat {
  const chat = new TwitchChat({
    url: server.url,
    channel: server.channel,
    username: server.botLogin,
    token: server.token,
    logger: silentLogger(),
    reconnect: { intervalMs: 10, maxIntervalMs: 50 },
    connectTimeoutMs: 5000,
    ...extra,
  });
  cleanup.push(() => chat.disconnect());
  return chat;
}

async function server(options: Parameters<typeof startChatServer>[0] = {}): Promise<ChatServer> {
  const s = await startChatServer(options);
  cleanup.push(() => s.close());
  return s;
}

describe('start-up connection', () => {
  it('chat server down at start, then up: retried with backoff and one status line per attempt, then connected', async () => {
    const port = await freePort();
    const url = `ws://127.0.0.1:${port}`;
    const token = 'startuptoken0123456789';
    const chat = chatFor({ url, channel: 'giftdrop_demo', botLogin: 'giftdrop_bot', token });
    const { logger, capture } = capturingLogger('info');
    const statuses: ConnectStatus[] = [];
    let started: Promise<ChatServer> | undefined;
    const connected = connectChat({
      chat,
      logger,
      clock: systemClock,
      backoff: { initialMs: 20, maxMs: 80 },
      onStatus: (s) => {
        statuses.push(s);
        // The server comes up only after the bot failed twice.
        if (s.state === 'retrying' && s.attempt === 2) started ??= server({ port, token });
      },
    });
    await connected;
    const s = await started!;
    expect(chat.state).toBe('connected');
    expect(s.joined()).toEqual(['giftdrop_bot']);
    expect(statuses.slice(0, 4).map((x) => `${x.state}#${x.attempt}`)).toEqual([
      'connecting#1',
      'retrying#1',
      'connecting#2',
      'retrying#2',
    ]);
    // Backoff with jitter (shared/retry.ts): a point in the upper half of 20 ms, then of 40 ms.
    const waits = [statuses[1]!.nextInMs!, statuses[3]!.nextInMs!];
    expect(waits[0]).toBeGreaterThanOrEqual(10);
    expect(waits[0]).toBeLessThanOrEqual(20);
    expect(waits[1]).toBeGreaterThanOrEqual(20);
    expect(waits[1]).toBeLessThanOrEqual(40);
    expect(statuses.at(-1)!.state).toBe('connected');
    const lines = capture.text();
    expect(lines).toContain(`); next attempt in ${waits[0]} ms`);
    expect(lines).toContain(`); next attempt in ${waits[1]} ms`);
    expect(lines).toMatch(/chat: could not connect to #giftdrop_demo \(attempt 2: [^)]+\); next attempt in \d+ ms/);
    expect(lines).toMatch(/chat: connected to #giftdrop_demo \(attempt \d+\)/);
    expect(lines).not.toContain(token);
  });
});

describe('lines confirmed by USERSTATE', () => {
  it('counts a line as sent only once Twitch answers it, and never re-sends a confirmed one after a drop', async () => {
    const s = await server({ botIsMod: true });
    const chat = chatFor(s);
    await chat.connect();
    await s.waitFor(() => chat.isMod(), 5000, 'mod confirmed');
    const texts = Array.from({ length: 30 }, (_, i) => `burst line ${i}`);
    let dropped = false;
    const outbox = (chat as unknown as { outbox: NodeJS.EventEmitter }).outbox;
    outbox.on('sent', () => {
      // Line 9 was just confirmed: cut now. Line 10 is written next, into the dying socket.
      if (!dropped && chat.outboxStats().sent === 10) {
        dropped = true;
        s.dropConnections();
      }
    });
    for (const t of texts) chat.say(t, { priority: 'high' });
    await s.waitFor(
      () => s.botMessages().length >= 30 && chat.outboxStats().sent >= 30,
      10_000,
      'all 30 delivered and confirmed',
    );
    expect(dropped).toBe(true);
    expect(s.botMessages()).toEqual(texts);
    const st = chat.outboxStats();
    expect(st).toMatchObject({ sent: 30, unconfirmed: 0, queued: 0, dropped: 0 });
    // Only lines written after the last confirmation went back to the queue. Whether line 10
    // reached the dying socket depends on when the drop is noticed (when it did not, tmi.js
    // refused it and it was queued again unwritten); the half-open tests below pin the re-queue.
    expect(st.written).toBe(30 + st.requeued);
    expect(st.requeued).toBeLessThanOrEqual(1);
  });

  for (const how of ['half-open, found by the bot', 'half-open, then dropped by the server'] as const) {
    it(`a ${how}: lines written into it are sent again after the reconnect, none lost, none doubled`, async () => {
      const clock = new ManualClock();
      const s = await server({ botIsMod: true, clock });
      // A PONG deadline far beyond the test's real duration: only the manual clock can reach it.
      const chat = chatFor(s, { clock, confirmTimeoutMs: 2000, pingTimeoutMs: 60_000 });
      await chat.connect();
      await s.waitFor(() => chat.isMod(), 5000, 'mod confirmed');
      const texts = Array.from({ length: 20 }, (_, i) => `half-open line ${i}`);
      const outbox = (chat as unknown as { outbox: NodeJS.EventEmitter }).outbox;
      let cut = false;
      outbox.on('sent', () => {
        if (!cut && chat.outboxStats().sent === 8) {
          cut = true;
          s.halfOpen();
        }
      });
      for (const t of texts) chat.say(t, { priority: 'high' });
      // Line 8 vanishes into the half-open socket: no answer, so nothing more is written.
      await s.waitFor(
        () => swallowed(s).length === 1 && chat.outboxStats().unconfirmed === 1,
        5000,
        'one line swallowed, and written as far as the client knows',
      );
      expect(chat.state).toBe('connected');
      expect(chat.outboxStats()).toMatchObject({ sent: 8, unconfirmed: 1 });
      if (how === 'half-open, found by the bot') {
        // The watchdog's deadline passes: it writes its own PING (swallowed by the dead socket)...
        const probed = new Promise<void>((resolve) =>
          s.on('transcript', (e) => e.text === 'half-open connection swallowed PING' && resolve()),
        );
        clock.advance(2000);
        await probed;
        expect(chat.state).toBe('connected');
        // ... and only the PONG deadline on the injected clock closes the socket.
        clock.advance(59_999);
        expect(chat.state).toBe('connected');
        clock.advance(1);
      } else {
        s.dropConnections();
      }
      await stateReached(chat, 'disconnected');
      await stateReached(chat, 'connected');
      await s.waitFor(() => chat.outboxStats().sent === 20, 10_000, 'all confirmed');
      expect(swallowed(s)).toEqual(['half-open line 8']);
      expect(s.botMessages()).toEqual(texts);
      expect(chat.outboxStats()).toMatchObject({ sent: 20, unconfirmed: 0, dropped: 0, requeued: 1 });
    });
  }

  it('the probe is a PING with its own token; a PONG slower than tmi.js ping() allows still proves the connection', async () => {
    const clock = new ManualClock();
    const s = await server({ botIsMod: true, clock });
    const chat = chatFor(s, { clock, confirmTimeoutMs: 2000, pingTimeoutMs: 5000, outbox: { maxLength: 600 } });
    await chat.connect();
    let connections = 0;
    s.on('connection', () => connections++);
    chat.say('y'.repeat(550)); // dropped silently by the server: never answered
    // (the client counts its write once tmi.js's raw() resolved: wait for that too)
    await s.waitFor(
      () => s.notices().length === 1 && chat.outboxStats().unconfirmed === 1,
      5000,
      'silent drop recorded and the line written',
    );
    expect(chat.health()).toEqual({ chat: 'connected' });
    const health: { chat: string; reason?: string }[] = [];
    chat.on('health', (h: { chat: string; reason?: string }) => health.push(h));
    s.holdPongs(true);
    const pings: string[] = [];
    s.on('client-ping', (p) => void pings.push(p.token));
    clock.advance(2000);
    await s.waitFor(() => pings.length === 1, 5000, 'the probe PING');
    expect(pings[0]).toMatch(/^giftdrop-probe-\d+$/);
    // While the line goes unconfirmed, chat is degraded, and says why.
    expect(chat.health()).toEqual({
      chat: 'degraded',
      reason: expect.stringMatching(/not confirmed by Twitch within 2 s/),
    });
    expect(health.map((h) => h.chat)).toEqual(['degraded']);
    // The PONG comes late in real time, but inside the deadline on the injected clock.
    clock.advance(4999);
    chat.say('after the slow pong'); // waits behind the unanswered line
    expect(chat.state).toBe('connected');
    s.holdPongs(false);
    await s.waitFor(() => chat.outboxStats().dropped === 1, 5000, 'the unanswered line abandoned');
    await s.waitFor(() => s.botMessages().includes('after the slow pong'), 5000, 'next line delivered');
    expect(chat.state).toBe('connected');
    expect(connections).toBe(0); // never closed and reconnected
    expect(chat.outboxStats()).toMatchObject({ requeued: 0 });
    await s.waitFor(() => chat.outboxStats().sent === 1, 5000, 'the next line confirmed');
    expect(chat.health()).toEqual({ chat: 'connected' });
    expect(health.map((h) => h.chat)).toEqual(['degraded', 'connected']);
  });

  it('a line the server never answers on a live connection is abandoned, not re-sent', async () => {
    const clock = new ManualClock();
    const s = await server({ botIsMod: true, clock });
    const { logger, capture } = capturingLogger('info');
    // An outbox allowed 600 characters: the sandbox drops the long line silently, as Twitch does
    // (msg_too_long comes with no NOTICE), so only the watchdog can notice it.
    const chat = chatFor(s, { clock, confirmTimeoutMs: 2000, logger, outbox: { maxLength: 600 } });
    await chat.connect();
    chat.say('x'.repeat(550));
    chat.say('after the silent drop');
    // (the client counts its write once tmi.js's raw() resolved: wait for that too)
    await s.waitFor(
      () => s.notices().length === 1 && chat.outboxStats().unconfirmed === 1,
      5000,
      'silent drop recorded and the line written',
    );
    expect(chat.outboxStats().unconfirmed).toBe(1);
    clock.advance(2000);
    await s.waitFor(() => chat.outboxStats().sent === 1, 5000, 'next line confirmed');
    expect(s.botMessages()).toEqual(['after the silent drop']);
    expect(chat.outboxStats()).toMatchObject({ dropped: 1, requeued: 0 });
    expect(chat.state).toBe('connected');
    expect(capture.text()).toContain('never confirmed by Twitch although the connection answers');
  });
});

describe('receive path while a line awaits its answer', () => {
  it('chat lines arrive while a line awaits its answer, and the USERSTATE that answers is still read', async () => {
    const clock = new ManualClock();
    const s = await server({ botIsMod: true, clock });
    // As above: the sandbox drops the long line silently, so it stays unanswered.
    const chat = chatFor(s, { clock, confirmTimeoutMs: 2000, outbox: { maxLength: 600 } });
    await chat.connect();
    chat.say('y'.repeat(550));
    // (the client counts its write once tmi.js's raw() resolved: wait for that too)
    await s.waitFor(
      () => s.notices().length === 1 && chat.outboxStats().unconfirmed === 1,
      5000,
      'silent drop recorded and the line written',
    );
    expect(chat.outboxStats().unconfirmed).toBe(1);
    expect(chat.readingAnswers()).toBe(true);
    let received = 0;
    chat.on('message', () => received++);
    const lines = Array.from({ length: 50 }, (_, i) => s.formatPrivmsg(s.viewer(`waiting_${i}`), '!enter'));
    s.injectRaw(lines);
    await s.waitFor(() => received === 50, 5000, '50 chat lines received');
    expect(chat.outboxStats().unconfirmed).toBe(1);
    // The watchdog abandons the silent line; the next one is answered by USERSTATE and counted.
    clock.advance(2000);
    chat.say('answered');
    await s.waitFor(() => chat.outboxStats().sent === 1, 5000, 'the next line confirmed');
    // Nothing awaits an answer any more: tmi.js's raw_message (a copy of every line) is left alone.
    expect(chat.readingAnswers()).toBe(false);
  });
});

describe('outbox cap while disconnected', () => {
  it('drops the oldest low-priority lines first, keeps every winner line, logs the count, sends the rest after the reconnect', async () => {
    const first = await startChatServer({ botIsMod: true });
    const port = first.port;
    const token = first.token;
    const { logger, capture } = capturingLogger('info');
    const chat = chatFor(first, { logger, outbox: { maxQueued: 30 } });
    await chat.connect();
    await first.close();
    await stateReached(chat, 'disconnected');
    const low = Array.from({ length: 40 }, (_, i) => `entered ${i}`);
    const normal = Array.from({ length: 10 }, (_, i) => `status ${i}`);
    const winners = Array.from({ length: 5 }, (_, i) => `Winner ${i}: @viewer_${i}`);
    for (let i = 0; i < 40; i++) {
      chat.say(low[i]!, { priority: 'low' });
      if (i % 4 === 0) chat.say(normal[i / 4]!, { priority: 'normal' });
      if (i % 8 === 0) chat.say(winners[i / 8]!, { priority: 'high' });
    }
    // 55 lines, cap 30: the 25 oldest low-priority lines go.
    expect(chat.outboxStats()).toMatchObject({ queued: 30, overflow: 25, dropped: 25 });
    expect(capture.text()).toMatch(
      /chat outbox full while disconnected: dropped 1 low-priority line\(s\) \(25 so far\)/,
    );
    const again = await server({ port, token, botIsMod: true });
    await stateReached(chat, 'connected');
    await again.waitFor(() => again.botMessages().length === 30, 10_000, '30 lines after the reconnect');
    expect(again.botMessages()).toEqual([...winners, ...normal, ...low.slice(25)]);
  });

  it('never drops a winner line, even past the cap', async () => {
    const s = await server({ botIsMod: true });
    const chat = chatFor(s, { outbox: { maxQueued: 3 } });
    for (let i = 0; i < 6; i++) chat.say(`Winner ${i}`, { priority: 'high' });
    chat.say('a low line', { priority: 'low' });
    expect(chat.outboxStats()).toMatchObject({ queued: 6, overflow: 1 });
    await chat.connect();
    await s.waitFor(() => s.botMessages().length === 6, 5000, 'six winners');
    expect(s.botMessages()).toEqual(Array.from({ length: 6 }, (_, i) => `Winner ${i}`));
  });
});
