/**
 * AuthRecovery: what the chat client does when Twitch refuses its token on a reconnect.
 *
 * Contract: `begin()` returns false when no refresh can be tried (no refresh credentials, or a
 * refresh already answered a refusal since the last join): the client then gives up ('fatal').
 * Otherwise it refreshes the token; a token endpoint that cannot be reached
 * (TWITCH_AUTH_UNAVAILABLE) is tried again on the injected clock, the wait doubling from
 * `initialRetryMs` up to 30 s; a refreshed token calls `relogin()`, a refused refresh `fatal()`.
 * `cancel()` (the client's disconnect) stops it for good: the pending retry timer is cancelled
 * and a refresh in flight leads to nothing. `joined()` resets the state after a successful join.
 */
import type { Logger } from '../logging/index.js';
import type { Clock, TimerHandle } from '../shared/clock.js';
import { GiftdropError } from '../shared/errors.js';
import type { ChatTokenSource } from './client-types.js';
import { TwitchAuthError } from './tmi-glue.js';

export interface AuthRecoveryOptions {
  tokens: ChatTokenSource | undefined;
  clock: Clock;
  log: Logger;
  /** First wait before trying an unreachable token endpoint again. */
  initialRetryMs: number;
  /** The token was refreshed: log in again. */
  relogin: () => void;
  /** The refresh was refused (or failed otherwise): the client cannot log in. */
  fatal: (err: GiftdropError) => void;
}

export class AuthRecovery {
  private refreshed = false;
  private retryMs: number;
  private timer: TimerHandle | undefined;
  /** Bumped by cancel(): an attempt of an older generation does nothing more. */
  private generation = 0;

  constructor(private readonly o: AuthRecoveryOptions) {
    this.retryMs = o.initialRetryMs;
  }

  /** After a refused login: starts a refresh and returns true, or returns false when none can be tried. */
  begin(): boolean {
    if (!this.o.tokens?.canRefresh() || this.refreshed) return false;
    void this.attempt(this.generation);
    return true;
  }

  /** Logged in and joined: the next refusal may refresh again. */
  joined(): void {
    this.refreshed = false;
    this.retryMs = this.o.initialRetryMs;
  }

  /** Stops any retry (pending or in flight). */
  cancel(): void {
    this.generation++;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private async attempt(generation: number): Promise<void> {
    const cancelled = () => generation !== this.generation;
    try {
      await this.o.tokens!.refresh('refused on reconnect');
    } catch (err) {
      if (cancelled()) return;
      if ((err as { code?: string }).code === 'TWITCH_AUTH_UNAVAILABLE') {
        const wait = this.retryMs;
        this.retryMs = Math.min(this.retryMs * 2, 30_000);
        this.o.log.warn(
          `could not reach Twitch to refresh the token (${(err as Error).message}); trying again in ${Math.round(wait / 100) / 10} s`,
        );
        this.timer = this.o.clock.setTimeout(() => {
          this.timer = undefined;
          if (!cancelled()) void this.attempt(generation);
        }, wait);
        return;
      }
      const fatal = err instanceof GiftdropError ? err : new TwitchAuthError((err as Error).message);
      // A refused refresh was said by the token keeper already (token.ts: one line per login ended).
      if (fatal.code !== 'TWITCH_TOKEN_REFRESH') this.o.log.error({ code: fatal.code }, fatal.message);
      this.o.fatal(fatal);
      return;
    }
    if (cancelled()) return;
    this.refreshed = true;
    this.o.relogin();
  }
}
