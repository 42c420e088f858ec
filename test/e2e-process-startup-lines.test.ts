/**
 * What the real bot process (live mode, `node --import tsx src/main.ts`) says at start-up when
 * something is wrong, against the local Fourthwall sandbox and chat server:
 * - chat unreachable: the overlay and dashboard addresses (and the token file) are printed on
 *   stdout within 5 s of the process's first line anyway, before chat connects, and the pages
 *   answer there;
 * - a wrong Fourthwall password: one line naming FOURTHWALL_USERNAME/FOURTHWALL_PASSWORD and
 *   `npm run setup` within 20 s, the same problem in /healthz (which the dashboard reads), and no
 *   stack trace at the default level (info);
 * - risky settings, one line each: a DATA_DIR that did not exist (created with its parents, says
 *   where data goes), an http:// GIFTDROP_PUBLIC_URL; and (riskySettings alone) an HTTP_HOST
 *   other machines can reach.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatServer } from '../src/sandbox/chat/index.js';
import { startChatServer } from '../src/sandbox/chat/index.js';
import { startFourthwallSandbox } from '../src/sandbox/fourthwall/index.js';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { riskySettings } from '../src/config/index.js';
import { PROJECT_ROOT, botProcessEnv, freePort, makeTempDir } from './support/e2e-stack.js';
import { outputWaiter } from './support/output-wait.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

interface Started {
  stdout: string[];
  stderr: string[];
  /** Every line so far with when it came (ms after spawn). */
  timeline(): { line: string; atMs: number }[];
  /** Resolves with the first line (stdout or stderr) matching `re` and when it came (ms after spawn). */
  line(re: RegExp, timeoutMs: number, what: string): Promise<{ line: string; atMs: number }>;
}

function start(env: Record<string, string>): Started {
  const spawnedAt = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const seen: { line: string; atMs: number }[] = [];
  const output = outputWaiter();
  for (const [stream, into] of [
    [child.stdout, stdout],
    [child.stderr, stderr],
  ] as const) {
    createInterface({ input: stream }).on('line', (l) => {
      into.push(l);
      seen.push({ line: l, atMs: Date.now() - spawnedAt });
      output.changed();
    });
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  cleanup.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
  });
  return {
    stdout,
    stderr,
    timeline: () => [...seen],
    line: (re, timeoutMs, what) =>
      output.until(
        () => seen.find((s) => re.test(s.line)),
        timeoutMs,
        () =>
          new Error(
            `no ${what} within ${timeoutMs} ms; output:\n${seen
              .map((s) => s.line)
              .join('\n')
              .slice(-4000)}`,
          ),
      ),
  };
}

async function tempDir(): Promise<string> {
  const tmp = await makeTempDir('giftdrop-startup-lines-');
  cleanup.push(() => tmp.cleanup());
  return tmp.dir;
}

describe('start-up lines of the live bot', () => {
  it('prints the overlay and dashboard addresses within 5 s while chat is unreachable, and they answer', async () => {
    const fw = await startFourthwallSandbox({});
    cleanup.push(() => fw.close());
    // Nothing listens on the chat address (nor its /oauth2): the chat connect keeps retrying.
    const nowhere = {
      channel: 'giftdrop_demo',
      botLogin: 'giftdrop_bot',
      token: 'unreachabletoken0123456789',
      url: `ws://127.0.0.1:${await freePort()}`,
    } as ChatServer;
    const bot = start(botProcessEnv({ fourthwall: fw, chat: nowhere }, { dataDir: await tempDir() }));
    const { line, atMs } = await bot.line(
      /overlay \(OBS browser source\) at http:\/\/\S+\/overlay/,
      15_000,
      'the overlay line',
    );
    expect(bot.stdout).toContain(line); // the operator's console (stdout), not only the log
    expect(line).toMatch(/dashboard at http:\/\/\S+\/dashboard \(sign in with the token in \S+dashboard\.token\)/);
    // the link that signs in by itself is for a terminal only: never in a pipe or a log
    expect(
      bot
        .timeline()
        .filter((t) => t.line.includes('#token='))
        .map((t) => t.line),
    ).toEqual([]);
    // Timed from the process's first line (its modules loaded: compiling them through tsx takes
    // seconds on a loaded machine, which is not what this checks), while chat keeps failing.
    const firstAtMs = bot.timeline()[0]!.atMs;
    expect(
      atMs - firstAtMs,
      bot
        .timeline()
        .map((t) => `${t.atMs} ${t.line.slice(0, 120)}`)
        .join('\n'),
    ).toBeLessThan(5_000);
    expect(bot.timeline().some((t) => /connected to #/.test(t.line))).toBe(false);
    const overlay = /at (http:\/\/\S+\/overlay);/.exec(line)![1]!;
    expect((await fetch(overlay)).status).toBe(200);
    const health = (await (await fetch(overlay.replace(/\/overlay$/, '/healthz'))).json()) as { chat: string };
    expect(health.chat).not.toBe('connected'); // it really was before chat
  }, 30_000);

  it('a wrong Fourthwall password: one line naming FOURTHWALL_USERNAME/FOURTHWALL_PASSWORD and npm run setup, in /healthz too, no stack trace', async () => {
    const fw = await startFourthwallSandbox({});
    cleanup.push(() => fw.close());
    const chat = await startChatServer({ botIsMod: true });
    cleanup.push(() => chat.close());
    const bot = start(
      botProcessEnv(
        { fourthwall: fw, chat },
        { dataDir: await tempDir(), extra: { FOURTHWALL_PASSWORD: `${fw.password}-wrong` } },
      ),
    );
    const { line, atMs } = await bot.line(/FOURTHWALL_USERNAME\/FOURTHWALL_PASSWORD/, 20_000, 'the credential line');
    expect(line).toMatch(/npm run setup/);
    expect(atMs).toBeLessThan(20_000);
    const { line: pages } = await bot.line(
      /overlay \(OBS browser source\) at http:\/\/\S+\/overlay/,
      10_000,
      'the overlay line',
    );
    const base = /at (http:\/\/\S+)\/overlay;/.exec(pages)![1]!;
    const health = (await (await fetch(`${base}/healthz`)).json()) as { problems?: string[] };
    expect(health.problems).toEqual([expect.stringMatching(/FOURTHWALL_USERNAME\/FOURTHWALL_PASSWORD.*npm run setup/)]);
    // Give the background work that calls Fourthwall (catch-up poll, shop features) time to fail too.
    await bot.line(/"msg":"chat: connected|connected to #/, 15_000, 'chat connected');
    const all = [...bot.stdout, ...bot.stderr];
    expect(all.filter((l) => /FOURTHWALL_USERNAME\/FOURTHWALL_PASSWORD/.test(l))).toHaveLength(1);
    const text = all.join('\n');
    expect(text).not.toMatch(/"stack":/);
    expect(text).not.toMatch(/\n\s+at \S+ \(/);
    expect(text).not.toContain(`${fw.password}-wrong`);
  }, 40_000);
});

describe('risky settings', () => {
  it('a DATA_DIR created with its parents and an http:// public URL are each said in one line', async () => {
    const fw = await startFourthwallSandbox({});
    cleanup.push(() => fw.close());
    const nowhere = {
      channel: 'giftdrop_demo',
      botLogin: 'giftdrop_bot',
      token: 'unreachabletoken0123456789',
      url: `ws://127.0.0.1:${await freePort()}`,
    } as ChatServer;
    const dataDir = join(await tempDir(), 'new', 'nested', 'data');
    const bot = start(
      botProcessEnv(
        { fourthwall: fw, chat: nowhere },
        { dataDir, extra: { GIFTDROP_PUBLIC_URL: 'http://giftdrop.example.net' } },
      ),
    );
    const { line: created } = await bot.line(/DATA_DIR .* did not exist/, 20_000, 'the DATA_DIR line');
    expect(created).toContain(
      `DATA_DIR ${dataDir} did not exist: created it (and its parents); the bot's history, open draws and dashboard token go there.`,
    );
    expect(existsSync(dataDir)).toBe(true);
    const { line: url } = await bot.line(
      /GIFTDROP_PUBLIC_URL=http:\/\/giftdrop\.example\.net is http:\/\//,
      20_000,
      'the public URL line',
    );
    expect(url).toMatch(/use your tunnel's https:\/\/ address/);
    await bot.line(/overlay \(OBS browser source\)/, 15_000, 'the overlay line');
    const all = [...bot.stdout, ...bot.stderr];
    expect(all.filter((l) => /did not exist: created it/.test(l))).toHaveLength(1);
    expect(all.filter((l) => /HTTP_HOST=/.test(l))).toHaveLength(0); // 127.0.0.1: nothing to say
  }, 40_000);

  it('riskySettings: a non-loopback HTTP_HOST warns, loopback and https:// do not; sandbox mode ignores the public URL', () => {
    const at = (host: string, publicUrl?: string, mode: 'live' | 'sandbox' = 'live') =>
      riskySettings({ mode, http: { host, port: 8080 }, publicUrl });
    expect(at('0.0.0.0')).toEqual([
      expect.stringMatching(/^HTTP_HOST=0\.0\.0\.0: .*keep HTTP_HOST=127\.0\.0\.1.*HTTPS tunnel/),
    ]);
    expect(at('192.168.1.20')).toHaveLength(1);
    for (const host of ['127.0.0.1', '127.0.0.5', 'localhost', '::1'])
      expect(at(host, 'https://x.trycloudflare.com')).toEqual([]);
    expect(at('127.0.0.1', 'http://x.example')).toEqual([
      expect.stringMatching(/^GIFTDROP_PUBLIC_URL=http:\/\/x\.example is http:\/\//),
    ]);
    expect(at('127.0.0.1', 'http://x.example', 'sandbox')).toEqual([]);
  });
});
