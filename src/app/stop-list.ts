/**
 * The running bot's one ordered list of things to stop. `STOP_ORDER` declares the order, first to
 * last, and why; startBot registers each part's stop under its name as the part is built, and both
 * a start-up that failed (or was stopped) and `Bot.stop()` run the same list: a part that was never
 * built is skipped, and the chat drain is registered only once the start-up ended.
 *
 * Contract: `run` stops the registered parts one after another in STOP_ORDER, whatever order they
 * were registered in, and never rejects. A close that fails is logged and the stop goes on; with
 * `closeMs` (a failed start-up) each close is waited for at most that long. A save (the open draws,
 * the history) is always awaited in full; its failure is logged and returned as one line saying what
 * could not be saved (the caller raises StopIncomplete).
 */
import type { Logger } from '../logging/index.js';

/** The order a bot stops in; each line says what must be done before the next. */
const STOP_ORDER = [
  'chat-connect', // a start-up chat connection (token check, retries) still in flight is aborted
  'pages', // overlay and dashboard: no more pushes
  'http', // no webhook, page or claim request comes in from here on
  'poller', // no catch-up poll hands in an event
  'intake', // the events being handled, and their retries, end
  'shop-features', // alerts, merch train, catalog, promotions, order feed
  'delivery', // whispers, reminders, redemption poll; then its writes in flight end (before the history flush)
  'twitch-events', // channel points and bits take nothing more; settles in flight end; EventSub sockets closed
  'engine', // the open draws journaled (a save)
  'beacon', // the drand client
  'history', // nothing writes to it any more: flushed (a save) before any slow call
  'drain', // after a full start only: the outbox drained and streaming ended, side by side, bounded
  'chat', // leave the channel
  'twitch-api', // the stream watch poll and the Helix client
  'twitch-auth', // token refresh and its connection pool
  'fourthwall', // the Fourthwall client's connection pool, last: the drain may still call it
] as const;

type StopName = (typeof STOP_ORDER)[number];

interface Part {
  stop: () => unknown;
  /** For a save: what could not be saved when it fails ("the open draws"). */
  saves?: string;
}

/** Waits for `p` at most `ms` (real time); never rejects. */
export function withTimeout(p: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    t.unref();
    p.then(
      () => (clearTimeout(t), resolve()),
      () => (clearTimeout(t), resolve()),
    );
  });
}

export class StopList {
  private readonly parts = new Map<StopName, Part>();

  /** Registers a close: its failure is logged and the stop goes on. */
  close(name: StopName, stop: () => unknown): void {
    this.add(name, { stop });
  }

  /** Registers a save: awaited in full; its failure is reported as "`what` could not be saved". */
  save(name: StopName, what: string, stop: () => Promise<unknown>): void {
    this.add(name, { stop, saves: what });
  }

  /** Stops every registered part in STOP_ORDER; resolves with what could not be saved. */
  async run(log: Logger, options: { closeMs?: number } = {}): Promise<string[]> {
    const unsaved: string[] = [];
    for (const name of STOP_ORDER) {
      const part = this.parts.get(name);
      if (!part) continue;
      const done = Promise.resolve().then(part.stop);
      if (part.saves !== undefined) {
        const what = part.saves;
        await done.catch((err: unknown) => {
          log.error({ err }, `${what} could not be saved`);
          unsaved.push(`${what} could not be saved (${(err as Error).message})`);
        });
        continue;
      }
      const closed = done.catch((err: unknown) => log.warn({ err, part: name }, `${name}: stop failed`));
      await (options.closeMs === undefined ? closed : withTimeout(closed, options.closeMs));
    }
    return unsaved;
  }

  private add(name: StopName, part: Part): void {
    if (this.parts.has(name)) throw new Error(`stop list: ${name} registered twice`);
    this.parts.set(name, part);
  }
}
