/**
 * ConfirmWatch: notices lines Twitch never answered, for the chat client.
 *
 * Contract: when the oldest line awaiting Twitch's answer (USERSTATE or NOTICE) is older than
 * `timeoutMs` on the injected clock, the connection is probed: `sendPing(token)` writes
 * `PING :<token>` and the client reports every PONG it reads with `pong(token)`. Then:
 * - no PONG carrying the token within `pongTimeoutMs` (on the same clock): the socket is
 *   half-open (writes vanish); `onDead()` closes it, the client reconnects and the outbox
 *   re-sends the unanswered lines (see outbox.ts);
 * - the PONG: the connection works, so that one line got no answer: its fate is unknown and it is
 *   abandoned (dropped, never resent, so nothing is doubled).
 * The probe is the watch's own (a fresh token per probe); tmi.js's keep-alive PING and its timer
 * are left alone (tmi.js 1.8.5 itself takes any prefix-less PONG for the answer to its keep-alive:
 * the probe's PONG emits its 'pong' with a meaningless latency, which nothing here listens to, and
 * clears a keep-alive deadline then waiting, which is harmless since the connection just answered).
 * One probe at a time; the watch re-arms after every answer; `pause()` forgets a probe in flight.
 * Its code knows nothing of tmi.js (the client passes the PING writer and the PONGs).
 */
import type { Clock, TimerHandle } from '../shared/clock.js';
import type { Logger } from '../logging/index.js';
import type { Outbox } from './outbox.js';

export interface ConfirmWatchOptions {
  outbox: Outbox;
  clock: Clock;
  logger: Logger;
  timeoutMs: number;
  /** How long a probe waits for its PONG, on `clock`. */
  pongTimeoutMs: number;
  /** Writes `PING :<token>`; rejects when it could not be written. */
  sendPing: (token: string) => Promise<unknown>;
  /** No PONG in time: close the (half-open) connection so that it is made again. */
  onDead: () => void;
}

export class ConfirmWatch {
  private readonly o: ConfirmWatchOptions;
  private timer: TimerHandle | undefined;
  private probe: { token: string; oldestAt: number; deadline: TimerHandle } | undefined;
  private probes = 0;
  private active = true;

  constructor(options: ConfirmWatchOptions) {
    this.o = options;
  }

  /** True while a probe waits for its PONG. */
  get probing(): boolean {
    return this.probe !== undefined;
  }

  /** Call after a line was written or answered, and after a reconnect. */
  arm(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (!this.active || this.probe) return;
    const { oldestAt } = this.o.outbox.unconfirmed();
    if (oldestAt === undefined) return;
    const due = oldestAt + this.o.timeoutMs - this.o.clock.now();
    this.timer = this.o.clock.setTimeout(
      () => {
        this.timer = undefined;
        this.check();
      },
      Math.max(0, due),
    );
  }

  /** Stops watching until `resume()` (disconnected: the outbox re-queues the lines itself). */
  pause(): void {
    this.active = false;
    this.timer?.cancel();
    this.timer = undefined;
    this.probe?.deadline.cancel();
    this.probe = undefined;
  }

  resume(): void {
    this.active = true;
    this.arm();
  }

  /** A PONG read from the server, with its parameter. Ignored unless it answers the probe. */
  pong(token: string | undefined): void {
    const probe = this.probe;
    if (!probe || token !== probe.token) return;
    probe.deadline.cancel();
    this.probe = undefined;
    if (!this.active) return;
    const now = this.o.outbox.unconfirmed();
    if (now.oldestAt === probe.oldestAt) this.o.outbox.abandonOldest();
    this.arm();
  }

  private check(): void {
    const { oldestAt } = this.o.outbox.unconfirmed();
    if (!this.active || oldestAt === undefined) return;
    if (this.o.clock.now() - oldestAt < this.o.timeoutMs) return this.arm();
    const log = this.o.logger;
    log.warn(
      { waitedMs: this.o.clock.now() - oldestAt },
      'Twitch has not confirmed a chat line; checking the connection',
    );
    const token = `giftdrop-probe-${++this.probes}`;
    const deadline = this.o.clock.setTimeout(() => this.noPong(token), this.o.pongTimeoutMs);
    this.probe = { token, oldestAt, deadline };
    // A PING that cannot be written means the socket is closed: the disconnect pauses the watch.
    this.o.sendPing(token).catch((err: unknown) => log.debug({ err }, 'could not write the probe PING'));
  }

  private noPong(token: string): void {
    if (this.probe?.token !== token) return;
    this.probe = undefined;
    this.o.logger.warn(
      { pongTimeoutMs: this.o.pongTimeoutMs },
      'the chat connection does not answer (half-open socket); it is closed and reconnected, unconfirmed lines are sent again',
    );
    this.o.onDead();
    // Normally the disconnect comes next (pause); should the socket stay, look again later.
    if (!this.active) return;
    this.timer?.cancel();
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = undefined;
      this.check();
    }, this.o.timeoutMs);
  }
}
