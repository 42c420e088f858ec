/** The beacon settings through the one config module: defaults, a bad value named, the relay URL. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { configProblems } from './support/config-fixtures.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'giftdrop-beacon-config-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('fairness settings', () => {
  it('default to the drand beacon, a 10 s wait and no relay override', () => {
    const c = loadConfig({ env: {}, cwd: dir, dotenv: false });
    expect(c.settings.fairness).toEqual({ beacon: 'drand', beaconWaitSeconds: 10 });
    expect(c.beaconUrl).toBeUndefined();
  });

  it('read the settings file and GIFTDROP_BEACON_URL (trailing slash dropped)', async () => {
    const file = join(dir, 'ok.json');
    await writeFile(file, JSON.stringify({ fairness: { beacon: 'off', beaconWaitSeconds: 30 } }));
    const c = loadConfig({
      env: { GIFTDROP_CONFIG: file, GIFTDROP_BEACON_URL: 'https://relay.example/' },
      cwd: dir,
      dotenv: false,
    });
    expect(c.settings.fairness).toEqual({ beacon: 'off', beaconWaitSeconds: 30 });
    expect(c.beaconUrl).toBe('https://relay.example');
  });

  it('name a bad beacon value, a wait out of range and a bad relay URL', async () => {
    const file = join(dir, 'bad.json');
    await writeFile(file, JSON.stringify({ fairness: { beacon: 'maybe', beaconWaitSeconds: 0 } }));
    const fileProblems = configProblems(() => loadConfig({ env: { GIFTDROP_CONFIG: file }, cwd: dir, dotenv: false }));
    expect(fileProblems.join('\n')).toMatch(/fairness\.beacon/);
    expect(fileProblems.join('\n')).toMatch(/fairness\.beaconWaitSeconds/);
    const envProblems = configProblems(() =>
      loadConfig({ env: { GIFTDROP_BEACON_URL: 'not a url' }, cwd: dir, dotenv: false }),
    );
    expect(envProblems.join('\n')).toMatch(/GIFTDROP_BEACON_URL/);
  });
});
