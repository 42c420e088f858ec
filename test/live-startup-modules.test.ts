/**
 * Live start-up loads no sandbox, demo or CLI code, and nothing readiness does not need: the real
 * entry (`node scripts/run.mjs main`, what `npm start` execs) in live mode against the local
 * servers, with a module-resolve hook (test/support/record-modules.mjs) recording every module it
 * loads and marking when the HTTP server (webhooks, /healthz) started listening. The product
 * feed's XML parser loads only after that mark; the chat client (tmi.js) and the HTTP client
 * (undici, for the token check) load with the bot's start, since chat connects beside the rest of
 * it; the BLS code (@noble/curves) not at all until a beacon round is checked.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PROJECT_ROOT,
  botProcessEnv,
  freePort,
  makeTempDir,
  startLocalServers,
  waitUntil,
  type LocalServers,
} from './support/e2e-stack.js';

/** The line test/support/record-modules.mjs writes when the bot's HTTP server listens. */
const LISTENING_MARK = '# http listening';

let servers: LocalServers;
let temp: { dir: string; cleanup: () => Promise<void> };

beforeAll(async () => {
  servers = await startLocalServers();
  temp = await makeTempDir('giftdrop-modules-');
});
afterAll(async () => {
  await servers.close();
  await temp.cleanup();
});

describe('live start-up', () => {
  it('loads the bot from dist/ and nothing from the sandboxes, the demo or the CLIs', async () => {
    const port = await freePort();
    const log = join(temp.dir, 'modules.txt');
    const env = {
      ...botProcessEnv(servers, { dataDir: join(temp.dir, 'data'), httpPort: port }),
      GIFTDROP_MODULE_LOG: log,
    };
    const child = spawn(
      process.execPath,
      ['--import', './test/support/record-modules.mjs', 'scripts/run.mjs', 'main'],
      {
        cwd: PROJECT_ROOT,
        env,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise((r) => child.once('exit', r));
    try {
      await waitUntil(
        async () => {
          try {
            return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200;
          } catch {
            return false;
          }
        },
        30_000,
        '/healthz',
        20,
      );
      // Chat joined: the token was validated (undici) and tmi.js connected.
      await waitUntil(
        async () => {
          const res = await fetch(`http://127.0.0.1:${port}/healthz`);
          return ((await res.json()) as { chat?: string }).chat === 'connected';
        },
        30_000,
        'chat connected',
        20,
      );
      const lines = readFileSync(log, 'utf8').trim().split('\n');
      const mark = lines.indexOf(LISTENING_MARK);
      expect(mark).toBeGreaterThan(0);
      const urls = lines.slice(0, mark);
      const pkg = (name: string) => (u: string) => u.includes(`/node_modules/${name}/`);
      for (const name of ['fast-xml-parser', '@noble/curves', '@noble/hashes']) {
        expect(urls.filter(pkg(name)), `${name} loaded before the HTTP server listened`).toEqual([]);
      }
      expect(lines.some(pkg('tmi.js'))).toBe(true);
      expect(lines.some(pkg('undici'))).toBe(true);
      expect(lines.filter(pkg('@noble/curves'))).toEqual([]);
      const base = pathToFileURL(PROJECT_ROOT).href.replace(/\/?$/, '/');
      const ours = urls.filter((u) => u.startsWith(base)).map((u) => u.slice(base.length));
      expect(ours).toContain('dist/main.js');
      expect(ours).toContain('dist/app/bot.js');
      // zod from its one-file copy in dist/ (scripts/vendor.mjs), not module by module.
      expect(ours).toContain('dist/node_modules/zod/index.js');
      expect(urls.filter((u) => u.startsWith(`${base}node_modules/zod/`))).toEqual([]);
      expect(ours.filter((p) => p.startsWith('src/') && p.endsWith('.ts'))).toEqual([]);
      expect(ours.filter((p) => /^dist\/(sandbox|cli|local)\//.test(p))).toEqual([]);
      expect(lines.filter((u) => /\/node_modules\/tsx\//.test(u))).toEqual([]);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    expect(err).toContain('"msg":"stopped"');
  });
});
