/**
 * Twitch resilience of the real bot process (`node --import tsx src/main.ts`, live mode) against
 * the local Fourthwall sandbox and the sandbox chat server (which also answers Twitch's /oauth2):
 * chat down at start then up, a token refused on a reconnect with and without refresh.
 * Waits are on output lines and server events, not sleeps.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../src/sandbox/chat/index.js';
import { startFourthwallSandbox, type FourthwallSandbox } from '../src/sandbox/fourthwall/index.js';
import { PROJECT_ROOT, botProcessEnv, freePort, makeTempDir, spawnBot, waitUntil } from './support/e2e-stack.js';
import { outputWaiter } from './support/output-wait.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

interface Proc {
  child: ChildProcess;
  lines: string[];
  waitLine(re: RegExp, what: string, timeoutMs?: number): Promise<string>;
  exited: Promise<number | null>;
}

function run(env: Record<string, string>): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const output = outputWaiter();
  for (const s of [child.stdout, child.stderr]) {
    createInterface({ input: s }).on('line', (l) => {
      lines.push(l);
      output.changed();
    });
  }
  let code: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (c) => {
      code = c;
      output.changed();
      resolve(c);
    }),
  );
  const tail = () => lines.join('\n').slice(-3000);
  const waitLine = (re: RegExp, what: string, timeoutMs = 30_000) =>
    output.until(
      () => {
        const hit = lines.find((l) => re.test(l));
        if (hit === undefined && code !== undefined)
          throw new Error(`bot exited (${code}) before ${what}; output:\n${tail()}`);
        return hit;
      },
      timeoutMs,
      () => new Error(`no ${what} within ${timeoutMs} ms; output:\n${tail()}`),
    );
  cleanup.push(async () => {
    if (code === undefined) child.kill('SIGKILL');
    await exited;
  });
  return { child, lines, waitLine, exited };
}

async function fourthwall(): Promise<FourthwallSandbox> {
  const fw = await startFourthwallSandbox({ drawDurationSeconds: 3 });
  cleanup.push(() => fw.close());
  return fw;
}

async function chatServer(options: Parameters<typeof startChatServer>[0] = {}): Promise<ChatServer> {
  const chat = await startChatServer({ botIsMod: true, ...options });
  cleanup.push(() => chat.close());
  return chat;
}

async function tempDir(): Promise<string> {
  const tmp = await makeTempDir('giftdrop-twitch-');
  cleanup.push(() => tmp.cleanup());
  return tmp.dir;
}

describe('the bot process and Twitch chat', () => {
  it('starts while the chat server is down, says so once per attempt, and connects when it comes up', async () => {
    const fw = await fourthwall();
    const port = await freePort();
    const token = 'downatstarttoken0123456789';
    // The chat server (and its /oauth2) is not there yet: only its future address is.
    const future = {
      channel: 'giftdrop_demo',
      botLogin: 'giftdrop_bot',
      token,
      url: `ws://127.0.0.1:${port}`,
    } as ChatServer;
    const bot = run(botProcessEnv({ fourthwall: fw, chat: future }, { dataDir: await tempDir() }));
    await bot.waitLine(
      /chat: could not connect to #giftdrop_demo \(attempt 1: .*\); next attempt in \d+(\.\d+)? m?s/,
      'first retry line',
    );
    const chat = await chatServer({ port, token });
    await bot.waitLine(/chat: connected to #giftdrop_demo \(attempt [2-9]\)/, 'connected line');
    const startup = await bot.waitLine(/"webhooks":"http/, 'startup line');
    const base = new URL((JSON.parse(startup) as { webhooks: string }).webhooks).origin;
    const health = (await (await fetch(`${base}/healthz`)).json()) as { chat: string };
    expect(health.chat).toBe('connected');
    expect(chat.joined()).toEqual(['giftdrop_bot']);
    bot.child.kill('SIGTERM');
    expect(await bot.exited).toBe(0);
    expect(bot.lines.join('\n')).not.toContain(token);
  });

  it('a token refused on a reconnect, without refresh: exits 1 naming TWITCH_TOKEN, never printing it', async () => {
    const fw = await fourthwall();
    const chat = await chatServer();
    const token = chat.token;
    const bot = await spawnBot({ fourthwall: fw, chat }, { dataDir: await tempDir() });
    cleanup.push(() => bot.kill('SIGKILL'));
    chat.expireToken();
    chat.dropConnections();
    const exit = await bot.exited;
    expect(exit.code).toBe(1);
    expect(bot.output()).toMatch(/check TWITCH_TOKEN/);
    expect(bot.output()).not.toContain(token);
    expect(chat.transcript.filter((e) => /login rejected/.test(e.text))).toHaveLength(1);
  });

  it('a token refused on a reconnect, with refresh: refreshed, back in chat, the new token never printed', async () => {
    const fw = await fourthwall();
    const chat = await chatServer();
    const first = chat.token;
    const bot = await spawnBot(
      { fourthwall: fw, chat },
      {
        dataDir: await tempDir(),
        extra: {
          TWITCH_REFRESH_TOKEN: chat.refreshToken,
          TWITCH_CLIENT_ID: chat.clientId,
          TWITCH_CLIENT_SECRET: chat.clientSecret,
        },
      },
    );
    cleanup.push(() => bot.kill('SIGKILL'));
    chat.expireToken();
    chat.dropConnections();
    await chat.waitFor(
      () => chat.transcript.filter((e) => / connected$/.test(e.text)).length === 2,
      15_000,
      'second login',
    );
    expect(chat.token).not.toBe(first);
    expect(chat.transcript.filter((e) => e.text === 'oauth2 token: 200')).toHaveLength(1);
    await waitUntil(
      async () => (await bot.health()).body.chat === 'connected',
      5000,
      'healthz chat connected again',
      25,
    );
    await bot.waitForLine((l) => /TWITCH_TOKEN refreshed \(refused on reconnect\)/.test(l), 5000, 'refresh line');
    const exit = await bot.kill('SIGTERM');
    expect(exit.code).toBe(0);
    for (const secret of [first, chat.token, chat.refreshToken, chat.clientSecret])
      expect(bot.output()).not.toContain(secret);
  });
});
