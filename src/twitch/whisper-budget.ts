/**
 * Twitch's whisper limits, kept on the injected clock beside the whisper queue (whispers.ts): at
 * most `perSecond` (3) whispers in any second, `perMinute` (100) in any minute, and `newPerDay`
 * (40) distinct recipients in any 24 hours. p-queue's interval model cannot hold these: its windows
 * count task starts on the real clock, and the daily limit is per recipient (a whisper to someone
 * already whispered today costs no new-recipient slot), not per task.
 *
 * Contract: `waitMs(to, now)` says how long until a whisper to `to` may go (0: now); `spend(to,
 * now)` counts one (when Twitch answered it, never earlier than Twitch counted it); `saved()` and
 * the constructor's `saved` carry the counts across a restart, so a restart never hands out a
 * second day's budget (whisper-file.ts persists them under DATA_DIR).
 */

export interface WhisperLimits {
  perSecond: number;
  perMinute: number;
  newPerDay: number;
}

export const TWITCH_WHISPER_LIMITS: WhisperLimits = { perSecond: 3, perMinute: 100, newPerDay: 40 };

/** The counts that survive a restart: when each whisper of the last minute went, and each recipient of the last day. */
export interface SavedBudget {
  sent: number[];
  recipients: [string, number][];
}

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

export class WhisperBudget {
  private readonly sent: number[];
  /** Recipient -> when first whispered (rolling 24 h). */
  private readonly recipients: Map<string, number>;

  constructor(
    private readonly limits: WhisperLimits,
    saved?: SavedBudget,
  ) {
    this.sent = [...(saved?.sent ?? [])].sort((a, b) => a - b);
    this.recipients = new Map(saved?.recipients ?? []);
  }

  /** How long until a whisper to `to` may go under the limits (0: now). */
  waitMs(to: string, now: number): number {
    this.forget(now);
    let wait = 0;
    const lastSecond = this.sent.filter((t) => now - t < 1000);
    if (lastSecond.length >= this.limits.perSecond)
      wait = Math.max(wait, lastSecond[lastSecond.length - this.limits.perSecond]! + 1000 - now);
    if (this.sent.length >= this.limits.perMinute)
      wait = Math.max(wait, this.sent[this.sent.length - this.limits.perMinute]! + MINUTE_MS - now);
    if (!this.recipients.has(to) && this.recipients.size >= this.limits.newPerDay) {
      const oldest = Math.min(...this.recipients.values());
      wait = Math.max(wait, oldest + DAY_MS - now);
    }
    return wait;
  }

  spend(to: string, now: number): void {
    this.sent.push(now);
    if (!this.recipients.has(to)) this.recipients.set(to, now);
  }

  saved(): SavedBudget {
    return { sent: [...this.sent], recipients: [...this.recipients] };
  }

  private forget(now: number): void {
    for (const [id, at] of this.recipients) if (now - at >= DAY_MS) this.recipients.delete(id);
    while (this.sent.length && now - this.sent[0]! >= MINUTE_MS) this.sent.shift();
  }
}
