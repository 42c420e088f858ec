/**
 * HelixChatEndpoint: one chat line of the bot sent with Helix Send Chat Message
 * (`POST /chat/messages`), the ChatMessageEndpoint of chat over EventSub (api-chat-sender.ts).
 *
 * Contract:
 * - sends `{ broadcaster_id, sender_id, message }` once (HelixClient `once`: a request that may
 *   have reached Twitch is never repeated, so no line is doubled) and resolves with Twitch's
 *   verdict: `is_sent: true` with the message id, or `is_sent: false` with `drop_reason`'s code and
 *   message (a missing reason reads as code `unknown`);
 * - with an app access token (`app`, the client credentials grant) Twitch shows the Chat Bot
 *   badge; that needs `user:bot` from the bot account and `channel:bot` from the broadcaster or
 *   the bot being a moderator. Twitch refusing the app token (401 after a fresh one, 403) makes the
 *   endpoint send that line and the next ones with the bot's user token instead, said once in the
 *   log with what is missing; it tries the app token again once the bot is known to be a moderator
 *   (`privileged(true)`). With an app token `for_source_only` is `sourceOnly()` (during Shared
 *   Chat: only this channel sees the line, unless partner entries are on);
 * - failures: a request Twitch refused (400, 401, 403, 422) is RefusedError (with Twitch's
 *   message); the Helix rate limit running out before the deadline, or a network error before
 *   anything was sent (connection refused, host not found, connect timeout), NotSentError (the line
 *   is sent again later); a timeout or a 5xx after the request left is a plain Error (unknown fate:
 *   dropped, never resent). Tokens are never in a message.
 */
import { z } from 'zod';
import type { Logger } from '../logging/index.js';
import type { ChatMessageEndpoint, SendVerdict } from './api-chat-sender.js';
import { HelixError, type HelixClient } from './helix.js';
import { NotSentError, RefusedError } from './outbox-types.js';

const AnswerSchema = z.object({
  data: z
    .array(
      z.object({
        message_id: z.string().nullish(),
        is_sent: z.boolean(),
        drop_reason: z.object({ code: z.string().nullish(), message: z.string().nullish() }).nullish(),
      }),
    )
    .min(1),
});

/** Network errors that happen before a request is written: Twitch cannot have acted. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'DEADLINE',
  'ENETUNREACH',
  'EHOSTUNREACH',
]);

type Helix = Pick<HelixClient, 'request'>;

export interface HelixChatEndpointOptions {
  broadcasterId: string;
  senderId: string;
  /** The Helix client with the bot's user token. */
  user: Helix;
  /** The Helix client with the application's app token (the Chat Bot badge), when configured. */
  app?: Helix;
  /** With the app token: send for this channel only during Shared Chat (`for_source_only`). */
  sourceOnly?: () => boolean;
  logger: Logger;
}

export class HelixChatEndpoint implements ChatMessageEndpoint {
  /** The app token was refused: lines go with the user token until the bot is a moderator. */
  private appRefused = false;
  private readonly log: Logger;

  constructor(private readonly o: HelixChatEndpointOptions) {
    this.log = o.logger.child({ module: 'twitch.chat-api' });
  }

  /** Whether the next line goes with the app token (and the Chat Bot badge). */
  get badged(): boolean {
    return this.o.app !== undefined && !this.appRefused;
  }

  /** The bot's moderator status as Twitch showed it: a moderator may get the badge without channel:bot. */
  privileged(mod: boolean): void {
    if (mod && this.appRefused) {
      this.appRefused = false;
      this.log.info('the bot is a moderator now: chat lines go with the app token (Chat Bot badge) again');
    }
  }

  async send(text: string): Promise<SendVerdict> {
    if (this.o.app && !this.appRefused) {
      try {
        return await this.post(this.o.app, text, true);
      } catch (err) {
        if (!(err instanceof RefusedError) || !appRefusal(err.cause)) throw err;
        this.appRefused = true;
        this.log.warn(
          { reason: err.message },
          "Twitch refused the app token for chat (no Chat Bot badge): the bot account needs the scope user:bot, and the broadcaster must authorize channel:bot or make the bot a moderator; lines go with the bot's own token meanwhile",
        );
      }
    }
    return this.post(this.o.user, text, false);
  }

  private async post(helix: Helix, text: string, app: boolean): Promise<SendVerdict> {
    const body = {
      broadcaster_id: this.o.broadcasterId,
      sender_id: this.o.senderId,
      message: text,
      ...(app && this.o.sourceOnly ? { for_source_only: this.o.sourceOnly() } : {}),
    };
    let answer: z.infer<typeof AnswerSchema>;
    try {
      answer = await helix.request('POST', '/chat/messages', { body, schema: AnswerSchema, once: true });
    } catch (err) {
      throw classify(err);
    }
    const d = answer.data[0]!;
    if (d.is_sent) return { sent: true, messageId: d.message_id ?? '' };
    return { sent: false, code: d.drop_reason?.code || 'unknown', message: d.drop_reason?.message ?? '' };
  }
}

/** A refusal of the app token itself (not of the line): 401 after a fresh token, or 403. */
function appRefusal(cause: unknown): boolean {
  return cause instanceof HelixError && (cause.status === 401 || cause.status === 403);
}

/** What a failed request means for the line (see the module header). */
function classify(err: unknown): Error {
  if (!(err instanceof HelixError)) return err instanceof Error ? err : new Error(String(err));
  const status = err.status;
  if (status === 400 || status === 401 || status === 403 || status === 404 || status === 422) {
    return new RefusedError(`HTTP ${status}${err.twitchMessage ? `: ${err.twitchMessage}` : ''}`, { cause: err });
  }
  if (err.code === 'TWITCH_API_RATE_LIMITED' || err.code === 'TWITCH_API_LIMIT')
    return new NotSentError(err.message, { cause: err });
  const code = (err.cause as { code?: string } | undefined)?.code;
  if (err.code === 'TWITCH_API_UNAVAILABLE' && code !== undefined && NOT_SENT_CODES.has(code))
    return new NotSentError(err.message, { cause: err });
  return err;
}
