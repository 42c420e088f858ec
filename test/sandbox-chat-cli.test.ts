/**
 * `npm run sandbox:chat` as a real process: it prints a JSON line with a working URL and token,
 * turns stdin lines into viewer messages, echoes the bot, and exits cleanly on SIGTERM.
 * Also the stdin syntax parser on its own.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import tmi from 'tmi.js';
import { parseDemoLine } from '../src/sandbox/chat/demo-input.js';
import { outputWaiter } from './support/output-wait.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const quiet = {
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error() {},
  fatal() {},
  setLevel() {},
  getLevel: () => 'error',
};

describe('sandbox:chat CLI', () => {
  let child: ChildProcessWithoutNullStreams | undefined;
  afterEach(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('prints its URL and token, injects stdin lines, echoes the bot and stops on SIGTERM', async () => {
    child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/sandbox/chat/cli.ts', '--channel', 'cli_demo', '--bot-login', 'cli_bot'],
      {
        cwd: root,
        stdio: 'pipe',
      },
    );
    const proc = child;
    const lines: string[] = [];
    const output = outputWaiter();
    createInterface({ input: proc.stdout }).on('line', (l) => {
      lines.push(l);
      output.changed();
    });
    let stderr = '';
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const waitLine = (re: RegExp): Promise<string> =>
      output.until(
        () => lines.find((l) => re.test(l)),
        20_000,
        () => new Error(`CLI printed no line matching ${re}; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`),
      );

    const first = JSON.parse(await waitLine(/^\{/)) as {
      url: string;
      token: string;
      channel: string;
      botLogin: string;
    };
    expect(JSON.parse(lines[0]!)).toEqual(first);
    expect(first).toMatchObject({
      url: expect.stringMatching(/^ws:\/\/127\.0\.0\.1:\d+$/),
      channel: 'cli_demo',
      botLogin: 'cli_bot',
    });
    expect(first.token).toMatch(/^\w{20,}$/);
    expect(await waitLine(/^sandbox chat on /)).toContain(first.url);
    expect(lines[1]).toMatch(/^sandbox chat on /);

    const port = Number(new URL(first.url).port);
    const client = new tmi.Client({
      options: { skipUpdatingEmotesets: true },
      connection: { server: '127.0.0.1', port, secure: false, reconnect: false },
      identity: { username: first.botLogin, password: `oauth:${first.token}` },
      channels: [],
      logger: quiet,
    });
    const got: [Record<string, unknown>, string][] = [];
    const firstMessage = new Promise<void>((resolve) => {
      client.on('message', (_ch, tags, text, self) => {
        if (self) return;
        got.push([tags, text]);
        resolve();
      });
    });
    await client.connect();
    await client.join(first.channel);
    await waitLine(/cli_bot joined #cli_demo/);

    proc.stdin.write('+mod +sub6 viewer42: !enter please\n');
    await waitLine(/<viewer42> !enter please/);
    await firstMessage;
    expect(got[0]![0]).toMatchObject({
      username: 'viewer42',
      mod: true,
      subscriber: true,
      'badge-info': { subscriber: '6' },
    });
    expect(got[0]![1]).toBe('!enter please');

    await client.say(first.channel, 'You are entered, viewer42!');
    await waitLine(/^BOT <cli_bot> You are entered, viewer42!$/);
    proc.stdin.write('this is not a valid line\n');
    await waitLine(/^\?\? expected/);

    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).not.toContain(first.token);
    await client.disconnect().catch(() => undefined);
  });
});

describe('parseDemoLine', () => {
  it('reads roles and extras', () => {
    expect(parseDemoLine('viewer42: !enter')).toEqual({ login: 'viewer42', text: '!enter', roles: {}, extra: {} });
    expect(parseDemoLine('+mod +vip +sub14 +first +me +bits500 Big_Fan : hello there')).toEqual({
      login: 'big_fan',
      text: 'hello there',
      roles: { mod: true, vip: true, subscriber: true, subMonths: 14 },
      extra: { firstMessage: true, action: true, bits: 500 },
    });
  });

  it('refuses what it cannot read', () => {
    expect(parseDemoLine('no colon here')).toBeUndefined();
    expect(parseDemoLine('+admin someone: hi')).toBeUndefined();
    expect(parseDemoLine('way_too_long_a_login_name_for_twitch: hi')).toBeUndefined();
  });
});
