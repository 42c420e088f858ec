/**
 * Headless Debian Chromium (/usr/bin/chromium, or GIFTDROP_CHROMIUM) for the verify page tests,
 * driven by playwright-core with the flags that keep it off the network and a fresh profile per
 * launch (removed on close). When no Chromium exists the browser tests are skipped LOUDLY.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = process.env.GIFTDROP_CHROMIUM || '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM_PATH);

if (!HAS_CHROMIUM) {
  console.warn(`\n!!! VERIFY PAGE BROWSER TESTS SKIPPED: no Chromium at ${CHROMIUM_PATH}. Install it with: apt-get install -y chromium !!!\n`);
}

export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = await mkdtemp(join(tmpdir(), 'giftdrop-verify-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    return {
      context,
      async close() {
        await context.close().catch(() => undefined);
        await rm(profile, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(profile, { recursive: true, force: true });
    throw err;
  }
}
