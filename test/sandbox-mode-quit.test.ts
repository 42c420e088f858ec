/**
 * Interactive sandbox mode: `/quit` (and Ctrl+D, the end of input) must leave the input stream
 * paused once the prompt is closed. A prompt redrawn after the interface closed would resume
 * stdin, and a resumed terminal keeps the process alive after "Stopped." until the user presses
 * Ctrl+D or Ctrl+C.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { demoInProcess } from './support/sandbox-mode-spawn.js';

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'giftdrop-sandbox-quit-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('interactive sandbox mode, /quit', () => {
  it('shuts down and leaves the input paused (nothing keeps the process alive)', async () => {
    const config = loadConfig({ env: { DATA_DIR: join(dir, 'data'), HTTP_PORT: '0' }, dotenv: false, cwd: dir });
    const { input, done: running, out } = demoInProcess(config, { script: false });
    input.write('/quit\n');
    expect(await running).toBe(0);
    expect(out()).toContain('Stopped.');
    expect(input.isPaused()).toBe(true);
  }, 30_000);
});
