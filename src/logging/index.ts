/**
 * The one logger factory. Secrets never reach a log line, by construction, in two layers:
 * 1. pino `redact` censors fields whose names mean a secret (authorization, password, token,
 *    secret, link, redeemUrl, ...) at the top level and up to three levels deep;
 * 2. every serialized line passes through `streamWrite`, which replaces each registered secret
 *    value (credentials from config) and every giveaway/gift link URL with `[REDACTED]`, so a secret
 *    that slipped into a message string or an error is still censored.
 * Output is pretty on a terminal and JSON otherwise. Modules take `logger.child({ module })`.
 */
import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

const SECRET_KEYS = [
  'authorization',
  'Authorization',
  'password',
  'token',
  'accessToken',
  'access_token',
  'refreshToken',
  'refresh_token',
  'clientSecret',
  'client_secret',
  'secret',
  'webhookSecret',
  'appHmacKey',
  'hmacKey',
  'link',
  'links',
  'redeemUrl',
  'redeemUri',
  'seed',
  'cookie',
  'code',
];

function redactPaths(): string[] {
  const out: string[] = [];
  for (const k of SECRET_KEYS) {
    if (k === 'code' || k === 'seed') continue; // too common as plain fields at the top level
    out.push(k, `*.${k}`, `*.*.${k}`, `*.*.*.${k}`);
  }
  out.push('headers.authorization', 'req.headers.authorization', 'options.headers.authorization');
  return out;
}

/** Matches gift and giveaway link URLs to their end (path and query too: a redeem token): bearer secrets. */
const LINK_PATTERN = /https?:\/\/[^\s"'<>]*\/gifts\/[^\s"'<>\\]+/g;

export interface LoggerOptions {
  level?: string;
  /** Pretty, coloured output (default: when stdout is a TTY and no destination is given). */
  pretty?: boolean;
  /** Where lines go (tests pass a capture stream). Default stdout. */
  destination?: DestinationStream;
  /** Secret values to censor wherever they appear in a line. */
  secrets?: Iterable<string | undefined>;
  name?: string;
}

/** Escapes a string for literal use inside a RegExp. */
function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Builds a scrubber that removes secret values (and their JSON-escaped and base64 Basic forms)
 * and link URLs from a serialized line.
 */
export function makeScrubber(secrets: Iterable<string | undefined> = []): ((line: string) => string) & { add(secret: string | undefined): void } {
  const values = new Set<string>();
  let secretRe: RegExp | undefined;
  const add = (s: string | undefined): boolean => {
    if (!s || s.length < 4 || values.has(s)) return false;
    values.add(s);
    values.add(JSON.stringify(s).slice(1, -1));
    return true;
  };
  const build = () => {
    const list = [...values].sort((a, b) => b.length - a.length).map(escapeRegExp);
    secretRe = list.length ? new RegExp(list.join('|'), 'g') : undefined;
  };
  for (const s of secrets) add(s);
  build();
  const scrub = (line: string) => {
    let out = line.replace(LINK_PATTERN, '[REDACTED]');
    if (secretRe) out = out.replace(secretRe, '[REDACTED]');
    return out;
  };
  return Object.assign(scrub, {
    add(secret: string | undefined) {
      if (add(secret)) build();
    },
  });
}

const SECRET_ADDER = Symbol('giftdrop.secretAdder');

/**
 * Registers a secret learnt after start (a refreshed token) with the logger's scrubber; child
 * loggers share their root's. A logger not made by createLogger ignores it.
 */
export function registerSecret(logger: Logger, secret: string | undefined): void {
  const adder = (logger as unknown as Record<symbol, ((s: string | undefined) => void) | undefined>)[SECRET_ADDER];
  adder?.(secret);
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const scrub = makeScrubber(options.secrets ?? []);
  const pretty = options.pretty ?? (!options.destination && process.stdout.isTTY === true);
  const base: pino.LoggerOptions = {
    name: options.name ?? 'giftdrop',
    level: options.level ?? 'info',
    redact: { paths: redactPaths(), censor: '[REDACTED]' },
    hooks: { streamWrite: scrub },
    serializers: { err: pino.stdSerializers.err },
  };
  const logger = pretty
    ? pino({ ...base, transport: undefined }, pinoPretty())
    : options.destination
      ? pino(base, options.destination)
      : pino(base);
  Object.defineProperty(logger, SECRET_ADDER, { value: scrub.add });
  return logger;
}

function pinoPretty(): DestinationStream {
  // Loaded lazily: only terminals need it. pino-pretty's default export is a stream factory.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const factory = requirePretty();
  return factory({ colorize: true, translateTime: 'HH:MM:ss', ignore: 'pid,hostname,name' });
}

import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
function requirePretty(): (opts: Record<string, unknown>) => DestinationStream {
  return require('pino-pretty') as (opts: Record<string, unknown>) => DestinationStream;
}

/** A logger that discards everything (benchmarks, quiet tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
