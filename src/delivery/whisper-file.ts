/**
 * The whisper queue and Twitch's whisper budget on disk: DATA_DIR/whispers.json, written whole by
 * the storage's atomic write (src/storage/files.ts: temp file, sync, rename, directory sync) each
 * time the queue or the counts change, read once at start. So a restart keeps the whispers still
 * waiting (sent after it, without anyone asking again) and the recipients of the last 24 hours
 * (no second day's budget after a restart). The file holds whisper texts (claim page or link),
 * like the history: owner-only, never logged.
 * Contract (WhisperStore, twitch/whispers.ts): `load` is undefined for a missing file and for one
 * that does not read back (logged by the caller; the queue starts empty rather than not at all);
 * `save` resolves once the state is on the disk.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { readIfExists, writeFileAtomic } from '../storage/index.js';
import type { WhisperState, WhisperStore } from '../twitch/whispers.js';

const stateSchema = z.object({
  version: z.literal(1),
  queued: z.array(z.object({ to: z.string(), text: z.string() })),
  notBefore: z.number(),
  budget: z.object({ sent: z.array(z.number()), recipients: z.array(z.tuple([z.string(), z.number()])) }),
});

export const WHISPER_FILE = 'whispers.json';

export function whisperFile(dataDir: string): WhisperStore {
  const file = join(dataDir, WHISPER_FILE);
  return {
    async load() {
      const text = await readIfExists(file);
      if (text === undefined) return undefined;
      const parsed = stateSchema.safeParse(JSON.parse(text));
      if (!parsed.success) throw new Error(`${file} does not read back as the whisper queue`);
      const { queued, notBefore, budget } = parsed.data;
      return { queued, notBefore, budget };
    },
    save: (state: WhisperState) => writeFileAtomic(file, JSON.stringify({ version: 1, ...state })),
  };
}
