/**
 * The single executables (issue 41): their size, and the Linux one's start-up against `npm start`.
 * Start-up is timed as bench/startup-join.bench.ts times it (botTimeToJoin): from spawn to the chat
 * server seeing the bot's JOIN, live mode against the local Fourthwall sandbox and chat server in
 * this process, LOG_LEVEL=warn, median of RUNS, the two alternating so both sample the same
 * stretches of a shared machine's load. The anchor is `npm start` on the Node running the bench;
 * the executable carries its own Node (scripts/package.mjs NODE_LINE): both versions are in the
 * row. Needs `npm run package` first; without the executables the rows say so and measure nothing.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { ensureBuilt } from '../scripts/build.mjs';
import { PROJECT_ROOT, startLocalServers } from '../test/support/e2e-stack.js';
import { loadNote, median } from './e2e-support.js';
import { botTimeToJoin } from './startup-join.bench.js';
import type { BenchResult } from './types.js';

const RUNS = 7;
const LINUX_EXE = join(PROJECT_ROOT, 'release', 'giftdrop-linux-x64');
const WINDOWS_EXE = join(PROJECT_ROOT, 'release', 'giftdrop-win-x64.exe');
const mb = (file: string) => Number((statSync(file).size / 1024 / 1024).toFixed(1));

export async function run(): Promise<BenchResult[]> {
  if (!existsSync(LINUX_EXE) || !existsSync(WINDOWS_EXE)) {
    return [
      {
        name: 'package.executables',
        value: 0,
        unit: '-',
        detail: 'not measured: release/ has no executables (run npm run package first)',
      },
    ];
  }
  ensureBuilt({ log: (l) => process.stderr.write(`${l}\n`) });
  const exeVersion = execFileSync(LINUX_EXE, ['--version'], { encoding: 'utf8' }).trim();
  const servers = await startLocalServers({ fourthwall: { drawDurationSeconds: 60 } });
  const exe: number[] = [];
  const npm: number[] = [];
  try {
    for (let i = -1; i < RUNS; i++) {
      // (run -1 warms the page cache and is not counted)
      for (const [list, cmd, args] of [
        [exe, LINUX_EXE, []],
        [npm, 'npm', ['start']],
      ] as const) {
        const ms = await botTimeToJoin(servers, cmd, [...args]);
        if (i >= 0) list.push(ms);
      }
    }
  } finally {
    await servers.close();
  }
  const fmt = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(' ');
  const ratio = median(exe) / median(npm);
  return [
    {
      name: 'package.linux.size',
      value: mb(LINUX_EXE),
      unit: 'MB',
      detail: `release/giftdrop-linux-x64 (${exeVersion}): Node's binary with giftdrop's bundle inside`,
    },
    {
      name: 'package.windows.size',
      value: mb(WINDOWS_EXE),
      unit: 'MB',
      detail: 'release/giftdrop-win-x64.exe (Node 26 Windows build with the same bundle)',
    },
    {
      name: 'package.linux.joinRatioToNpmStart',
      value: Number(ratio.toFixed(2)),
      unit: 'x',
      detail: `spawn -> the bot's JOIN seen by the chat server, live mode against the local sandboxes (LOG_LEVEL=warn), median of ${RUNS}: the Linux executable ${median(exe).toFixed(0)} ms (${fmt(exe)}) vs npm start on Node ${process.version} ${median(npm).toFixed(0)} ms (${fmt(npm)}); ${loadNote()}`,
    },
  ];
}
