/**
 * The seed vault: unrevealed draw seeds, kept owner-only until the draw reveals them.
 *
 *   <dataDir>/seeds/          directory, mode 0700
 *   <dataDir>/seeds/<id>.seed the 64-hex seed of a draw whose seed is not revealed yet, mode 0600
 *
 * Contract: `put` writes durably (disk.ts writeAtomic: temp 0600, sync, rename, directory sync);
 * `get` returns undefined when there is no valid file; `discard` removes it (missing is fine).
 * history.json never holds an unrevealed seed (repository.ts moves `pendingSeed` here once, and
 * migrates an old history that still holds one when it opens it), so no
 * export or copy of the history can leak one. Does not: decide when a seed is revealed.
 */
import { join } from 'node:path';
import type { Disk } from './disk.js';
import { fileStem } from './files.js';

export class SeedVault {
  readonly dir: string;

  constructor(
    private readonly disk: Disk,
    dataDir: string,
  ) {
    this.dir = join(dataDir, 'seeds');
  }

  file(id: string): string {
    return join(this.dir, `${fileStem(id)}.seed`);
  }

  async put(id: string, seedHex: string): Promise<void> {
    await this.disk.mkdirs(this.dir);
    await this.disk.writeAtomic(this.file(id), `${seedHex}\n`);
  }

  async get(id: string): Promise<string | undefined> {
    const text = (await this.disk.readText(this.file(id)))?.trim();
    return text && /^[0-9a-f]{64}$/i.test(text) ? text.toLowerCase() : undefined;
  }

  async discard(id: string): Promise<void> {
    await this.disk.remove(this.file(id));
  }
}
