/**
 * ConfirmWatch: notices lines Twitch never answered, for the chat client.
 *
 * Contract: when the oldest line awaiting Twitch's answer (USERSTATE or NOTICE) is older than
 * `timeoutMs` on the injected clock, the connection is probed with a PING:
 * - no PONG: the socket is half-open (writes vanish); the probe's own timeout in tmi.js closes it,
 *   the client reconnects and the outbox re-sends the unanswered lines (see outbox.ts);
 * - a PONG: the connection works, so that one line got no answer: its fate is unknown and it is
 *   abandoned (dropped, never resent, so nothing is doubled).
 * One probe at a time; the watch re-arms after every answer. Knows nothing of tmi.js.
 */
import type { Clock, TimerHandle } from '../shared/clock.js';
import type { Logger } from '../logging/index.js';
import type { Outbox } from './outbox.js';

export interface ConfirmWatchOptions {
  outbox: Outbox;
  clock: Clock;
  logger: Logger;
  timeoutMs: number;
  /** Resolves on a PONG, rejects when none came. */
  ping: () => Promise<unknown>;
}

export class ConfirmWatch {
  private readonly o: ConfirmWatchOptions;
  private timer: TimerHandle | undefined;
  private probing = false;
  private active = true;

  constructor(options: ConfirmWatchOptions) {
    this.o = options;
  }

  /** Call after a line was written or answered, and after a reconnect. */
  arm(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (!this.active || this.probing) return;
    const { oldestAt } = this.o.outbox.unconfirmed();
    if (oldestAt === undefined) return;
    const due = oldestAt + this.o.timeoutMs - this.o.clock.now();
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = undefined;
      this.check();
    }, Math.max(0, due));
  }

  /** Stops watching until `resume()` (disconnected: the outbox re-queues the lines itself). */
  pause(): void {
    this.active = false;
    this.timer?.cancel();
    this.timer = undefined;
  }

  resume(): void {
    this.active = true;
    this.arm();
  }

  private check(): void {
    const { oldestAt } = this.o.outbox.unconfirmed();
    if (!this.active || oldestAt === undefined) return;
    if (this.o.clock.now() - oldestAt < this.o.timeoutMs) return this.arm();
    this.probing = true;
    const log = this.o.logger;
    log.warn({ waitedMs: this.o.clock.now() - oldestAt }, 'Twitch has not confirmed a chat line; checking the connection');
    this.o.ping().then(
      () => {
        this.probing = false;
        if (!this.active) return;
        const now = this.o.outbox.unconfirmed();
        if (now.oldestAt === oldestAt) this.o.outbox.abandonOldest();
        this.arm();
      },
      () => {
        this.probing = false;
        log.warn('the chat connection does not answer (half-open socket); it is closed and reconnected, unconfirmed lines are sent again');
        // Normally the disconnect comes first (pause); should a late PONG keep the socket, look again.
        if (!this.active) return;
        this.timer?.cancel();
        this.timer = this.o.clock.setTimeout(() => {
          this.timer = undefined;
          this.check();
        }, this.o.timeoutMs);
      },
    );
  }
}
