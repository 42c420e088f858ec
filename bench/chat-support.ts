/**
 * What the chat-ingestion benchmarks (e2e-2-chat.bench.ts and bare-tmi.ts)
 * share: the simulated viewers and their `!enter` lines, a bare tmi.js client joined to a chat
 * sandbox on this thread or another (the anchor's client, no giftdrop code), and closing a draw
 * through the engine.
 */
import tmi from 'tmi.js';
import type { ChatServer, SimViewer } from '../src/sandbox/chat/index.js';
import { drawEnded, type BotStack } from './e2e-support.js';

/** `count` viewers with distinct user ids, every 5th a subscriber. */
export function viewers(server: ChatServer, prefix: string, count: number): SimViewer[] {
  const out: SimViewer[] = [];
  const ids = new Set<string>();
  for (let i = 0; out.length < count; i++) {
    const sub = i % 5 === 0;
    const v = server.viewer(`${prefix}${i}`, { subscriber: sub, subMonths: sub ? 3 : 0 });
    if (ids.has(v.userId)) continue;
    ids.add(v.userId);
    out.push(v);
  }
  return out;
}

/**
 * A flat copy of a line. formatPrivmsg's template strings are ropes (trees of small strings): the
 * 200,000 input lines held that way kept the bench's heap at ~370 MB instead of ~150 MB, so every
 * major GC that landed in a round marked them (0.4-0.5 s pause, ~1 s of CPU) and that round's
 * ratio measured the harness's input rather than the bot. Both sides get the same lines.
 */
export function flat(line: string): string {
  return JSON.parse(JSON.stringify(line)) as string;
}

/**
 * What a bare client needs from a chat sandbox: its address and channel, the bot's credentials and
 * waits on who is there (localTarget for a ChatServer on this thread; bench/chat-sandboxes.ts for
 * one on another thread).
 */
export interface BareClientTarget extends Pick<ChatServer, 'host' | 'port' | 'botLogin' | 'token' | 'channel'> {
  /** Resolves once `count` connections are joined to the channel. */
  untilJoined(count: number): Promise<void>;
  /** Resolves once `count` sockets are open. */
  untilConnections(count: number): Promise<void>;
}

/** A chat sandbox on this thread as a bare client's target. */
export function localTarget(server: ChatServer): BareClientTarget {
  return {
    host: server.host,
    port: server.port,
    botLogin: server.botLogin,
    get token() {
      return server.token;
    },
    channel: server.channel,
    untilJoined: (count) => server.waitFor(() => server.joined().length === count, 5000, `${count} joined`),
    untilConnections: (count) => server.waitFor(() => server.connections() === count, 5000, `${count} connections`),
  };
}

/** A bare tmi.js client joined to `server`'s channel; `close()` waits until the server saw it go. */
export async function joinBareClient(
  server: BareClientTarget,
): Promise<{ client: tmi.Client; close(): Promise<void> }> {
  const client = new tmi.Client({
    options: { skipUpdatingEmotesets: true },
    connection: { server: server.host, port: server.port, secure: false, reconnect: false },
    identity: { username: server.botLogin, password: `oauth:${server.token}` },
    channels: [server.channel],
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
  });
  const joined = new Promise<void>((resolve) => client.once('join', () => resolve()));
  await client.connect();
  await joined;
  await server.untilJoined(1);
  return {
    client,
    async close() {
      await client.disconnect();
      await server.untilConnections(0);
    },
  };
}

/** Ends the draw now through the engine and waits until it is finished (or failed) and idle. */
export async function closeDraw(s: Pick<BotStack, 'bot'>, drawId: string): Promise<void> {
  const done = drawEnded(s, drawId);
  s.bot.engine.endNow();
  await done;
  await s.bot.engine.whenIdle();
}
