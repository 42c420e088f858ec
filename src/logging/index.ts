/**
 * The one logger factory. Log lines go to stderr (pretty on a terminal, JSON otherwise) and, with
 * LOG_FILE, also to that file as JSON; stdout is left to the operator console. Modules take
 * `logger.child({ module })`.
 *
 * Secrets never reach a log line, by construction:
 * 1. the places that could carry one never log it: the Fourthwall client logs method and path,
 *    never headers or bodies, and its errors keep only the body's code; links go to the operator
 *    console (src/console/operator-console.ts), never to the logger; config is never logged;
 * 2. pino `redact` censors the few field names a secret travels under (top level and the header
 *    objects); no wildcard paths, which would make pino walk every object of every line;
 * 3. a last guard on each serialized line, cheap by design: one `includes` per registered secret
 *    value (credentials from config) and one for `/gifts/` (gift and giveaway link URLs); the
 *    regex runs only on the rare line that matched.
 *
 * Routine failures stay one line: an `err` that is a network failure (refused, reset, timed out,
 * DNS, a service unavailable: see `isRoutineFailure`) is logged as its type, code and message,
 * without a stack, unless the level is `debug` or finer; every other error keeps its stack. The
 * line's message says what failed and what the bot does next (the caller's job).
 */
import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

/** Field names that carry a secret where the code logs objects, censored by pino. */
const REDACT_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'options.headers.authorization',
  'password',
  'token',
  'accessToken',
  'refreshToken',
  'clientSecret',
  'secret',
  'webhookSecret',
  'appHmacKey',
  'cookie',
  'link',
  'links',
  'redeemUrl',
  'redeemUri',
];

/** Matches gift and giveaway link URLs to their end (path and query too: a redeem token): bearer secrets. */
const LINK_PATTERN = /https?:\/\/[^\s"'<>]*\/gifts\/[^\s"'<>\\]+/g;
const LINK_MARK = '/gifts/';

export interface LoggerOptions {
  level?: string;
  /** Where lines go (tests pass a capture stream; a terminal gets `prettyDestination`). Default stderr, JSON. */
  destination?: DestinationStream;
  /** Also append JSON lines to this file (LOG_FILE). */
  file?: string;
  /** Secret values to censor wherever they appear in a line. */
  secrets?: Iterable<string | undefined>;
  name?: string;
}

/**
 * Builds the last-guard scrubber: removes secret values (and their JSON-escaped forms) and link
 * URLs from a serialized line. A line with none of them costs one `includes` per value.
 */
export function makeScrubber(
  secrets: Iterable<string | undefined> = [],
): ((line: string) => string) & { add(secret: string | undefined): void } {
  const values = new Set<string>();
  let list: string[] = [];
  const add = (s: string | undefined): boolean => {
    if (!s || s.length < 4 || values.has(s)) return false;
    values.add(s);
    values.add(JSON.stringify(s).slice(1, -1));
    return true;
  };
  // longest first, so a value that contains another is censored whole
  const sort = () => (list = [...values].sort((a, b) => b.length - a.length));
  for (const s of secrets) add(s);
  sort();
  const scrub = (line: string) => {
    let out = line;
    if (out.includes(LINK_MARK)) out = out.replace(LINK_PATTERN, '[REDACTED]');
    for (const v of list) if (out.includes(v)) out = out.split(v).join('[REDACTED]');
    return out;
  };
  return Object.assign(scrub, {
    add(secret: string | undefined) {
      if (add(secret)) sort();
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

/** Low-level codes of a network failure that is part of normal life (a service down, a slow network). */
const ROUTINE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EPIPE',
  'ECONNABORTED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'TIMEOUT',
  // giftdrop's own "could not reach it" errors (src/fourthwall, src/twitch, src/beacon)
  'FOURTHWALL_NETWORK',
  'FOURTHWALL_TIMEOUT',
  'TWITCH_CONNECT',
  'TWITCH_AUTH_UNAVAILABLE',
  'TWITCH_API_UNAVAILABLE',
  'BEACON_UNAVAILABLE',
  'SHOP_UNAVAILABLE',
]);

/**
 * True for a network failure or an answer of a service with an HTTP error status (a refused
 * credential, a 404, a 503: the message says it all), itself or through its `cause` chain;
 * logged without a stack.
 */
export function isRoutineFailure(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 6 && e && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    const name = (e as { name?: unknown }).name;
    const status = (e as { status?: unknown }).status;
    if (
      (typeof code === 'string' && ROUTINE_CODES.has(code)) ||
      name === 'TimeoutError' ||
      name === 'ConnectTimeoutError'
    )
      return true;
    if (typeof status === 'number' && status >= 400 && status <= 599) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** A routine failure in one short object: type, code, message (and the root cause's code). */
function shortError(err: Error): Record<string, unknown> {
  const out: Record<string, unknown> = { type: err.name, message: err.message };
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') out.code = code;
  let cause = (err as { cause?: unknown }).cause;
  for (let depth = 0; depth < 6 && cause && typeof cause === 'object'; depth++) {
    const c = (cause as { code?: unknown }).code;
    if (typeof c === 'string' && c !== code) out.cause = c;
    cause = (cause as { cause?: unknown }).cause;
  }
  return out;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const scrub = makeScrubber(options.secrets ?? []);
  // Stacks of routine failures only at debug and finer (read from the root logger when a line is written).
  let verbose = (): boolean => true;
  const base: pino.LoggerOptions = {
    name: options.name ?? 'giftdrop',
    level: options.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    hooks: { streamWrite: scrub },
    serializers: {
      err: (err: Error) =>
        err instanceof Error && !verbose() && isRoutineFailure(err) ? shortError(err) : pino.stdSerializers.err(err),
    },
  };
  const main: DestinationStream = options.destination ?? pino.destination({ dest: 2, sync: true });
  const logger = options.file
    ? pino(
        base,
        pino.multistream([
          { stream: main, level: 'trace' },
          {
            stream: pino.destination({ dest: options.file, append: true, mkdir: true, sync: true, mode: 0o600 }),
            level: 'trace',
          },
        ]),
      )
    : pino(base, main);
  Object.defineProperty(logger, SECRET_ADDER, { value: scrub.add });
  verbose = () => logger.isLevelEnabled('debug');
  return logger;
}

/**
 * Pretty, coloured lines on file descriptor `fd` (a terminal), written synchronously in this
 * process. pino-pretty is loaded here, on demand: a bot logging JSON never loads it.
 */
export async function prettyDestination(fd: number): Promise<DestinationStream> {
  const { default: pretty } = await import('pino-pretty');
  return pretty({
    colorize: true,
    translateTime: 'HH:MM:ss',
    ignore: 'pid,hostname,name',
    destination: fd,
    sync: true,
  });
}

/** A logger that discards everything (benchmarks, quiet tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
