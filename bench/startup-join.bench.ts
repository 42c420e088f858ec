/**
 * Start-up to what a streamer waits for: from spawning the bot's entry (live mode, against the
 * local Fourthwall sandbox and chat server in this process) to the chat server seeing the bot's
 * own JOIN of the channel (it answers the JOIN at once, with the join's USERSTATE and ROOMSTATE),
 * median of RUNS. Its anchor in the same run, timed the same way: a bare tmi.js client (no
 * giftdrop code) in a fresh Node process connecting and joining the same channel. `npm start`
 * (npm's own start-up included) beside both. Runs alternate between the three, so all sample the
 * same stretches of a shared machine's load. dist/ is built first (as `npm ci` leaves it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ensureBuilt } from '../scripts/build.mjs';
import {
  botProcessEnv,
  freePort,
  makeTempDir,
  startLocalServers,
  type LocalServers,
} from '../test/support/e2e-stack.js';
import { loadNote, median } from './e2e-support.js';
import type { BenchResult } from './types.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const RUNS = 7;
const TARGET = 3;

/** A bare tmi.js client, as a user would write it: connect, join the channel, stay. */
const BARE = `
const tmi = require('tmi.js');
const e = process.env;
const client = new tmi.Client({
  options: { skipUpdatingEmotesets: true },
  connection: { server: e.CHAT_HOST, port: Number(e.CHAT_PORT), secure: false, reconnect: false },
  identity: { username: e.CHAT_BOT, password: 'oauth:' + e.CHAT_TOKEN },
  channels: [e.CHAT_CHANNEL],
  logger: { info() {}, warn() {}, error() {} },
});
client.connect().catch((err) => { console.error(String(err)); process.exit(1); });
`;

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );
}

/** Spawns `cmd args` (in the repository); resolves with the ms from spawn to the chat server's JOIN from it, then stops it. */
async function timeToJoin(
  servers: LocalServers,
  cmd: string,
  args: string[],
  env: Record<string, string>,
): Promise<number> {
  const t0 = performance.now();
  const joined = new Promise<number>((resolve) => {
    const on = () => {
      servers.chat.off('join', on);
      resolve(performance.now() - t0);
    };
    servers.chat.on('join', on);
  });
  const child = spawn(cmd, args, { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
  const failed = exited(child).then(() => {
    throw new Error(`${cmd} ${args.join(' ')} exited (${child.exitCode}) before joining: ${err}`);
  });
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`${cmd}: no JOIN within 30 s`)), 30_000).unref(),
  );
  try {
    return await Promise.race([joined, failed, timeout]);
  } finally {
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited(child);
    clearTimeout(t);
    await servers.chat.waitFor(() => servers.chat.connections() === 0, 10_000, 'client gone');
  }
}

/**
 * timeToJoin for the bot started by `cmd args`: live mode against `servers`, LOG_LEVEL=warn, a
 * fresh data folder and port (bench/executable.bench.ts times the executable with it too).
 */
export async function botTimeToJoin(servers: LocalServers, cmd: string, args: string[]): Promise<number> {
  const { dir, cleanup } = await makeTempDir('giftdrop-bench-join-');
  try {
    const env = {
      HOME: process.env.HOME ?? '/tmp',
      ...botProcessEnv(servers, { dataDir: dir, httpPort: await freePort(), logLevel: 'warn' }),
    };
    return await timeToJoin(servers, cmd, args, env);
  } finally {
    await cleanup();
  }
}

export async function run(): Promise<BenchResult[]> {
  ensureBuilt({ log: (l) => process.stderr.write(`${l}\n`) });
  const servers = await startLocalServers({ fourthwall: { drawDurationSeconds: 60 } });
  const chat = servers.chat;
  const bareEnv = {
    PATH: process.env.PATH ?? '',
    CHAT_HOST: chat.host,
    CHAT_PORT: String(chat.port),
    CHAT_BOT: chat.botLogin,
    CHAT_TOKEN: chat.token,
    CHAT_CHANNEL: chat.channel,
  };
  const bare: number[] = [];
  const entry: number[] = [];
  const npm: number[] = [];
  try {
    for (let i = -1; i < RUNS; i++) {
      // (run -1 warms the page cache and is not counted)
      const b = await timeToJoin(servers, process.execPath, ['-e', BARE], bareEnv);
      for (const [list, cmd, args] of [
        [entry, process.execPath, ['scripts/run.mjs', 'main']],
        [npm, 'npm', ['start']],
      ] as const) {
        const ms = await botTimeToJoin(servers, cmd, [...args]);
        if (i >= 0) list.push(ms);
      }
      if (i >= 0) bare.push(b);
    }
  } finally {
    await servers.close();
  }
  const ratio = median(entry) / median(bare);
  const fmt = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(' ');
  return [
    {
      name: 'startup.join.ratioToTmi',
      value: Number(ratio.toFixed(2)),
      unit: 'x',
      target: `<= ${TARGET}`,
      ok: ratio <= TARGET,
      detail: `spawn -> the bot's JOIN seen by the chat server, live mode against the local sandboxes (LOG_LEVEL=warn), median of ${RUNS}: ${median(entry).toFixed(0)} ms (node scripts/run.mjs main, what npm start execs; ${fmt(entry)}) vs a bare tmi.js client process connecting and joining ${median(bare).toFixed(0)} ms (${fmt(bare)}); ${loadNote()}`,
    },
    {
      name: 'startup.join.npmStart',
      value: Math.round(median(npm)),
      unit: 'ms',
      detail: `npm start, same measure (npm's own start-up included): ${(median(npm) / median(bare)).toFixed(2)}x the bare tmi.js client (${fmt(npm)})`,
    },
  ];
}
