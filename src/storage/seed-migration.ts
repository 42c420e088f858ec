/**
 * The one-time move of `pendingSeed` out of history files written before the seed vault
 * (seeds.ts): older versions kept an open draw's unrevealed seed inside history.json.
 *
 * Contract: `migratePendingSeeds(db, seeds, readOnly)` is called by FileDrawRepository.open with
 * the loaded history; afterwards no record in memory carries `pendingSeed`, and (unless read-only)
 * neither history generation on disk does. Does not: read or write seeds at any other time.
 */
import type { Low } from 'lowdb';
import type { DrawRecord } from '../giveaway/model.js';
import type { SeedVault } from './seeds.js';
import type { HistoryData } from './schemas.js';

const FINAL_STATUSES = new Set<DrawRecord['status']>(['finished', 'cancelled', 'failed']);

/**
 * Moves every `pendingSeed` left in an old history.json into the seed vault (durably, before the
 * history drops it), then rewrites the history twice so neither history.json nor history.json.bak
 * holds it. A sealed draw's (revealed or final) stale `pendingSeed` is just dropped. Read-only
 * mode changes no file: the seeds are only dropped from the records in memory, so nothing read
 * through this repository (listDraws, the export) carries one.
 */
export async function migratePendingSeeds(db: Low<HistoryData>, seeds: SeedVault, readOnly: boolean): Promise<void> {
  const old = db.data.draws.filter((r) => r.pendingSeed !== undefined);
  if (old.length === 0) return;
  for (const record of old) {
    const sealed = record.fairness.seed !== undefined || FINAL_STATUSES.has(record.status);
    if (!readOnly && !sealed && (await seeds.get(record.id)) !== record.pendingSeed) {
      await seeds.put(record.id, record.pendingSeed!);
    }
    delete record.pendingSeed;
  }
  if (readOnly) return;
  await db.write(); // history.json without the seeds; .bak is still the old generation
  await db.write(); // .bak becomes that clean generation too
}
