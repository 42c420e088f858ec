/**
 * The bot's channel-point reward on disk: DATA_DIR/channel-points.json `{ version: 1, rewardId }`,
 * written whole by the storage's atomic write (files.ts) when the bot creates its reward, read at
 * start. So a restart finds its own reward again (by id, never by title: a reward with the same
 * title made by another app is not the bot's). A file that does not read back is an error naming
 * it (the caller logs it and creates a new reward).
 * Contract (RewardStore, twitch/channel-points/entries.ts): `load` is undefined when there is no
 * file; `save` resolves once the id is on the disk.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { parseJsonFile, readIfExists, writeFileAtomic } from './files.js';

const schema = z.object({ version: z.literal(1), rewardId: z.string().min(1) });

const CHANNEL_POINTS_FILE = 'channel-points.json';

export function channelPointsFile(dataDir: string): {
  load(): Promise<string | undefined>;
  save(rewardId: string): Promise<void>;
} {
  const file = join(dataDir, CHANNEL_POINTS_FILE);
  return {
    async load() {
      const text = await readIfExists(file);
      return text === undefined ? undefined : parseJsonFile(file, text, schema).rewardId;
    },
    save: (rewardId) => writeFileAtomic(file, JSON.stringify({ version: 1, rewardId })),
  };
}
