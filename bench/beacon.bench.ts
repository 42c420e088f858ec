/**
 * What the public beacon adds to a draw, measured on the running bot: startLocalStack (the real
 * Fourthwall sandbox, chat server and bot over sockets, journal on, logging at info to /dev/null),
 * a moderator's `!giveaway start`, five viewers' `!enter`, `!giveaway end`, until the draw is
 * finished (links created at the sandbox). Timed from `!giveaway end` reaching the bot
 * (draw-closed) to draw-finished, for DRAWS draws with the sandbox beacon (1 s rounds, as sandbox
 * mode) and, as the anchor in the same run, with the beacon off.
 *
 * Reports: the median close -> finished time of both, the median extra latency (beacon - off) and
 * its ratio, and the part of the extra latency that is NOT waiting for the round to be published
 * (fetch + BLS verification after the round's publication time). With drand quicknet the wait for
 * the round is uniformly 0-3 s by construction; the overhead is what the bot adds on top.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/config/index.js';
import { createLogger } from '../src/logging/index.js';
import { startLocalStack } from '../src/local/local-stack.js';
import type { DrawRecord } from '../src/giveaway/model.js';
import { roundTimeMs } from '../src/fairness/drand.js';
import type { BenchResult } from './types.js';

const DRAWS = 6;
const PERIOD_S = 1;

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

interface Sample {
  closeToFinishMs: number;
  /** ms from the round's publication to the winners' record being finished (beacon runs). */
  afterRoundMs?: number;
}

async function runDraws(withBeacon: boolean): Promise<Sample[]> {
  const dir = await mkdtemp(join(tmpdir(), 'giftdrop-bench-beacon-'));
  const devNull = pino.destination({ dest: '/dev/null', sync: false });
  try {
    const config = loadConfig({ env: { DATA_DIR: dir, HTTP_PORT: '0', LOG_LEVEL: 'info' }, dotenv: false, cwd: dir });
    const stack = await startLocalStack({
      config,
      logger: createLogger({ level: 'info', destination: devNull }),
      operator: { notify: () => undefined },
      chat: { botIsMod: true },
      outbox: {},
      ...(withBeacon ? { beacon: { period: PERIOD_S } } : {}),
    });
    try {
      const chat = stack.chatServer;
      const mod = chat.viewer('bench_mod', { mod: true });
      const events = stack.bot.engine.events;
      const samples: Sample[] = [];
      for (let d = 0; d < DRAWS + 1; d++) {
        const opened = new Promise<DrawRecord>((resolve) => events.once('draw-opened', resolve));
        chat.inject(mod, '!giveaway start giftdrop-mug 1 60');
        const open = await opened;
        for (let i = 0; i < 5; i++) chat.inject(chat.viewer(`bench_${d}_${i}`), '!enter');
        while ((stack.bot.engine.status().match(/(\d+) entered/)?.[1] ?? '0') !== '5')
          await new Promise((r) => setTimeout(r, 5));
        const closed = new Promise<number>((resolve) => events.once('draw-closed', () => resolve(performance.now())));
        const finished = new Promise<{ at: number; wall: number; record: DrawRecord }>((resolve) => {
          const on = (r: DrawRecord) => {
            if (r.id !== open.id) return;
            events.off('draw-finished', on);
            resolve({ at: performance.now(), wall: Date.now(), record: r });
          };
          events.on('draw-finished', on);
        });
        chat.inject(mod, '!giveaway end');
        const t0 = await closed;
        const done = await finished;
        if (d === 0) continue; // warm-up (bundles, BLS tables, connections)
        const sample: Sample = { closeToFinishMs: done.at - t0 };
        const b = done.record.fairness.beacon;
        if (withBeacon) {
          if (!b || 'unavailable' in b || !b.sandbox) throw new Error('bench: the draw did not use the sandbox beacon');
          sample.afterRoundMs = done.wall - roundTimeMs(b.sandbox, b.round);
        }
        samples.push(sample);
      }
      return samples;
    } finally {
      await stack.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<BenchResult[]> {
  const off = await runDraws(false);
  const on = await runDraws(true);
  const offMs = median(off.map((s) => s.closeToFinishMs));
  const onMs = median(on.map((s) => s.closeToFinishMs));
  const overhead = median(on.map((s) => s.afterRoundMs!));
  return [
    {
      name: 'beacon.closeToFinished.off',
      value: Math.round(offMs),
      unit: 'ms',
      detail: `median of ${DRAWS} link giveaways, beacon off (anchor)`,
    },
    {
      name: 'beacon.closeToFinished.sandbox',
      value: Math.round(onMs),
      unit: 'ms',
      detail: `median of ${DRAWS}, sandbox beacon with ${PERIOD_S} s rounds`,
    },
    {
      name: 'beacon.extraLatency',
      value: Math.round(onMs - offMs),
      unit: 'ms',
      detail: `median(beacon) - median(off); ratio ${(onMs / Math.max(1, offMs)).toFixed(1)}x; mostly the wait for the next round (0-${PERIOD_S} s here, 0-3 s on quicknet; back-to-back draws fall at the same phase of the rounds)`,
    },
    {
      name: 'beacon.afterRoundPublished',
      value: Math.round(overhead),
      unit: 'ms',
      detail: `round publication -> draw finished (fetch, BLS verify, picks, link creation); the anchor's whole close -> finished is ${Math.round(offMs)} ms`,
    },
  ];
}
