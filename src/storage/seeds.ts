/**
 * The seed vault: unrevealed draw seeds, kept owner-only until the draw reveals them.
 *
 *   <dataDir>/seeds/          directory, mode 0700
 *   <dataDir>/seeds/<id>.seed the 64-hex seed of a draw whose seed is not revealed yet, mode 0600
 *
 * Contract: `put` writes atomically (temp file created 0600, fsync, rename) and re-applies 0600;
 * `get` returns undefined when there is no valid file; `discard` removes it (missing is fine).
 * history.json never holds an unrevealed seed (repository.ts moves `pendingSeed` here), so no
 * export or copy of the history can leak one. Does not: decide when a seed is revealed.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileStem, readIfExists } from './files.js';

export const SEED_FILE_MODE = 0o600;
export const SEED_DIR_MODE = 0o700;

export class SeedVault {
  readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'seeds');
  }

  file(id: string): string {
    return join(this.dir, `${fileStem(id)}.seed`);
  }

  async put(id: string, seedHex: string): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: SEED_DIR_MODE });
    await chmod(this.dir, SEED_DIR_MODE);
    const target = this.file(id);
    const temp = join(this.dir, `.${fileStem(id)}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      const handle = await open(temp, 'wx', SEED_FILE_MODE);
      try {
        await handle.writeFile(`${seedHex}\n`, 'utf8');
        await handle.chmod(SEED_FILE_MODE);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true }).catch(() => undefined);
      throw err;
    }
  }

  async get(id: string): Promise<string | undefined> {
    const text = (await readIfExists(this.file(id)))?.trim();
    return text && /^[0-9a-f]{64}$/i.test(text) ? text.toLowerCase() : undefined;
  }

  async discard(id: string): Promise<void> {
    await rm(this.file(id), { force: true });
  }
}
