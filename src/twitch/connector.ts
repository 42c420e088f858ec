/**
 * connectChat: the bot's start-up connection to Twitch chat, retried with backoff.
 *
 * Contract:
 * - each attempt validates the token first (until it once succeeded; see token.ts), then
 *   connects and joins (TwitchChat.connect, one attempt each);
 * - a network problem (chat server or auth server unreachable, no welcome in time) is retried
 *   after about 1 s, 2 s, 4 s ... up to `maxMs` (30 s), with jitter (shared/retry.ts), forever or until `signal` aborts (which also ends
 *   the validation or connect in flight at once, rejecting with the signal's reason); every attempt
 *   logs one status line: "chat: connecting to #c (attempt n)", "chat: could not connect to #c
 *   (attempt n: why); next attempt in 4 s", "chat: connected to #c (attempt n)";
 * - a definitive refusal is thrown at once: TwitchTokenError from validation (wrong account,
 *   missing scopes, expired without refresh), or TwitchAuthError when the chat login is refused
 *   and a refresh (tried once, when configured) did not help. Both name TWITCH_TOKEN.
 * Timing uses the injected Clock.
 */
import type { Logger } from '../logging/index.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { retry } from '../shared/retry.js';
import { TwitchAuthUnavailableError } from './auth.js';
import { TwitchAuthError, TwitchConnectError } from './client.js';

interface ConnectableChat {
  readonly channelLogin: string;
  connect(): Promise<void>;
}

interface StartupToken {
  check(): Promise<unknown>;
  canRefresh(): boolean;
  refresh(reason: string): Promise<void>;
}

export interface ConnectStatus {
  attempt: number;
  state: 'connecting' | 'retrying' | 'connected';
  /** On 'retrying': why the attempt failed, and the wait before the next one. */
  reason?: string;
  nextInMs?: number;
}

export interface ConnectChatOptions {
  chat: ConnectableChat;
  /** Without it the token is not validated (tests of the bare chat client). */
  tokens?: StartupToken;
  logger: Logger;
  clock?: Clock;
  backoff?: { initialMs?: number; maxMs?: number };
  signal?: AbortSignal;
  onStatus?: (status: ConnectStatus) => void;
}

export async function connectChat(o: ConnectChatOptions): Promise<void> {
  const log = o.logger.child({ module: 'twitch.connect' });
  const clock = o.clock ?? systemClock;
  const chan = `#${o.chat.channelLogin}`;
  let validated = o.tokens === undefined;
  let refreshed = false;
  await retry(
    async (attempt) => {
      log.info({ attempt }, `chat: connecting to ${chan} (attempt ${attempt})`);
      o.onStatus?.({ attempt, state: 'connecting' });
      if (!validated) {
        await untilAborted(o.tokens!.check(), o.signal);
        validated = true;
      }
      try {
        await untilAborted(o.chat.connect(), o.signal);
      } catch (err) {
        if (!(err instanceof TwitchAuthError) || !o.tokens?.canRefresh() || refreshed) throw err;
        // Refused although /validate accepted it a moment ago (revoked, expired meanwhile): one refresh.
        refreshed = true;
        log.warn('chat: Twitch refused the token; refreshing it with TWITCH_REFRESH_TOKEN');
        await untilAborted(o.tokens.refresh('refused at start'), o.signal);
        await untilAborted(o.chat.connect(), o.signal);
      }
      log.info({ attempt }, `chat: connected to ${chan} (attempt ${attempt})`);
      o.onStatus?.({ attempt, state: 'connected' });
    },
    {
      backoff: { baseMs: o.backoff?.initialMs ?? 1000, maxMs: o.backoff?.maxMs ?? 30_000 },
      clock,
      ...(o.signal ? { signal: o.signal } : {}),
      retryable: (err) => err instanceof TwitchConnectError || err instanceof TwitchAuthUnavailableError,
      onRetry: (err, attempt, wait) => {
        const e = err as TwitchConnectError | TwitchAuthUnavailableError;
        const reason = e.message;
        log.warn(
          { attempt, nextInMs: wait, code: e.code },
          `chat: could not connect to ${chan} (attempt ${attempt}: ${reason}); next attempt in ${formatWait(wait)}`,
        );
        o.onStatus?.({ attempt, state: 'retrying', reason, nextInMs: wait });
      },
    },
  );
}

function formatWait(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

/**
 * `p`, or the signal's reason as soon as it aborts (the work itself is left to the caller's
 * clean-up: `chat.disconnect()` ends a connect in flight, the auth client's close its request).
 */
function untilAborted<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) {
    p.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      p.catch(() => undefined);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => (signal.removeEventListener('abort', onAbort), resolve(v)),
      (e) => (signal.removeEventListener('abort', onAbort), reject(e)),
    );
  });
}
