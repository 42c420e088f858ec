/**
 * Auto streaming (`streaming.auto`): Fourthwall's streaming status follows the broadcaster's real
 * stream. Polls `GET /streams?user_id=<broadcaster>` every `pollMs` on the injected clock.
 *
 * Contract:
 * - live and Fourthwall not already started for this broadcaster -> ONE `PUT /streaming/start`
 *   with the broadcaster's id, login and the stream's thumbnail (1280x720 filled in); a bot
 *   started mid-stream does it on its first poll, and a restarted bot that finds Fourthwall
 *   already started sends nothing;
 * - offline for `graceMs` (measured from the first offline answer) -> ONE `PUT /streaming/end`;
 *   back live within the grace -> nothing;
 * - each Fourthwall call is retried by the Fourthwall client alone (its transport's retries within
 *   its deadline), never again here: a call that still failed is warned about in chat (once per
 *   failure streak) and made again on the next poll; Helix calls likewise are retried by the
 *   Helix client alone; Helix unreachable -> the status is left as it is, with one warning per
 *   outage (log and chat) and one note when it is back;
 * - `override(kind)` (from `!stream live|offline`) holds the mod's choice until the stream's real
 *   state changes; `nextStep()` says in one sentence what auto mode will do next.
 * Draws are not touched: a draw open when the stream ends runs to its end.
 */
import type { Logger } from '../logging/index.js';
import type { Clock, TimerHandle } from '../shared/clock.js';
import { fillThumbnail, type HelixStream } from './helix.js';

export interface StreamWatchDeps {
  stream(userId: string): Promise<HelixStream | undefined>;
  /** Fourthwall: start with the real broadcaster info, end, read. */
  start(info: { broadcasterId: string; broadcasterLogin: string; thumbnailUrl: string }): Promise<unknown>;
  end(): Promise<unknown>;
  status(): Promise<{ status: string; broadcasterLogin?: string }>;
  /** One warning line in chat. */
  warn(text: string): void;
  /** One line in chat when auto mode changed the status (optional). */
  announce?(text: string): void;
}

export interface StreamWatchOptions {
  broadcaster: { id: string; login: string };
  clock: Clock;
  logger: Logger;
  pollMs: number;
  graceMs: number;
}

type Seen = 'live' | 'offline' | 'unknown';

export class StreamWatch {
  private timer: TimerHandle | undefined;
  private stopped = false;
  /** What we believe Fourthwall shows: set after our calls, read once at the first poll. */
  private shop: 'started' | 'ended' | 'unknown' = 'unknown';
  private seen: Seen = 'unknown';
  private offlineSince: number | undefined;
  private helixDown = false;
  private manual: { kind: 'live' | 'offline'; seen: Seen } | undefined;
  /** A mod's `!stream` call is on its way: polls change nothing meanwhile. */
  private holds = 0;
  private running: Promise<void> | undefined;
  private readonly failing = new Set<'start' | 'end'>();
  private readonly log: Logger;
  /** Calls to Fourthwall this watch made (tests, logs). */
  readonly sent = { start: 0, end: 0 };

  constructor(
    private readonly deps: StreamWatchDeps,
    private readonly o: StreamWatchOptions,
  ) {
    this.log = o.logger.child({ module: 'stream-watch' });
  }

  /** First poll now, then every pollMs. */
  start(): Promise<void> {
    return this.tick();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** Resolves when the poll in progress (if any) is done. */
  idle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  /**
   * A mod is about to set the status by hand: no poll acts from now on, and this resolves once a
   * poll already on its way is done, so the mod's call is the last one Fourthwall gets. End the
   * hold with `override` (the call succeeded) or `release` (it failed).
   */
  async hold(): Promise<void> {
    this.holds++;
    await this.idle();
  }

  /** The mod's call failed: auto mode goes on as before. */
  release(): void {
    this.holds = Math.max(0, this.holds - 1);
  }

  /** A mod set the status by hand: auto mode holds off until the stream's real state changes. */
  override(kind: 'live' | 'offline'): void {
    this.release();
    this.manual = { kind, seen: this.seen };
    this.shop = kind === 'live' ? 'started' : 'ended';
    this.offlineSince = undefined;
  }

  /** What auto mode does next, in one sentence (for `!stream`). */
  nextStep(): string {
    const grace = Math.round(this.o.graceMs / 1000);
    if (this.helixDown) return 'Auto mode cannot reach Twitch right now and leaves the status as it is.';
    if (this.manual) {
      return this.manual.seen === 'live'
        ? 'Auto mode keeps your choice while this stream lasts, then follows the stream again.'
        : 'Auto mode keeps your choice until the stream goes live, then follows the stream again.';
    }
    if (this.seen === 'live') return `Auto mode: the stream is live; it sets offline ${grace} s after the stream ends.`;
    if (this.seen === 'offline' && this.shop === 'started')
      return `Auto mode: the stream is offline; it sets offline within ${grace} s.`;
    return 'Auto mode: it sets LIVE when the stream goes live.';
  }

  private tick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const run = this.poll()
      .catch((err: unknown) => this.log.error({ err }, 'stream watch poll failed'))
      .finally(() => {
        this.running = undefined;
        if (!this.stopped) this.timer = this.o.clock.setTimeout(() => void this.tick(), this.o.pollMs);
      });
    this.running = run;
    return run;
  }

  private async poll(): Promise<void> {
    const b = this.o.broadcaster;
    let live: HelixStream | undefined;
    try {
      live = await this.deps.stream(b.id);
    } catch (err) {
      if (!this.helixDown) {
        this.helixDown = true;
        this.log.warn(
          { err },
          `Twitch API unavailable: Fourthwall streaming status left unchanged (${(err as Error).message})`,
        );
        this.deps.warn(
          "⚠️ Cannot reach the Twitch API: the shop's streaming status stays as it is. Mods can set it with !stream live / offline.",
        );
      }
      return;
    }
    if (this.helixDown) {
      this.helixDown = false;
      this.log.info('Twitch API reachable again: auto streaming resumes');
    }
    const now: Seen = live ? 'live' : 'offline';
    if (this.manual && this.manual.seen !== 'unknown' && this.manual.seen !== now) this.manual = undefined;
    else if (this.manual && this.manual.seen === 'unknown') this.manual.seen = now;
    this.seen = now;
    if (this.shop === 'unknown') {
      try {
        const s = await this.deps.status();
        this.shop =
          s.status === 'ONLINE' && (s.broadcasterLogin ?? b.login).toLowerCase() === b.login.toLowerCase()
            ? 'started'
            : s.status === 'ONLINE'
              ? 'unknown'
              : 'ended';
      } catch (err) {
        this.log.warn({ err }, 'could not read the Fourthwall streaming status; will try again');
        return;
      }
    }
    if (this.manual || this.holds > 0) return;
    if (live) {
      this.offlineSince = undefined;
      if (this.shop !== 'started') {
        const thumbnailUrl = fillThumbnail(live.thumbnailTemplate);
        if (
          await this.call('start', () =>
            this.deps.start({ broadcasterId: b.id, broadcasterLogin: b.login, thumbnailUrl }),
          )
        ) {
          this.shop = 'started';
          this.deps.announce?.('The stream is live: Fourthwall now shows it as LIVE, gifting is open in the shop.');
        }
      }
      return;
    }
    if (this.shop !== 'started') return;
    this.offlineSince ??= this.o.clock.now();
    if (this.o.clock.now() - this.offlineSince < this.o.graceMs) return;
    if (await this.call('end', () => this.deps.end())) {
      this.shop = 'ended';
      this.offlineSince = undefined;
      this.deps.announce?.('The stream ended: Fourthwall now shows it as offline. Draws still open run to their end.');
    }
  }

  /** One Fourthwall call (retried by the client, not here); false (and a warning) when it failed. */
  private async call(kind: 'start' | 'end', fn: () => Promise<unknown>): Promise<boolean> {
    try {
      this.sent[kind]++;
      await fn();
    } catch (err) {
      this.log.warn(
        { err, kind },
        `could not set Fourthwall streaming ${kind === 'start' ? 'started' : 'ended'}; trying again on the next poll`,
      );
      if (this.failing.has(kind)) return false; // said once per failure streak
      this.failing.add(kind);
      this.deps.warn(
        `⚠️ Could not tell Fourthwall the stream ${kind === 'start' ? 'is live' : 'ended'} (${(err as Error).message}); trying again shortly.`,
      );
      return false;
    }
    this.failing.delete(kind);
    this.log.info(
      { kind },
      kind === 'start'
        ? 'the stream is live: Fourthwall streaming started'
        : 'the stream ended: Fourthwall streaming ended',
    );
    return true;
  }
}
