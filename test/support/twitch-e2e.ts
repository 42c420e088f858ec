/** Starts D's sandbox chat server and a TwitchChat against it over real sockets, plus a clock driver. */
import { startChatServer, type ChatServer, type ChatServerOptions } from '../../src/sandbox/chat/index.js';
import { ManualClock, type Clock } from '../../src/shared/clock.js';
import { silentLogger, type Logger } from '../../src/logging/index.js';
import { TwitchChat, type TwitchChatOptions } from '../../src/twitch/client.js';
import type { ChatMessage } from '../../src/shared/chat.js';
import type { ChatConnectionState } from '../../src/twitch/client.js';
import type { TwitchAuthClient } from '../../src/twitch/auth.js';
import { ChatToken, type ChatTokenOptions } from '../../src/twitch/token.js';

export interface Pair {
  server: ChatServer;
  chat: TwitchChat;
  clock: Clock;
  messages: ChatMessage[];
  states: ChatConnectionState[];
  close(): Promise<void>;
}

export async function startPair(
  options: {
    server?: ChatServerOptions;
    chat?: Partial<TwitchChatOptions>;
    clock?: Clock;
    logger?: Logger;
    connect?: boolean;
  } = {},
): Promise<Pair> {
  const clock = options.clock;
  const server = await startChatServer({ ...(clock ? { clock } : {}), ...options.server });
  const chat = new TwitchChat({
    url: server.url,
    channel: server.channel,
    username: server.botLogin,
    token: server.token,
    logger: options.logger ?? silentLogger(),
    reconnect: { intervalMs: 10, maxIntervalMs: 50 },
    connectTimeoutMs: 5000,
    ...(clock ? { clock } : {}),
    ...options.chat,
  });
  const messages: ChatMessage[] = [];
  const states: ChatConnectionState[] = [];
  chat.on('message', (m: ChatMessage) => messages.push(m));
  chat.on('state', (s: ChatConnectionState) => states.push(s));
  if (options.connect !== false) await chat.connect();
  return {
    server,
    chat,
    clock: clock ?? (undefined as never),
    messages,
    states,
    async close() {
      await chat.disconnect();
      await server.close();
    },
  };
}

/** Resolves when `chat` reaches `state` (immediately if it is there already). */
export function stateReached(chat: TwitchChat, state: ChatConnectionState, timeoutMs = 5000): Promise<void> {
  if (chat.state === state) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      chat.off('state', on);
      reject(new Error(`chat did not reach state ${state} within ${timeoutMs} ms (now ${chat.state})`));
    }, timeoutMs);
    const on = (s: ChatConnectionState) => {
      if (s !== state) return;
      clearTimeout(timer);
      chat.off('state', on);
      resolve();
    };
    chat.on('state', on);
  });
}

/** Bot PRIVMSGs the server has judged so far (delivered, refused, or swallowed by a half-open socket). */
function judged(server: ChatServer): number {
  let n = 0;
  for (const e of server.transcript)
    if (e.kind === 'bot' || ((e.kind === 'notice' || e.kind === 'system') && e.attempted !== undefined)) n++;
  return n;
}

/** Bot PRIVMSGs a half-open socket swallowed so far. */
export function swallowed(server: ChatServer): string[] {
  return server.transcript.filter((e) => e.kind === 'system' && e.attempted !== undefined).map((e) => e.attempted!);
}

/**
 * Advances the shared ManualClock in steps. Before every step it waits until the server has
 * judged every line the client wrote, and the client has read every answer (USERSTATE or
 * NOTICE) the server gave, so both sides see the same clock time for each line.
 * Stops when `done()` is true; `between()` runs before each step (to inject events).
 */
export async function drive(
  pair: Pair,
  done: () => boolean,
  opts: { stepMs?: number; maxSteps?: number; between?: () => Promise<void> | void } = {},
): Promise<number> {
  const clock = pair.clock as ManualClock;
  const step = opts.stepMs ?? 100;
  const max = opts.maxSteps ?? 20_000;
  for (let i = 0; i < max; i++) {
    await pair.server.waitFor(
      () => {
        // (no line in transit: the clock never moves between the client's write and the server's judgement)
        const stats = pair.chat.outboxStats();
        return (
          stats.writing === 0 &&
          judged(pair.server) >= stats.written &&
          stats.unconfirmed <= swallowed(pair.server).length
        );
      },
      5000,
      'no line in transit, the server judged every written line and the client read every answer',
    );
    if (done()) return i;
    await opts.between?.();
    clock.advance(step);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  throw new Error(`drive: not done after ${max} steps`);
}

/** A ChatToken for the sandbox's bot account with its refresh credentials (silent log unless `options` says). */
export function sandboxChatToken(
  s: ChatServer,
  auth: TwitchAuthClient,
  options: Partial<ChatTokenOptions> = {},
): ChatToken {
  return new ChatToken({
    auth,
    username: s.botLogin,
    token: s.token,
    refresh: { refreshToken: s.refreshToken, clientId: s.clientId, clientSecret: s.clientSecret },
    logger: silentLogger(),
    ...options,
  });
}

export { ManualClock };
