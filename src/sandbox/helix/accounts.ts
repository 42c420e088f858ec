/**
 * More Twitch user tokens for the sandboxes than the bot's chat token: the broadcaster's login
 * (channel points, bits, EventSub as the broadcaster), each with its user, scopes, expiry and a
 * refresh token that rotates like Twitch's. The chat server's `/oauth2` asks this for tokens it
 * does not know (`validate`, `refresh`), and the Helix sandbox for the caller of a request.
 *
 * Contract: a token is valid from `add` until it expires on the clock, is refreshed (the old one
 * stops at once) or `expire(userId)` is called; lookups compare SHA-256 digests (no token kept in a
 * map key as it is). Nothing here reads process.env.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import { sameSecret } from '../../shared/constant-time.js';

export interface SandboxAccount {
  userId: string;
  login: string;
  scopes: readonly string[];
  token: string;
  refreshToken: string;
  expiresAt: number;
}

const digest = (s: string): string => createHash('sha256').update(s).digest('hex');
const fresh = (): string => randomBytes(15).toString('hex');

export class SandboxAccounts {
  private readonly byDigest = new Map<string, SandboxAccount>();
  private readonly byUser = new Map<string, SandboxAccount>();

  constructor(
    private readonly o: { clock: Clock; clientId: () => string; clientSecret: () => string; lifetimeSeconds?: number },
  ) {}

  /** A new login for `userId` (replacing its previous token). */
  add(a: { userId: string; login: string; scopes: readonly string[]; token?: string }): SandboxAccount {
    const old = this.byUser.get(a.userId);
    if (old) this.byDigest.delete(digest(old.token));
    const account: SandboxAccount = {
      userId: a.userId,
      login: a.login.toLowerCase(),
      scopes: [...a.scopes],
      token: a.token ?? fresh(),
      refreshToken: fresh(),
      expiresAt: this.o.clock.now() + (this.o.lifetimeSeconds ?? 14_400) * 1000,
    };
    this.byDigest.set(digest(account.token), account);
    this.byUser.set(a.userId, account);
    return account;
  }

  /** The valid login a token belongs to. */
  byToken(token: string): SandboxAccount | undefined {
    const a = this.byDigest.get(digest(token));
    return a && this.o.clock.now() < a.expiresAt ? a : undefined;
  }

  of(userId: string): SandboxAccount | undefined {
    return this.byUser.get(userId);
  }

  /** The user's token expires now (401 everywhere until refreshed). */
  expire(userId: string): void {
    const a = this.byUser.get(userId);
    if (a) a.expiresAt = this.o.clock.now();
  }

  /** `/oauth2/validate`'s answer for a token, or undefined. */
  validate(token: string): Record<string, unknown> | undefined {
    const a = this.byToken(token);
    if (!a) return undefined;
    return {
      client_id: this.o.clientId(),
      login: a.login,
      scopes: [...a.scopes],
      user_id: a.userId,
      expires_in: Math.max(0, Math.floor((a.expiresAt - this.o.clock.now()) / 1000)),
    };
  }

  /** `/oauth2/token` grant_type=refresh_token for one of these logins: the new tokens, or undefined when the refresh token is not one of theirs. */
  refresh(form: URLSearchParams): { status: number; body: Record<string, unknown> } | undefined {
    const given = form.get('refresh_token') ?? '';
    const a = [...this.byUser.values()].find((x) => sameSecret(given, x.refreshToken));
    if (!a) return undefined;
    if (!sameSecret(form.get('client_id') ?? '', this.o.clientId()))
      return { status: 400, body: { status: 400, message: 'invalid client' } };
    if (!sameSecret(form.get('client_secret') ?? '', this.o.clientSecret()))
      return { status: 403, body: { status: 403, message: 'invalid client secret' } };
    this.byDigest.delete(digest(a.token));
    a.token = fresh();
    a.refreshToken = fresh();
    a.expiresAt = this.o.clock.now() + (this.o.lifetimeSeconds ?? 14_400) * 1000;
    this.byDigest.set(digest(a.token), a);
    return {
      status: 200,
      body: {
        access_token: a.token,
        refresh_token: a.refreshToken,
        expires_in: this.o.lifetimeSeconds ?? 14_400,
        scope: [...a.scopes],
        token_type: 'bearer',
      },
    };
  }
}
