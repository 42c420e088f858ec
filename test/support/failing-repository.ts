/**
 * Storage fault injection for end-to-end tests: a DrawRepository that forwards every call to the
 * real file repository, except that saves matching an armed rule fail the way a full or broken
 * disk does (an `EIO` error) without writing anything. The bot under test is unchanged; only its
 * storage port misbehaves. Asserts nothing itself.
 */
import type { DrawRecord, FrozenRows } from '../../src/giveaway/model.js';
import type { DrawRepository } from '../../src/giveaway/ports.js';

export class FailingSaves implements DrawRepository {
  /** Records whose save was made to fail. */
  readonly failed: DrawRecord[] = [];
  private rules: { when: (r: DrawRecord) => boolean; remaining: number }[] = [];

  constructor(private readonly inner: DrawRepository) {}

  /** The next `times` saves of a record matching `when` fail with EIO. */
  failNext(when: (r: DrawRecord) => boolean, times = 1): void {
    this.rules.push({ when, remaining: times });
  }

  async saveDraw(record: DrawRecord, frozenRows?: FrozenRows): Promise<void> {
    const rule = this.rules.find((r) => r.remaining > 0 && r.when(record));
    if (rule) {
      rule.remaining -= 1;
      this.failed.push(structuredClone(record));
      throw Object.assign(new Error('EIO: i/o error, write (injected)'), { code: 'EIO' });
    }
    return this.inner.saveDraw(record, frozenRows); // the frozen list too (its own file)
  }

  getDraw(id: string) {
    return this.inner.getDraw(id);
  }
  openDraws() {
    return this.inner.openDraws();
  }
  appendEntrantRow(...args: Parameters<DrawRepository['appendEntrantRow']>) {
    return this.inner.appendEntrantRow(...args);
  }
  appendTicketGrant(...args: Parameters<DrawRepository['appendTicketGrant']>) {
    return this.inner.appendTicketGrant(...args);
  }
  listDraws(options?: { limit?: number }) {
    return this.inner.listDraws(options);
  }
  recentWinnerIds(sinceMs: number) {
    return this.inner.recentWinnerIds(sinceMs);
  }
  deliveryOf(drawId: string, userId: string) {
    return this.inner.deliveryOf(drawId, userId);
  }
  markEventProcessed(eventId: string) {
    return this.inner.markEventProcessed(eventId);
  }
  isEventProcessed(eventId: string) {
    return this.inner.isEventProcessed(eventId);
  }
  flush() {
    return this.inner.flush();
  }
  close() {
    return this.inner.close();
  }
}
