/**
 * What the log says about rejected requests on the public surface (webhooks by default; the claim
 * page's refused logins too), at a cost that does not grow with junk: the URLs are public (a
 * tunnel), and 2,000 forged requests a second must not become 2,000 warn lines a second. The first rejection of each kind in a window is a warn line; the others of that
 * window are debug lines, and the window ends with one warn line counting them. Every rejection
 * still produces exactly one line at debug level (same message), so nothing is invisible.
 *
 * Contract: `new RejectionLog(log, windowMs, { messages, what })` (webhook kinds and wording by
 * default); `note(kind, fields)` never throws; `close()` writes the pending count and stops the
 * timer (the timer never keeps the process alive).
 */
import type { Logger } from '../logging/index.js';

export type RejectionKind =
  'signature' | 'too-large' | 'payload' | 'busy' | 'too-old' | 'from-the-future' | 'incomplete';

const WEBHOOK_MESSAGES: Record<RejectionKind, string> = {
  signature: 'webhook rejected: signature not verified',
  'too-large': 'webhook rejected: body too large',
  payload: 'webhook rejected: bad payload',
  busy: 'webhook cut: the bodies being read held too many bytes at once (503, Fourthwall retries)',
  'too-old':
    "webhook ignored: the event is older than the accepted age (a replay, or this machine's clock is off; the catch-up poll fetches missed events)",
  'from-the-future':
    "webhook ignored: the event is dated ahead of this machine's clock by more than the accepted skew (set the clock right; the catch-up poll fetches missed events)",
  incomplete: 'webhook dropped: the client went away or was too slow before sending the whole body',
};

/** Coalesced warn lines for one kind of refusal (see the module comment); webhooks by default. */
export class RejectionLog<K extends string = RejectionKind> {
  private readonly counts = new Map<K, number>();
  private timer: NodeJS.Timeout | undefined;
  private readonly messages: Record<K, string>;
  /** What the count line calls the rejected requests ("webhook request(s)"). */
  private readonly what: string;

  constructor(
    private readonly log: Logger,
    private readonly windowMs = 60_000,
    o: { messages?: Record<K, string>; what?: string } = {},
  ) {
    this.messages = o.messages ?? (WEBHOOK_MESSAGES as Record<K, string>);
    this.what = o.what ?? 'webhook request(s)';
  }

  note(kind: K, fields: Record<string, unknown>): void {
    const seen = this.counts.get(kind);
    if (seen === undefined) {
      this.counts.set(kind, 0);
      this.log.warn(fields, this.messages[kind]);
      this.timer ??= setTimeout(() => this.flush(), this.windowMs).unref();
      return;
    }
    this.counts.set(kind, seen + 1);
    this.log.debug(fields, this.messages[kind]);
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
      `${total} more ${this.what} rejected in the last ${seconds} s (${held.map(([k, n]) => `${k}: ${n}`).join(', ')}); each is at debug level`,
    );
  }

  close(): void {
    this.flush();
  }
}
