/**
 * The ticket journal of open draws: `<dir>/<draw id stem>.tickets.jsonl`, one JSON TicketGrant per
 * line (channel-point redemptions and bits: giveaway/tickets.ts), beside the entry journal
 * (journal.ts, whose file listing skips these names). Grants are rare (each is a viewer's
 * redemption or bits), so every append is written and synced at once (disk.ts protocol: the file
 * created 0600 with its directory synced first) and `append` resolves only then: a redemption is
 * marked fulfilled at Twitch after its entry is on disk. Appends to one draw's file run in call
 * order; those that arrive while a write is in flight share the next write and sync (group commit). Reading tolerates a torn last line (a crash mid-write) and skips other unreadable lines
 * with a warning naming the draw and the line; a later append first ends a torn line. Does not:
 * decide what a grant means (giveaway/tickets.ts), or buffer.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { TicketGrant } from '../giveaway/model.js';
import type { AppendFile, Disk } from './disk.js';
import { fileStem, idFromStem } from './files.js';

const SUFFIX = '.tickets.jsonl';

const grantSchema = z.object({
  userId: z.string().min(1),
  login: z.string(),
  displayName: z.string(),
  source: z.enum(['points', 'bits']),
  ref: z.string().min(1),
  tickets: z.number().int().nonnegative(),
  bits: z.number().int().nonnegative().optional(),
  at: z.number(),
  roles: z.object({ subscriber: z.boolean(), moderator: z.boolean() }).optional(),
});

export class TicketJournal {
  private readonly handles = new Map<string, Promise<{ handle: AppendFile; needsNewline: boolean }>>();
  private readonly chains = new Map<string, Promise<void>>();
  /** Per draw: lines waiting for the next write, and their callers. */
  private readonly waiting = new Map<
    string,
    { lines: Buffer[]; done: { resolve: () => void; reject: (err: unknown) => void }[] }
  >();

  constructor(private readonly o: { disk: Disk; dir: string; logger: Logger }) {}

  private fileOf(drawId: string): string {
    return join(this.o.dir, fileStem(drawId) + SUFFIX);
  }

  /**
   * Writes and syncs one grant line; resolves once it is on disk. Lines appended while a write of
   * the same draw is in flight go out together in the next one (one append, one datasync: a group
   * commit), so a burst of redemptions costs a few syncs, not one each.
   */
  append(drawId: string, grant: TicketGrant): Promise<void> {
    const line = Buffer.from(`${JSON.stringify(grant)}\n`, 'utf8');
    return new Promise<void>((resolve, reject) => {
      let batch = this.waiting.get(drawId);
      if (!batch) {
        this.waiting.set(drawId, (batch = { lines: [], done: [] }));
        void this.inOrder(drawId, () => this.writeBatch(drawId)).catch(() => undefined);
      }
      batch.lines.push(line);
      batch.done.push({ resolve, reject });
    });
  }

  /** Writes the draw's waiting lines in one append and one datasync; tells each of their callers. */
  private async writeBatch(drawId: string): Promise<void> {
    const batch = this.waiting.get(drawId);
    this.waiting.delete(drawId);
    if (!batch) return;
    try {
      const entry = await this.handleOf(drawId);
      try {
        const bytes = Buffer.concat(batch.lines);
        await entry.handle.append(entry.needsNewline ? Buffer.concat([Buffer.from('\n'), bytes]) : bytes);
        entry.needsNewline = false;
        await entry.handle.datasync();
      } catch (err) {
        // The next append opens the file again (and ends a line this one may have torn).
        this.handles.delete(drawId);
        await entry.handle.close().catch(() => undefined);
        throw err;
      }
      for (const d of batch.done) d.resolve();
    } catch (err) {
      for (const d of batch.done) d.reject(err);
    }
  }

  /** The draw's grants in file order. */
  async read(drawId: string): Promise<TicketGrant[]> {
    await this.chains.get(drawId);
    const text = await this.o.disk.readText(this.fileOf(drawId));
    if (text === undefined) return [];
    const lines = text.split('\n');
    const out: TicketGrant[] = [];
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        parsed = undefined;
      }
      const g = grantSchema.safeParse(parsed);
      if (g.success) out.push(g.data);
      else if (i !== lines.length - 1)
        this.o.logger.warn({ drawId, line: i + 1 }, 'skipping an unreadable ticket journal line');
    });
    return out;
  }

  /** Draw ids that have a ticket journal. */
  async drawIds(): Promise<string[]> {
    const ids: string[] = [];
    for (const name of await this.o.disk.list(this.o.dir)) {
      if (!name.endsWith(SUFFIX)) continue;
      const id = idFromStem(name.slice(0, -SUFFIX.length));
      if (id !== undefined) ids.push(id);
    }
    return ids;
  }

  /** Deletes a draw's ticket journal (the draw reached a final state). */
  discard(drawId: string): Promise<void> {
    return this.inOrder(drawId, async () => {
      await this.closeHandle(drawId);
      await this.o.disk.remove(this.fileOf(drawId));
    });
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.chains.values()]);
    for (const id of [...this.handles.keys()]) await this.closeHandle(id).catch(() => undefined);
  }

  private inOrder(drawId: string, work: () => Promise<void>): Promise<void> {
    const run = (this.chains.get(drawId) ?? Promise.resolve()).then(work);
    const settled = run.catch(() => undefined);
    this.chains.set(drawId, settled);
    void settled.then(() => {
      if (this.chains.get(drawId) === settled) this.chains.delete(drawId);
    });
    return run;
  }

  private handleOf(drawId: string): Promise<{ handle: AppendFile; needsNewline: boolean }> {
    let entry = this.handles.get(drawId);
    if (!entry) {
      entry = (async () => {
        const handle = await this.o.disk.openAppend(this.fileOf(drawId));
        const size = await handle.size();
        const needsNewline = size > 0 && (await handle.read(size - 1, 1))[0] !== 0x0a;
        return { handle, needsNewline };
      })();
      this.handles.set(drawId, entry);
      entry.catch(() => this.handles.delete(drawId));
    }
    return entry;
  }

  private async closeHandle(drawId: string): Promise<void> {
    const entry = this.handles.get(drawId);
    this.handles.delete(drawId);
    if (entry) await (await entry).handle.close();
  }
}
