/**
 * The demo with HTTP_PORT 0 picks a free port for the bot before the bot listens on it (the claim
 * page needs its address first). Another program can take that port in between, as concurrent
 * programs on a busy machine do: the demo then picks again and starts, instead of stopping with
 * "HTTP_PORT 0 is already in use". The picker here hands out a port a server of this test holds,
 * then free ones.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressInUseLine } from '../src/app/port-check.js';
import { loadConfig } from '../src/config/index.js';
import { demoInProcess } from './support/sandbox-mode-spawn.js';

let dir: string;
let holder: Server;
let taken: number;

function listenFree(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => resolve(srv));
  });
}

async function freePort(): Promise<number> {
  const srv = await listenFree();
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'giftdrop-port-race-'));
  writeFileSync(join(dir, 'giftdrop.json'), JSON.stringify({ demo: { drawSeconds: 3, linkSeconds: 5, paceMs: 10 } }));
  holder = await listenFree();
  taken = (holder.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => holder.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe('the demo on HTTP_PORT 0', () => {
  it('picks again when the port it picked was taken before the bot listened', async () => {
    const config = loadConfig({
      env: { DATA_DIR: join(dir, 'data'), HTTP_PORT: '0', GIFTDROP_CONFIG: join(dir, 'giftdrop.json') },
      dotenv: false,
      cwd: dir,
    });
    const picks: number[] = [];
    const demo = demoInProcess(config, {
      script: false,
      // the first pick is a port another program (this test's server) holds; then free ones
      pickPort: async () => {
        const port = picks.length === 0 ? taken : await freePort();
        picks.push(port);
        return port;
      },
    });
    await demo.seen(/Your turn/, `the prompt (picks ${picks.join(', ')})`, 60_000);
    expect(picks.length).toBeGreaterThanOrEqual(2);
    expect(picks[0]).toBe(taken);
    const botLine = /The bot: webhooks at http:\/\/127\.0\.0\.1:(\d+)\//.exec(demo.out());
    expect(botLine, demo.out()).not.toBeNull();
    expect(Number(botLine![1])).toBe(picks.at(-1));
    expect(Number(botLine![1])).not.toBe(taken);
    demo.input.write('/quit\n');
    expect(await demo.done).toBe(0);
  }, 120_000);
});

describe('a port in use at start-up, in one line', () => {
  const http = { host: '127.0.0.1', port: 0, localBind: '127.0.0.1', localPort: 0 };
  const inUse = (port: number) =>
    Object.assign(new Error(`listen EADDRINUSE: address already in use 127.0.0.1:${port}`), {
      code: 'EADDRINUSE',
      port,
    });

  it('names HTTP_PORT or GIFTDROP_LOCAL_PORT only when that setting is the port taken', () => {
    expect(addressInUseLine(inUse(8787), { ...http, port: 8787 })).toMatch(
      /^HTTP_PORT 8787 on 127\.0\.0\.1 is already in use/,
    );
    expect(addressInUseLine(inUse(8788), { ...http, port: 8787, localPort: 8788 })).toMatch(
      /^GIFTDROP_LOCAL_PORT 8788 on 127\.0\.0\.1 is already in use/,
    );
    // a port the OS picked (HTTP_PORT 0), taken by another program: the address, not "HTTP_PORT 0"
    const line = addressInUseLine(new Error('start failed', { cause: inUse(43387) }), http);
    expect(line).toContain('127.0.0.1:43387');
    expect(line).not.toContain('HTTP_PORT');
  });
});
