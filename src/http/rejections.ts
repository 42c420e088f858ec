/**
 * What the log says about rejected webhook requests, at a cost that does not grow with junk: the
 * webhook URL is public (a tunnel), and 2,000 forged requests a second must not become 2,000 warn
 * lines a second. The first rejection of each kind in a window is a warn line; the others of that
 * window are debug lines, and the window ends with one warn line counting them. Every rejection
 * still produces exactly one line at debug level (same message), so nothing is invisible.
 *
 * Contract: `note(kind, fields)` never throws; `close()` writes the pending count and stops the
 * timer (the timer never keeps the process alive).
 */
import type { Logger } from '../logging/index.js';

export type RejectionKind = 'signature' | 'too-large' | 'payload' | 'busy' | 'too-old';

const MESSAGES: Record<RejectionKind, string> = {
  signature: 'webhook rejected: signature not verified',
  'too-large': 'webhook rejected: body too large',
  payload: 'webhook rejected: bad payload',
  busy: 'webhook refused for now: too many bodies being read at once (503, Fourthwall retries)',
  'too-old': "webhook ignored: the event is older than the accepted age (a replay, or this machine's clock is off; the catch-up poll fetches missed events)",
};

export class RejectionLog {
  private readonly counts = new Map<RejectionKind, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: Logger,
    private readonly windowMs = 60_000,
  ) {}

  note(kind: RejectionKind, fields: Record<string, unknown>): void {
    const seen = this.counts.get(kind);
    if (seen === undefined) {
      this.counts.set(kind, 0);
      this.log.warn(fields, MESSAGES[kind]);
      this.timer ??= setTimeout(() => this.flush(), this.windowMs).unref();
      return;
    }
    this.counts.set(kind, seen + 1);
    this.log.debug(fields, MESSAGES[kind]);
  }

  /** Ends the window: one warn line with the counts the window held back, if any. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const held = [...this.counts].filter(([, n]) => n > 0);
    this.counts.clear();
    if (held.length === 0) return;
    const total = held.reduce((sum, [, n]) => sum + n, 0);
    const seconds = Math.round(this.windowMs / 1000);
    this.log.warn(
      Object.fromEntries(held),
      `${total} more webhook request(s) rejected in the last ${seconds} s (${held.map(([k, n]) => `${k}: ${n}`).join(', ')}); each is at debug level`,
    );
  }

  close(): void {
    this.flush();
  }
}
