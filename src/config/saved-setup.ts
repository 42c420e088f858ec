/**
 * What the setup page saved (DATA_DIR/setup.json, owner-only, written by src/setup/ through the
 * disk protocol) as the configuration reads it: a layer of environment values UNDER the real
 * environment and `.env` (which win, value by value), used once the streamer finished the page
 * ("Go live": `live: true`). The Twitch tokens are not here (src/twitch/login-store.ts); `botLogin`
 * says a bot login was saved, which stands for TWITCH_TOKEN in the mode and credential checks.
 * Also the Twitch client id built into a release (`GIFTDROP_TWITCH_CLIENT_ID`, set by the release
 * workflow at package time): the Public application the device code logins use unless
 * TWITCH_CLIENT_ID or the page names another.
 * Pure reading: this module writes nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

export const SETUP_FILE = 'setup.json';

/** The variables the page may set (anything else in the file is ignored). */
export const SAVED_ENV_NAMES = [
  'TWITCH_CHANNEL',
  'TWITCH_USERNAME',
  'TWITCH_CLIENT_ID',
  'FOURTHWALL_USERNAME',
  'FOURTHWALL_PASSWORD',
  'FOURTHWALL_WEBHOOK_SECRET',
  'GIFTDROP_PUBLIC_URL',
] as const;
export type SavedEnvName = (typeof SAVED_ENV_NAMES)[number];

const SavedSetupSchema = z.object({
  version: z.literal(1),
  /** The page's values, named as the environment variables they stand for. */
  env: z.record(z.string(), z.string()),
  /** The streamer pressed "Go live": live mode uses these values. */
  live: z.boolean(),
  /** A bot login was saved (twitch-logins.jsonl). */
  botLogin: z.boolean().default(false),
  savedAt: z.string(),
});
export type SavedSetup = z.infer<typeof SavedSetupSchema>;

/** The page's saved setup in `dataRoot`, or undefined (none yet); `problem` when the file is damaged. */
export function readSavedSetup(dataRoot: string): { setup?: SavedSetup; problem?: string } {
  const file = join(dataRoot, SETUP_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    return { problem: `${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
  try {
    const setup = SavedSetupSchema.parse(JSON.parse(text));
    const env: Record<string, string> = {};
    for (const name of SAVED_ENV_NAMES) {
      const v = setup.env[name];
      if (typeof v === 'string' && v.trim()) env[name] = v;
    }
    return { setup: { ...setup, env } };
  } catch {
    return {
      problem: `${file} is damaged (not the setup page's JSON): open the setup page and save again, or delete the file`,
    };
  }
}

/** The Twitch client id built into this release (scripts/package.mjs defines it); undefined in a clone. */
declare const GIFTDROP_TWITCH_CLIENT_ID: string | undefined;

export function builtInTwitchClientId(): string | undefined {
  return typeof GIFTDROP_TWITCH_CLIENT_ID === 'string' && GIFTDROP_TWITCH_CLIENT_ID
    ? GIFTDROP_TWITCH_CLIENT_ID
    : undefined;
}
