/**
 * The outbox's public types: the transport port, its "certainly not written" error, the limits
 * (with Twitch's defaults), options, counters and drop reasons. See outbox.ts for the contract.
 */
import type { Clock } from '../shared/clock.js';
import { GiftdropError } from '../shared/errors.js';
import type { Logger } from '../logging/index.js';

/**
 * Writes one line to the chat server. Throws `NotSentError` when it certainly did not write it
 * (it is sent again later), `RefusedError` when the server refused it for good (dropped; sending
 * it again cannot help), anything else when its fate is unknown (dropped, never resent).
 */
export interface ChatTransport {
  send(channel: string, text: string): Promise<void>;
}

/** Thrown by a transport when the line was certainly not written (e.g. not connected). */
export class NotSentError extends GiftdropError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('CHAT_NOT_SENT', message, options);
  }
}

/** Thrown by a transport when the server refused the line for good (e.g. Helix 403: the bot may not talk there). */
export class RefusedError extends GiftdropError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('CHAT_REFUSED', message, options);
  }
}

export interface OutboxLimits {
  /** Lines per window when not moderator/broadcaster (default 20). */
  messages: number;
  /** Lines per window once moderator/broadcaster status is confirmed (default 100). */
  modMessages: number;
  /** Sliding window length (default 32 000 ms: Twitch counts 30 s; 2 s margin). */
  windowMs: number;
  /** Minimum gap between lines when not privileged (default 1000 ms). */
  minIntervalMs: number;
  /** Added to the minimum gap, the slow-mode gap and the duplicate window (default 100 ms). */
  pacingMarginMs: number;
  /** Same text is never sent twice within this time when not privileged (default 30 000 ms). */
  duplicateWindowMs: number;
  /** Longest line (default 500). */
  maxLength: number;
  /** Pause after a NOTICE that is not a rate limit, when it names no duration (default 5000 ms). */
  backoffMs: number;
  /** Length of one slow-mode second (default 1000 ms; tests scale it). */
  slowUnitMs: number;
  /** Most lines kept waiting while paused (disconnected); high-priority lines are never dropped (default 100). */
  maxQueued: number;
}

export const defaultOutboxLimits: OutboxLimits = {
  messages: 20,
  modMessages: 100,
  windowMs: 32_000,
  minIntervalMs: 1000,
  pacingMarginMs: 100,
  duplicateWindowMs: 30_000,
  maxLength: 500,
  backoffMs: 5000,
  slowUnitMs: 1000,
  maxQueued: 100,
};

export interface OutboxOptions {
  channel: string;
  transport: ChatTransport;
  clock: Clock;
  logger: Logger;
  limits?: Partial<OutboxLimits>;
  /** Start paused (the client resumes once the channel is joined). Default false. */
  paused?: boolean;
  /** A written line counts as sent only once `confirm()` answers it (see the module header). Default false. */
  confirm?: boolean;
}

export interface OutboxStats {
  queued: number;
  /** Lines delivered (confirmed by the server in `confirm` mode). */
  sent: number;
  dropped: number;
  retried: number;
  /** Writes handed to the transport (a re-sent line counts each time). */
  written: number;
  /** Written lines not yet answered (`confirm` mode). */
  unconfirmed: number;
  /** 1 while a line is with the transport (handed over, its write not yet reported), else 0. */
  writing: number;
  /** Lines dropped because the queue was over `maxQueued` while paused (included in `dropped`). */
  overflow: number;
  /** Unconfirmed lines put back in the queue after a disconnect (`confirm` mode). */
  requeued: number;
}

/** Why a line was not sent. */
export type DropReason = 'stale' | 'notice' | 'uncertain' | 'closed' | 'overflow' | 'refused';
