/**
 * Interactive sandbox mode: `/quit` (and Ctrl+D, the end of input) must leave the input stream
 * paused once the prompt is closed. A prompt redrawn after the interface closed would resume
 * stdin, and a resumed terminal keeps the process alive after "Stopped." until the user presses
 * Ctrl+D or Ctrl+C.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { silentLogger } from '../src/logging/index.js';
import { runSandboxMode } from '../src/local/sandbox-mode.js';

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
    let out = '';
    const output = Object.assign(
      new Writable({
        write(chunk, _enc, cb) {
          out += String(chunk);
          cb();
        },
      }),
      { isTTY: false },
    );
    const input = new PassThrough();
    const running = runSandboxMode({
      config,
      logger: silentLogger(),
      onSignals: () => undefined,
      input,
      output,
      interactive: true,
      colour: false,
      script: false,
    });
    input.write('/quit\n');
    expect(await running).toBe(0);
    expect(out).toContain('Stopped.');
    expect(input.isPaused()).toBe(true);
  }, 30_000);
});
