/**
 * Opening a draw: a journaled record with a fresh seed, exactly once per id, then the machine's
 * `saved` trigger (announce, schedule the close). The flows (flows/*.ts) say what opens a draw
 * and build the record's parts.
 *
 * Contract: an id that is active, being opened (a synchronous guard, set before the first await)
 * or already in storage is ignored. A new draw gets a fresh seed whose commitment is stored before
 * the draw is announced; it is saved before it becomes active, and a failed save opens nothing:
 * the operator is told and the returned promise rejects, so the caller (the event intake) leaves
 * the event unprocessed and retries it. A draw with no available gifts is not opened. Does not:
 * collect entries, close or pick, or validate moderator input.
 */
import type { FlowContext } from './context.js';
import { FAIRNESS_ALGORITHM, newSeed } from '../fairness/index.js';
import type { DrawRecord } from './model.js';
import { DrawSession } from './session.js';

/** The parts of a new record that depend on what opened it. */
export type DrawSeed = Pick<DrawRecord, 'kind' | 'source' | 'offer' | 'gifts'> & Partial<DrawRecord>;

/**
 * Opens draw `id` with the record parts `build` returns; once per id. It closes at an absolute
 * time (Fourthwall's draws), or a full window after the moment it opens (purchases, link giveaways).
 */
export function openDraw(
  c: FlowContext,
  id: string,
  closes: number | { windowMs: number },
  build: () => DrawSeed,
): Promise<void> {
  const { draws } = c;
  if (c.work.isStopped() || draws.isKnownLive(id)) return Promise.resolve();
  draws.opening.add(id);
  return c.work.track(
    (async () => {
      try {
        if (await c.repo.getDraw(id)) {
          c.logger.info({ drawId: id }, 'draw already known: ignored');
          return;
        }
        const { seed, commitment } = newSeed(c.random);
        const now = c.clock.now();
        const record: DrawRecord = {
          id,
          status: 'open',
          openedAt: new Date(now).toISOString(),
          closesAt: new Date(typeof closes === 'number' ? Math.max(now, closes) : now + closes.windowMs).toISOString(),
          entrants: 0,
          winners: [],
          fairness: { commitment, algorithm: FAIRNESS_ALGORITHM },
          pendingSeed: seed.toString('hex'),
          ...build(),
        };
        if (record.gifts < 1) {
          c.logger.warn({ drawId: id }, 'nothing to give away (no available gifts): not opened');
          c.operator.notify(`Draw ${id} (${record.offer.name}) has no available gifts; not opened.`);
          return;
        }
        const s = new DrawSession(record, seed, [], 'opening');
        await s.persist(c.repo);
        if (c.work.isStopped()) return;
        draws.active.set(id, s);
        void c.fire(s, { name: 'saved' });
      } catch (err) {
        c.logger.error({ drawId: id, err }, 'could not open the draw');
        c.operator.notify(`Could not open draw ${id}: the draw journal could not be written.`);
        throw err;
      } finally {
        draws.opening.delete(id);
      }
    })(),
  );
}
