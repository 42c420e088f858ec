/**
 * A real headless Chromium for the browser tests: Debian's `chromium` (/usr/bin/chromium, or
 * GIFTDROP_CHROMIUM), driven by playwright-core, with the flags that keep it off the network and a
 * fresh empty profile per launch (removed on close). Screenshots go to SCREENSHOT_DIR
 * (GIFTDROP_SCREENSHOTS, default test-output/screenshots in the project, git-ignored); the
 * folder's path is printed once so CI logs show it.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { PROJECT_ROOT } from './e2e-stack.js';

const CHROMIUM_PATH = process.env.GIFTDROP_CHROMIUM || '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM_PATH);
const SCREENSHOT_DIR = process.env.GIFTDROP_SCREENSHOTS || join(PROJECT_ROOT, 'test-output', 'screenshots');

if (!HAS_CHROMIUM) {
  console.warn(
    `\n!!! BROWSER TESTS SKIPPED: no Chromium at ${CHROMIUM_PATH}. Install it with: apt-get install -y chromium (or set GIFTDROP_CHROMIUM) !!!\n`,
  );
}

let announced = false;

/** The screenshot folder (created), printed once. */
export function screenshotDir(): string {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  if (!announced) {
    announced = true;
    console.log(`browser test screenshots: ${SCREENSHOT_DIR}`);
  }
  return SCREENSHOT_DIR;
}

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A persistent-context Chromium on a new empty profile, 1920x1080, downloads accepted. */
export async function launchBrowser(): Promise<TestBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'giftdrop-chromium-'));
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
      viewport: { width: 1920, height: 1080 },
      acceptDownloads: true,
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
