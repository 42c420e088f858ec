/**
 * The close of a followers-only gift draw (issue 28) through the product as it runs
 * (startLocalStack: real engine, file storage, the Fourthwall client and the bot's Helix client
 * talking to the local sandboxes over sockets), with the local Helix API at Twitch's real limit
 * (800 points a minute, refilled as Twitch's bucket) and 20 ms latency per answer; 30% of the
 * entrants follow; 10 gifts. At 5,000 and 50,000 entrants: `endNow` (the `!giveaway end` call) ->
 * draw finished (winners checked with Twitch, finish answered at the sandbox, record saved),
 * median of 3, with the Helix calls the close made. Anchor, same run and same sizes: the same
 * close with no account rule (no Helix call); the row's ratio is followers-only / anchor. Entrants
 * go in through the engine's entry call, as in e2e-1-close (fresh viewer ids each round, so no
 * round is answered from the previous round's cache). Non-default settings are named in the rows.
 */
import type { SandboxHelix } from '../src/sandbox/helix/index.js';
import type { ChatServer } from '../src/sandbox/chat/index.js';
import {
  QUICK,
  drawEnded,
  enterMessage,
  enterViewers,
  loadNote,
  median,
  openGiftDraw,
  startBenchStack,
  type BenchStack,
} from './e2e-support.js';
import type { BenchResult } from './types.js';

const SIZES = QUICK ? [5_000] : [5_000, 50_000];
const ROUNDS = QUICK ? 1 : 3;
const GIFTS = 10;
const FOLLOW_SHARE = 0.3;
/** A viewer follows when i % 10 < 3 (30%). */
const follows = (i: number) => i % 10 < FOLLOW_SHARE * 10;

interface Round {
  ms: number;
  helixCalls: number;
  winnersFollowing: number;
  setAside: number;
  unchecked: number;
}

async function closeRound(s: BenchStack, from: number, count: number): Promise<Round> {
  const drawId = await openGiftDraw(s, GIFTS);
  await enterViewers(s, from, count);
  if (s.bot.engine.entrantCount(drawId) !== count) throw new Error('bench: not every viewer entered');
  const calls = s.helix.calls.length;
  const done = drawEnded(s, drawId);
  const t = performance.now();
  if (s.bot.engine.endNow() !== 1) throw new Error('bench: endNow closed no draw');
  const r = await done;
  const ms = performance.now() - t;
  await s.bot.engine.whenIdle();
  if (r.status !== 'finished' || r.winners.length !== GIFTS)
    throw new Error(`bench: draw ${r.status} with ${r.winners.length} winners`);
  const followerIds = new Set<string>();
  for (let i = from; i < from + count; i++) if (follows(i)) followerIds.add(enterMessage(i, '').userId);
  const account = (r.rules?.['account'] ?? {}) as { unchecked?: number };
  return {
    ms,
    helixCalls: s.helix.calls.length - calls,
    winnersFollowing: r.winners.filter((w) => followerIds.has(w.userId)).length,
    setAside: r.setAside?.length ?? 0,
    unchecked: account.unchecked ?? 0,
  };
}

async function series(followersOnly: boolean, size: number): Promise<Round[]> {
  const s = await startBenchStack(3600, {
    settings: followersOnly ? { eligibility: { followersOnly: true } } : {},
    helix: {
      ratePerMinute: 800,
      latencyMs: 20,
      prepare(helix: SandboxHelix, chat: ChatServer) {
        if (!followersOnly) return;
        for (let i = 0; i < ROUNDS * size; i++)
          if (follows(i)) helix.setFollow(chat.channelId, enterMessage(i, '').userId, Date.now() - 90 * 86_400_000);
      },
    },
  });
  try {
    const rounds: Round[] = [];
    for (let k = 0; k < ROUNDS; k++) rounds.push(await closeRound(s, k * size, size));
    return rounds;
  } finally {
    await s.dispose();
  }
}

export async function run(): Promise<BenchResult[]> {
  const out: BenchResult[] = [];
  for (const size of SIZES) {
    const anchor = await series(false, size);
    const rules = await series(true, size);
    const ms = median(rules.map((r) => r.ms));
    const anchorMs = median(anchor.map((r) => r.ms));
    const calls = median(rules.map((r) => r.helixCalls));
    const allFollow = rules.every((r) => r.winnersFollowing === GIFTS && r.unchecked === 0);
    const n = size.toLocaleString('en-US');
    out.push({
      name: `accountRules.close.followersOnly.${size}`,
      value: Math.round(ms),
      unit: 'ms close -> finished',
      target: '<= 30000 ms, every winner follows, 0 unchecked',
      ok: ms <= 30_000 && allFollow,
      detail:
        `${n} entrants (30% follow), ${GIFTS} gifts, eligibility.followersOnly; local Helix 800 points/min, 20 ms latency; ` +
        `median of ${ROUNDS}; Helix calls ${rules.map((r) => r.helixCalls).join('/')} (median ${calls}; the old all-entrant lookup needed ${n}, ` +
        `${(size / 800).toFixed(1)} min of budget); picks set aside ${rules.map((r) => r.setAside).join('/')}; ` +
        `anchor (no account rule, 0 Helix calls) ${Math.round(anchorMs)} ms, ratio ${(ms / anchorMs).toFixed(2)}; ` +
        `entrants via the engine's entry call; beacon off in both (the seed-only close: live, a close also waits for a drand round, 0-3 s, see e2e.close1M.*); ${loadNote()}${QUICK ? ' (BENCH_QUICK sizes)' : ''}`,
    });
  }
  return out;
}
