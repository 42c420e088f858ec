/**
 * The operator console's link rule (links only on a terminal, else a pointer) and the busy-port
 * start-up check, through the real bot process: a live bot whose HTTP_PORT is taken exits 1 with
 * one line naming the port and how to pick another (checked before chat is joined), no stack trace.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleOperator } from '../src/console/operator-console.js';
import { PROJECT_ROOT, botProcessEnv, makeTempDir, startLocalServers, type LocalServers } from './support/e2e-stack.js';

const LINE = '[Mug] link for @ana (Ana): https://shop.example/gifts/gft_1/redeem?token=abc';

function capture(isTTY: boolean) {
  const lines: string[] = [];
  return { lines, out: { isTTY, write: (t: string) => lines.push(t) } };
}

describe('consoleOperator', () => {
  it('prints a secret line whole on a terminal', () => {
    const c = capture(true);
    consoleOperator({ out: c.out }).notify(LINE, { secret: true, drawId: 'lg_1' });
    expect(c.lines).toEqual([`[giftdrop] ${LINE}\n`]);
  });

  it('without a terminal replaces the link and says where it is; plain lines are unchanged', () => {
    const c = capture(false);
    const op = consoleOperator({ out: c.out });
    op.notify(LINE, { secret: true, drawId: 'lg_1' });
    op.notify('Draw d1 (Mug) failed: timeout.');
    expect(c.lines[0]).toBe(
      '[giftdrop] [Mug] link for @ana (Ana): [link not shown] (links are not printed because stdout is not a terminal: see the dashboard, or run npm run history -- --draw lg_1)\n',
    );
    expect(c.lines[1]).toBe('[giftdrop] Draw d1 (Mug) failed: timeout.\n');
  });
});

describe('a busy HTTP_PORT in live mode', () => {
  let servers: LocalServers;
  let holder: Server;
  let port: number;
  let temp: { dir: string; cleanup: () => Promise<void> };

  beforeAll(async () => {
    servers = await startLocalServers();
    temp = await makeTempDir('giftdrop-port-busy-');
    holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
    port = (holder.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((r) => holder.close(r));
    await servers.close();
    await temp.cleanup();
  });

  it('exits 1 with one line naming the port and another to pick, and no stack trace', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: PROJECT_ROOT,
      env: botProcessEnv(servers, { dataDir: temp.dir, httpPort: port }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('close', r));
    expect(code).toBe(1);
    expect(out).toBe('');
    const lines = err.trim().split('\n');
    expect(lines).toEqual([
      `giftdrop: HTTP_PORT ${port} on 127.0.0.1 is already in use (another giftdrop, or another program, holds it): stop that one, or pick another port, e.g. HTTP_PORT=${port + 2} npm start (and point the Fourthwall webhook or tunnel at it).`,
    ]);
  });
});
