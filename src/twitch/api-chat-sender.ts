/**
 * ApiChatSender: the bot's lines sent with Helix Send Chat Message (`POST /chat/messages`), for
 * chat over EventSub (eventsub-chat.ts). Every line goes through an Outbox in `confirm` mode,
 * exactly like the IRC client's: Twitch's limits and pacing, splitting, priorities, duplicates,
 * a cap while paused.
 *
 * Contract: a line counts as sent only when Twitch answers `is_sent: true`; an answer of
 * `is_sent: false` is an unconfirmed line: its `drop_reason.code` goes to the outbox as a refusal
 * (Outbox.notSent: retried once for a rate limit, a duplicate, slow mode or a time-out, dropped
 * for any other code, known or not, since Twitch documents none and changes them) and is never
 * claimed sent. The endpoint (ChatMessageEndpoint) says how a request failed: `NotSentError`
 * (certainly not sent: the line is sent again later), `RefusedError` (Twitch refused the request
 * itself, e.g. a missing scope: dropped, health degraded with Twitch's reason), anything else
 * (unknown: dropped, never resent, so nothing is doubled). `health()` is 'ok' unless the last
 * line was refused, or the last DEGRADED_AFTER lines were all not sent; the next sent line clears
 * it. Events: 'sent' (text), 'dropped' (text, reason, detail), 'notice' (code, Twitch's message:
 * each answer that a line was not sent, like IRC's NOTICE; `refused` for a refused request),
 * 'health'. Knows nothing of HTTP
 * (the endpoint does) or of reading chat.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from '../logging/index.js';
import type { SayOptions } from '../giveaway/ports.js';
import type { Clock } from '../shared/clock.js';
import { Outbox, type ChatTransport, type DropReason, type OutboxLimits, type OutboxStats } from './outbox.js';

/** Twitch's answer to one Send Chat Message request. */
export type SendVerdict = { sent: true; messageId: string } | { sent: false; code: string; message: string };

/**
 * Sends one line with Send Chat Message and resolves with Twitch's verdict. Throws NotSentError
 * when the request certainly had no effect, RefusedError when Twitch refused it (400, 401, 403,
 * 422), anything else when its fate is unknown (a timeout, a 5xx): never retried on its own.
 */
export interface ChatMessageEndpoint {
  send(text: string): Promise<SendVerdict>;
}

export interface ApiChatSenderOptions {
  channel: string;
  endpoint: ChatMessageEndpoint;
  clock: Clock;
  logger: Logger;
  limits?: Partial<OutboxLimits>;
}

/** Lines in a row not sent (dropped by Twitch or of unknown fate) after which sending is degraded. */
const DEGRADED_AFTER = 3;

export class ApiChatSender extends EventEmitter {
  private readonly outbox: Outbox;
  private verdict: SendVerdict | undefined;
  private problem: string | undefined;
  private notSentInARow = 0;
  private readonly log: Logger;

  constructor(o: ApiChatSenderOptions) {
    super();
    this.log = o.logger.child({ module: 'twitch.chat-api' });
    const transport: ChatTransport = {
      send: async (_channel, text) => {
        this.verdict = await o.endpoint.send(text);
      },
    };
    this.outbox = new Outbox({
      channel: o.channel,
      transport,
      clock: o.clock,
      logger: this.log,
      limits: o.limits,
      paused: true,
      confirm: true,
    });
    // One line at a time (confirm mode): the verdict of the line just written is applied now.
    this.outbox.on('written', () => this.applyVerdict());
    this.outbox.on('sent', (text: string) => {
      this.notSentInARow = 0;
      this.setProblem(undefined);
      this.emit('sent', text);
    });
    this.outbox.on('dropped', (text: string, reason: DropReason, detail?: string) =>
      this.onDropped(text, reason, detail),
    );
  }

  say(text: string, options?: SayOptions): void {
    this.outbox.say(text, options);
  }

  sayList(prefix: string, items: readonly string[], options?: SayOptions): void {
    this.outbox.sayList(prefix, items, options);
  }

  /** Starts sending (the channel and the bot are known). */
  resume(): void {
    this.outbox.resume();
  }

  /** Stops sending; queued lines stay queued. */
  pause(): void {
    this.outbox.pause();
  }

  /** Moderator or broadcaster status of the bot, as Twitch showed it (the bot's own messages' badges). */
  setPrivileged(privileged: boolean): void {
    this.outbox.setPrivileged(privileged);
  }

  isPrivileged(): boolean {
    return this.outbox.isPrivileged();
  }

  flush(): Promise<void> {
    return this.outbox.idle();
  }

  stats(): OutboxStats {
    return this.outbox.stats();
  }

  /** Why the bot's lines do not get through, or undefined while they do. */
  health(): string | undefined {
    return this.problem;
  }

  close(): number {
    return this.outbox.close();
  }

  private applyVerdict(): void {
    const v = this.verdict;
    this.verdict = undefined;
    if (!v) return;
    if (v.sent) {
      this.outbox.confirm();
      return;
    }
    this.log.warn(
      { code: v.code },
      `Twitch did not send a chat line of the bot (is_sent: false, ${v.code}: ${v.message})`,
    );
    this.emit('notice', v.code, v.message);
    this.outbox.notSent(v.code, v.message);
  }

  private onDropped(text: string, reason: DropReason, detail: string | undefined): void {
    this.emit('dropped', text, reason, detail);
    if (reason === 'stale' || reason === 'overflow' || reason === 'closed') return;
    this.notSentInARow++;
    if (reason === 'refused') {
      this.emit('notice', 'refused', detail ?? '');
      this.setProblem(`Twitch refuses the bot's chat messages (${detail ?? 'refused'})`);
    } else if (this.notSentInARow >= DEGRADED_AFTER)
      this.setProblem(
        `the last ${this.notSentInARow} chat lines of the bot were not sent (${reason === 'notice' ? `Twitch: ${detail ?? 'dropped'}` : 'no answer from Twitch'})`,
      );
  }

  private setProblem(problem: string | undefined): void {
    if (problem === this.problem) return;
    this.problem = problem;
    this.emit('health', problem);
  }
}
