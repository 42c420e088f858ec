/**
 * One Twitch login by the device code flow (a Public application: client id, no secret, no
 * redirect URL), as the setup page and `setup` in a terminal run it: start it (the user code and
 * the page to open), then poll until the user answered, at Twitch's `interval`, slower after a
 * `slow_down` (+5 s, RFC 8628), until the code's `expires_in`.
 *
 * Contract: `startDeviceLogin` asks Twitch for a code; `DeviceLogin.wait(signal)` resolves with the
 * tokens and what `/validate` says about them (account, user id, scopes, client id), or rejects
 * with DeviceLoginError: `denied` (the user cancelled), `expired` (the code ran out or was used),
 * `refused` (Twitch said something else); a Twitch it cannot reach is polled again at the interval
 * (the code's expiry still bounds the wait). The tokens go to `onTokens` as soon as Twitch answered,
 * before anything else (the caller saves them durably: the login store's `save`). Waits on the
 * injected clock; aborting the signal ends the wait. Never logs a token or the device code.
 */
import type { Clock } from '../shared/clock.js';
import { GiftdropError } from '../shared/errors.js';
import {
  TwitchAuthUnavailableError,
  type DeviceStart,
  type RefreshedTokens,
  type TokenInfo,
  type TwitchAuthClient,
} from './auth.js';

class DeviceLoginError extends GiftdropError {
  constructor(
    readonly reason: 'denied' | 'expired' | 'refused',
    message: string,
  ) {
    super(`TWITCH_DEVICE_${reason.toUpperCase()}`, message);
  }
}

/** What a finished device login gives: the tokens and whose they are. */
export interface DeviceLoginResult {
  tokens: RefreshedTokens;
  info: TokenInfo;
  clientId: string;
  /** When the access token expires (ms since the epoch; 0 unknown). */
  expiresAt: number;
}

export interface DeviceLoginOptions {
  auth: TwitchAuthClient;
  clock: Clock;
  clientId: string;
  /** Sent with the poll when the client is Confidential (TWITCH_CLIENT_SECRET of that client). */
  clientSecret?: string;
  scopes: readonly string[];
}

export async function startDeviceLogin(o: DeviceLoginOptions): Promise<DeviceLogin> {
  const start = await o.auth.deviceStart(o.clientId, o.scopes);
  return new DeviceLogin(o, start, o.clock.now());
}

export class DeviceLogin {
  readonly userCode: string;
  readonly verificationUri: string;
  /** When the code stops working (ms since the epoch). */
  readonly expiresAt: number;

  constructor(
    private readonly o: DeviceLoginOptions,
    private readonly start: DeviceStart,
    startedAt: number,
  ) {
    this.userCode = start.userCode;
    this.verificationUri = start.verificationUri;
    this.expiresAt = startedAt + start.expiresIn * 1000;
  }

  /** Polls until the user answered (see the module header); `onTokens` runs before anything else once Twitch granted. */
  async wait(signal: AbortSignal, onTokens?: (t: RefreshedTokens) => Promise<void>): Promise<DeviceLoginResult> {
    const { auth, clock } = this.o;
    let intervalMs = Math.max(1, this.start.interval) * 1000;
    for (;;) {
      await sleep(clock, intervalMs, signal);
      if (clock.now() >= this.expiresAt)
        throw new DeviceLoginError('expired', 'the code expired before it was entered: start the login again');
      let answer;
      try {
        answer = await auth.devicePoll(this.o.clientId, this.start.deviceCode, this.o.scopes, this.o.clientSecret);
      } catch (err) {
        if (err instanceof TwitchAuthUnavailableError) continue; // asked again at the interval
        throw err;
      }
      signal.throwIfAborted();
      switch (answer.kind) {
        case 'pending':
          continue;
        case 'slow-down':
          intervalMs += 5000;
          continue;
        case 'denied':
          throw new DeviceLoginError('denied', 'the login was cancelled on the Twitch page');
        case 'expired':
          throw new DeviceLoginError('expired', 'the code expired or was already used: start the login again');
        case 'refused':
          throw new DeviceLoginError('refused', `Twitch refused the login (${answer.message})`);
        case 'tokens': {
          const tokens = answer.tokens;
          if (onTokens) await onTokens(tokens);
          const v = await auth.validate(tokens.accessToken);
          if (!v.valid) throw new DeviceLoginError('refused', `Twitch does not accept the new token (${v.reason})`);
          const expiresIn = tokens.expiresIn ?? v.expiresIn;
          return {
            tokens,
            info: { clientId: v.clientId, login: v.login, userId: v.userId, scopes: v.scopes, expiresIn: v.expiresIn },
            clientId: this.o.clientId,
            expiresAt: expiresIn > 0 ? clock.now() + expiresIn * 1000 : 0,
          };
        }
      }
    }
  }
}

function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      timer.cancel();
      reject(signal.reason as Error);
    };
    const timer = clock.setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
