/** Helpers for storage tests: temp data dirs, open draw records, predicate waits. */
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DrawRecord } from '../../src/giveaway/model.js';

export async function tempDataDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'giftdrop-storage-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export function openRecord(id: string, openedAt = '2026-01-01T00:00:00.000Z'): DrawRecord {
  const opened = Date.parse(openedAt);
  return {
    id,
    kind: 'link-giveaway',
    status: 'open',
    source: { packageId: `pkg_${id}` },
    offer: { id: 'prod_1', name: 'Sticker pack' },
    gifts: 1,
    openedAt,
    closesAt: new Date(opened + 60_000).toISOString(),
    entrants: 0,
    winners: [],
    fairness: { commitment: 'a'.repeat(64), algorithm: 'giftdrop-hmac-sha256-v1' },
  };
}

/** Resolves once `predicate` holds, checking on every macrotask turn; rejects after `timeoutMs`. */
export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * The history log of `dir` (history.jsonl) as a reader sees it: the header, then per draw id the
 * last record saved (in the order draws first appeared), and how many record lines it holds.
 */
export async function readHistoryLog(
  dir: string,
): Promise<{ header: unknown; draws: Record<string, unknown>[]; lines: number; text: string }> {
  const text = await readFile(join(dir, 'history.jsonl'), 'utf8');
  const [first, ...rest] = text.split('\n').filter((l) => l.trim() !== '');
  const byId = new Map<string, Record<string, unknown>>();
  for (const line of rest) {
    const record = JSON.parse(line) as Record<string, unknown>;
    byId.set(record['id'] as string, record);
  }
  return { header: JSON.parse(first!), draws: [...byId.values()], lines: rest.length, text };
}

/** The parts of a stored record the tampering tests edit. */
type TamperedRecord = Record<string, unknown> & { fairness: { seed?: string; beacon?: Record<string, unknown> } };

/** Saves an edited copy of draw `id` into `dir`'s history log as a tamperer would (a later line wins). */
export async function tamperHistory(dir: string, id: string, edit: (record: TamperedRecord) => void): Promise<void> {
  const record = (await readHistoryLog(dir)).draws.find((d) => d['id'] === id) as TamperedRecord | undefined;
  if (!record) throw new Error(`tamperHistory: no draw ${id} in ${dir}`);
  edit(record);
  await appendFile(join(dir, 'history.jsonl'), `${JSON.stringify(record)}\n`);
}
