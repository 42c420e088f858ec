/**
 * Small pieces between tmi.js 1.8.5 and the chat client (client.ts): the two connection errors
 * (never carrying the token), TWITCH_IRC_URL parsing into tmi.js's server/port/secure options, a
 * tmi.js logger over a pino-like logger (its default logger is module state), a ROOMSTATE seconds
 * reader, and the bot's tmi.js options built from TwitchChatOptions.
 */
import type tmi from 'tmi.js';
import { GiftdropError } from '../shared/errors.js';
import type { TwitchChatOptions } from './client-types.js';

/** Twitch refused the login: the token (or the username it belongs to) is wrong. */
export class TwitchAuthError extends GiftdropError {
  constructor(reason: string) {
    super(
      'TWITCH_AUTH',
      `Twitch refused the chat login (${reason}). Check TWITCH_TOKEN: it must be a user access token ` +
        'with chat:read and chat:edit for the account named in TWITCH_USERNAME.',
    );
  }
}

/** The chat server could not be reached or the channel could not be joined. */
export class TwitchConnectError extends GiftdropError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('TWITCH_CONNECT', message, options);
  }
}

export function seconds(v: unknown): number {
  if (v === true) return 1;
  if (v === false || v === null || v === undefined) return 0;
  const n = Number(v);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

function parseUrl(url: string): { host: string; port: number; secure: boolean } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new TwitchConnectError(`TWITCH_IRC_URL is not a URL: ${JSON.stringify(url)}`);
  }
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:') {
    throw new TwitchConnectError('TWITCH_IRC_URL must start with ws:// or wss://');
  }
  const secure = u.protocol === 'wss:';
  const port = u.port ? Number(u.port) : secure ? 443 : 80;
  if (secure && port !== 443) throw new TwitchConnectError('TWITCH_IRC_URL: tmi.js only supports wss:// on port 443');
  if (!secure && port === 443) throw new TwitchConnectError('TWITCH_IRC_URL: port 443 needs wss://');
  return { host: u.hostname, port, secure };
}

/** What tmiLogger writes to (a pino logger is one). */
export interface TextLog {
  trace(msg: string): void;
  debug(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

function tmiLogger(log: TextLog): {
  trace(m: string): void;
  debug(m: string): void;
  info(m: string): void;
  warn(m: string): void;
  error(m: string): void;
  fatal(m: string): void;
  setLevel(): void;
} {
  const text = (m: unknown) => (typeof m === 'string' ? m : m instanceof Error ? m.message : String(m));
  return {
    trace: (m) => log.trace(text(m)),
    debug: (m) => log.trace(text(m)),
    info: (m) => log.debug(text(m)),
    warn: (m) => log.warn(text(m)),
    error: (m) => log.warn(text(m)),
    fatal: (m) => log.error(text(m)),
    setLevel: () => undefined,
  };
}

/**
 * The options the bot's tmi.js client is built from (all documented tmi.js options): tmi.js
 * never reconnects on its own (`reconnect: false`: the chat client owns reconnection); its
 * `reconnectInterval` is the wait before it connects again after a server RECONNECT, which it
 * does whatever `reconnect` says; its keep-alive PONG deadline is `pingTimeoutMs`; the password
 * is a function, so the token is read at every login and a refreshed one is used from the next
 * (re)connect.
 */
export function tmiOptions(
  options: TwitchChatOptions,
  botLogin: string,
  channelKey: string,
  log: TextLog,
  token: () => string,
): tmi.Options {
  const endpoint = parseUrl(options.url);
  return {
    options: { skipUpdatingEmotesets: true, messagesLogLevel: 'trace', joinInterval: 300 },
    connection: {
      server: endpoint.host,
      port: endpoint.port,
      secure: endpoint.secure,
      reconnect: false,
      reconnectInterval: options.reconnect?.intervalMs ?? 1000,
      maxReconnectInterval: options.reconnect?.maxIntervalMs ?? 30_000,
      timeout: options.pingTimeoutMs ?? 5000,
    },
    identity: { username: botLogin, password: token },
    channels: [channelKey],
    logger: tmiLogger(log),
  };
}
