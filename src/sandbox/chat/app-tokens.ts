/**
 * Twitch's client credentials grant in the sandbox (`POST /oauth2/token` with
 * `grant_type=client_credentials`, the application's client id and secret): app access tokens,
 * which Send Chat Message takes for the Chat Bot badge (sandbox/helix/chat-messages.ts).
 *
 * Contract: `grant` answers 200 `{ access_token, expires_in, token_type: "bearer" }` for the right
 * client id and secret (compared in constant time), else Twitch's 400 "invalid client" / 403
 * "invalid client secret"; each grant issues a new token, and every token issued stays valid until
 * its own expiry (on the injected clock) or `expireAll()`. `validate` answers what Twitch's
 * `/oauth2/validate` says of an app token (`client_id`, empty `scopes`, `expires_in`; no login, no
 * user id). Nothing here reads process.env.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import { sameSecret } from '../../shared/constant-time.js';

export interface SandboxAppTokensOptions {
  clientId: () => string;
  clientSecret: () => string;
  clock: Clock;
  /** Default 5 000 000 s (about 58 days, like Twitch's). */
  lifetimeSeconds?: number;
}

export class SandboxAppTokens {
  /** Token -> expiry (ms on the clock). */
  private readonly tokens = new Map<string, number>();
  private grants = 0;

  constructor(private readonly o: SandboxAppTokensOptions) {}

  /** App tokens granted so far. */
  get granted(): number {
    return this.grants;
  }

  grant(form: URLSearchParams): { status: number; body: Record<string, unknown> } {
    if (!sameSecret(form.get('client_id') ?? '', this.o.clientId()))
      return { status: 400, body: { status: 400, message: 'invalid client' } };
    if (!sameSecret(form.get('client_secret') ?? '', this.o.clientSecret()))
      return { status: 403, body: { status: 403, message: 'invalid client secret' } };
    const lifetime = this.o.lifetimeSeconds ?? 5_000_000;
    const token = randomBytes(15).toString('hex');
    this.tokens.set(token, this.o.clock.now() + lifetime * 1000);
    this.grants++;
    return { status: 200, body: { access_token: token, expires_in: lifetime, token_type: 'bearer' } };
  }

  /** True for an unexpired app token this sandbox issued. */
  accepts(token: string): boolean {
    for (const [t, until] of this.tokens) if (sameSecret(token, t) && this.o.clock.now() < until) return true;
    return false;
  }

  /** What `/oauth2/validate` answers for an app token, or undefined when `token` is not one. */
  validate(token: string): Record<string, unknown> | undefined {
    for (const [t, until] of this.tokens) {
      if (!sameSecret(token, t) || this.o.clock.now() >= until) continue;
      return { client_id: this.o.clientId(), scopes: [], expires_in: Math.floor((until - this.o.clock.now()) / 1000) };
    }
    return undefined;
  }

  /** Every app token issued so far expires now (Twitch answers 401 to them). */
  expireAll(): void {
    for (const t of this.tokens.keys()) this.tokens.set(t, this.o.clock.now());
  }
}
