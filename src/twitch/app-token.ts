/**
 * AppToken: the application's app access token (client credentials grant with TWITCH_CLIENT_ID and
 * TWITCH_CLIENT_SECRET), for Send Chat Message with the Chat Bot badge (chat over EventSub).
 *
 * Contract: `start()` gets the first token (TwitchTokenError when Twitch refuses the client id or
 * secret, TwitchAuthUnavailableError when it cannot be reached: the caller retries); `current()`
 * is the token to send; `refresh()` gets a new one (single flight), which the Helix client asks
 * for after a 401 (an app token expires after about two months, and can be revoked). Every token
 * goes to `registerSecret` (the log redactor) before it is used. An app token has no refresh
 * token and no scopes: what it may do depends on what the bot account (`user:bot`) and the
 * broadcaster (`channel:bot`, or the bot being a moderator) authorized. Lives in memory only.
 */
import type { Logger } from '../logging/index.js';
import type { TwitchAuthClient } from './auth.js';

export interface AppTokenOptions {
  auth: Pick<TwitchAuthClient, 'clientCredentials'>;
  clientId: string;
  clientSecret: string;
  logger: Logger;
  registerSecret?: (value: string) => void;
}

export class AppToken {
  private token = '';
  private inflight: Promise<void> | undefined;
  private grants = 0;
  private readonly log: Logger;

  constructor(private readonly o: AppTokenOptions) {
    this.log = o.logger.child({ module: 'twitch.app-token' });
  }

  /** Gets the first token (see the module header). */
  start(): Promise<void> {
    return this.token ? Promise.resolve() : this.refresh('start');
  }

  current(): string {
    return this.token;
  }

  canRefresh(): boolean {
    return true;
  }

  /** App tokens granted so far. */
  grantCount(): number {
    return this.grants;
  }

  refresh(reason: string): Promise<void> {
    this.inflight ??= this.grant(reason).finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async grant(reason: string): Promise<void> {
    const t = await this.o.auth.clientCredentials({ clientId: this.o.clientId, clientSecret: this.o.clientSecret });
    this.o.registerSecret?.(t.accessToken);
    this.token = t.accessToken;
    this.grants++;
    this.log.info(
      { reason, expiresIn: t.expiresIn },
      'app access token granted (chat messages with the Chat Bot badge)',
    );
  }
}
