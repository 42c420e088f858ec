/**
 * Test helper for the sandbox chat server tests: a real tmi.js 1.8.5 client pointed at a local
 * server, quiet, with fast reconnects, plus a promise for the next occurrence of a tmi.js event.
 */
import tmi from 'tmi.js';
import type { ChatServer } from '../../src/sandbox/chat/index.js';

const quiet = {
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error() {},
  fatal() {},
  setLevel() {},
  getLevel: () => 'error',
};

export interface TmiClientOptions {
  password?: string;
  username?: string;
  reconnect?: boolean;
  channels?: string[];
}

/** A tmi.js client for `server` (not yet connected). */
export function tmiClient(server: ChatServer, opts: TmiClientOptions = {}): tmi.Client {
  const hasPassword = Object.prototype.hasOwnProperty.call(opts, 'password');
  return new tmi.Client({
    options: { skipUpdatingEmotesets: true, messagesLogLevel: 'debug' },
    connection: {
      server: '127.0.0.1',
      port: server.port,
      secure: false,
      reconnect: opts.reconnect ?? false,
      reconnectInterval: 20,
      maxReconnectInterval: 200,
    },
    identity: {
      username: opts.username ?? 'giftdrop_bot',
      password: hasPassword ? opts.password : `oauth:${server.token}`,
    },
    channels: opts.channels ?? [],
    logger: quiet,
  });
}

/** Resolves with the arguments of the next `event` the client emits. */
export function nextEvent<T extends unknown[] = unknown[]>(client: tmi.Client, event: string): Promise<T> {
  return new Promise<T>((resolve) => {
    (client as unknown as { once(e: string, fn: (...a: unknown[]) => void): void }).once(event, (...args) =>
      resolve(args as T),
    );
  });
}

/** Connects and joins the server's channel; resolves once join() has resolved. */
export async function connectAndJoin(server: ChatServer, client: tmi.Client): Promise<void> {
  await client.connect();
  await client.join(server.channel);
}

/** Disconnects quietly whatever state the client is in. */
export async function disconnectQuietly(client: tmi.Client): Promise<void> {
  if (client.readyState() === 'OPEN') await client.disconnect().catch(() => undefined);
}
