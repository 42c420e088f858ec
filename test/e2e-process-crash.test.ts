/**
 * Crash safety of the REAL bot process (`node --import tsx src/main.ts`, live mode against the
 * local Fourthwall sandbox and chat server): SIGKILL during an open draw after entries were
 * journaled, and SIGKILL while the finish call is in flight; each time the bot is restarted on the
 * same DATA_DIR and HTTP port. Proves no entry is lost, the committed seed is kept, and Fourthwall
 * sees exactly one processed finish with the winners recorded before the crash.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DrawRecord } from '../src/giveaway/model.js';
import {
  enterAll,
  finishCalls,
  finishSeen,
  freePort,
  journaledEntrants,
  logins,
  makeTempDir,
  postWebhook,
  readDraw,
  sandboxDraw,
  setShopLive,
  spawnBot,
  startLocalServers,
  waitForDrawStatus,
  waitUntil,
  writeSettingsFile,
  type BotProcess,
  type LocalServers,
} from './support/e2e-stack.js';

let servers: LocalServers;
let dataDir: string;
let configFile: string;
let cleanup: () => Promise<void>;
const bots: BotProcess[] = [];

beforeEach(async () => {
  servers = await startLocalServers();
  ({ dir: dataDir, cleanup } = await makeTempDir());
  configFile = await writeSettingsFile(dataDir, {});
  setShopLive(servers);
});
afterEach(async () => {
  for (const b of bots.splice(0)) await b.kill('SIGKILL');
  await servers.close();
  await cleanup();
});

async function start(httpPort: number): Promise<BotProcess> {
  // debug: the line for a duplicate webhook (the catch-up poll may have met the id first) is at debug
  const bot = await spawnBot(servers, { dataDir, httpPort, configFile, logLevel: 'debug' });
  bots.push(bot);
  return bot;
}

function startupLine(bot: BotProcess): Record<string, unknown> {
  const line = bot.stderr.find((l) => l.includes('"webhooks"'))!;
  return JSON.parse(line) as Record<string, unknown>;
}

function winnerLines(): string[] {
  return servers.chat.botMessages().filter((m) => m.includes('congratulations'));
}

describe('the real bot process, killed and restarted', () => {
  it('SIGKILL during an open draw: after restart no entry is lost, the draw resumes and is finished exactly once', async () => {
    const port = await freePort();
    const first = await start(port);
    const { draw } = servers.fourthwall.control.simulateGiftPurchase({
      quantity: 3,
      durationSeconds: 30,
      username: 'crash_fan',
    });
    const drawId = draw['id'] as string;
    await servers.chat.waitFor(
      () => servers.chat.botMessages().some((m) => m.startsWith('🎁 crash_fan gifted')),
      5000,
      'draw announced',
    );
    const opened = (await readDraw(dataDir, drawId))!;
    const before = enterAll(servers.chat, logins('early', 6));
    // the entries are on disk (the journal), not just in the process's memory
    await waitUntil(() => journaledEntrants(dataDir, drawId).length === 6, 5000, 'six entries journaled');

    const killed = await first.kill('SIGKILL');
    expect(killed.signal).toBe('SIGKILL');
    expect(finishCalls(servers.fourthwall, drawId)).toHaveLength(0);

    const second = await start(port);
    expect(second.port).toBe(port);
    expect(startupLine(second)['openDraws']).toBe(1);
    expect((await second.health()).body.openDraws).toBe(1);
    // Fourthwall redelivering the GIFT_DRAW_STARTED after the restart is recognised (durable processed
    // ids; the catch-up poll at start may have met the id first, then the redelivery is a duplicate)
    const started = servers.fourthwall.control.deliveries.find(
      (d) => d.type === 'GIFT_DRAW_STARTED' && d.body.includes(drawId),
    )!;
    const again = await postWebhook(second.webhookUrl, started.body, { secret: servers.fourthwall.webhookSecret });
    expect(again.status).toBe(200);
    await second.waitForLine(
      (l) =>
        (l.includes('webhook already processed before') || l.includes('duplicate webhook ignored')) &&
        l.includes(started.eventId),
      5000,
      'redelivery ignored',
    );
    // the restored draw still takes entries, and an old entrant is not counted twice
    const late = enterAll(servers.chat, ['late_fan', 'early0']);
    await waitUntil(
      () => journaledEntrants(dataDir, drawId).some((e) => e.login === 'late_fan'),
      5000,
      'late entry journaled',
    );
    servers.chat.inject(servers.chat.broadcaster, '!giveaway end');

    const rec: DrawRecord = await waitForDrawStatus(dataDir, drawId);
    expect(rec.status).toBe('finished');
    const expected = [...before, late[0]!].map((v) => v.userId).sort();
    expect(rec.frozenEntrants!.map((e) => e.userId).sort()).toEqual(expected);
    expect(rec.entrants).toBe(7);
    expect(rec.winners).toHaveLength(3);
    expect(new Set(rec.winners.map((w) => w.userId)).size).toBe(3);
    // the seed committed before the crash is the one revealed
    expect(rec.fairness.commitment).toBe(opened.fairness.commitment);
    expect(rec.fairness.seed).toMatch(/^[0-9a-f]{64}$/);

    // one finish call, answered 200; the sandbox's draw finished with the same winners
    expect(finishSeen(servers.fourthwall, drawId)).toEqual({
      finishStatuses: [200],
      status: 'FINISHED',
      winnerIds: rec.winners.map((w) => w.userId).sort(),
    });
    await servers.chat.waitFor(() => winnerLines().length === 1, 5000, 'winners announced');
    expect(servers.chat.botMessages().filter((m) => m.startsWith('🎁 crash_fan gifted'))).toHaveLength(1);

    // Fourthwall's GIFT_DRAW_ENDED reaches the restarted bot on the same URL and changes nothing
    await servers.fourthwall.control.waitForDelivery(
      (d) => d.type === 'GIFT_DRAW_ENDED' && d.delivered && d.body.includes(drawId),
    );
    expect((await second.kill('SIGTERM')).code).toBe(0);
    expect(winnerLines()).toHaveLength(1);
    expect(journaledEntrants(dataDir, drawId)).toEqual([]);
  });

  it('SIGKILL while the finish call is in flight: the restarted bot asks Fourthwall and sends the SAME winners, processed once', async () => {
    const port = await freePort();
    const first = await start(port);
    servers.fourthwall.control.faults.hang('finishDraw');
    const { draw } = servers.fourthwall.control.simulateGiftPurchase({
      quantity: 2,
      durationSeconds: 2,
      username: 'inflight_fan',
    });
    const drawId = draw['id'] as string;
    await servers.chat.waitFor(
      () => servers.chat.botMessages().some((m) => m.startsWith('🎁 inflight_fan gifted')),
      5000,
      'draw announced',
    );
    enterAll(servers.chat, logins('inflight', 5));
    await waitUntil(() => journaledEntrants(dataDir, drawId).length === 5, 5000, 'five entries journaled');
    // the bot picked, persisted its winners and sent them; the sandbox holds the request unanswered
    await waitUntil(
      () => finishCalls(servers.fourthwall, drawId).some((r) => r.status === 'hung'),
      10_000,
      'finish in flight',
    );
    const persisted = await waitForDrawStatus(dataDir, drawId, ['drawing']);
    expect(persisted.finishInFlight).toBe(true);
    expect(persisted.winners).toHaveLength(2);
    expect(sandboxDraw(servers.fourthwall, drawId).status).toBe('OPEN');

    await first.kill('SIGKILL');
    const gets = servers.fourthwall.control.requests.filter((r) => r.operation === 'getDraw').length;
    const second = await start(port);

    const rec = await waitForDrawStatus(dataDir, drawId);
    expect(rec.status).toBe('finished');
    // reconciled by asking first, then the same winners again: one processed finish
    expect(servers.fourthwall.control.requests.filter((r) => r.operation === 'getDraw').length).toBeGreaterThan(gets);
    const winners = persisted.winners.map((w) => w.userId);
    expect(rec.winners.map((w) => w.userId)).toEqual(winners);
    expect(finishSeen(servers.fourthwall, drawId)).toEqual({
      finishStatuses: ['hung', 200],
      status: 'FINISHED',
      winnerIds: [...winners].sort(),
    });
    const fw = sandboxDraw(servers.fourthwall, drawId);
    for (const w of rec.winners) expect(w.redeemUrl).toBe(fw.winners.find((x) => x.userId === w.userId)!.redeemUri);
    await servers.chat.waitFor(() => winnerLines().length === 1, 5000, 'winners announced');
    expect((await second.kill('SIGTERM')).code).toBe(0);
    expect(winnerLines()).toHaveLength(1);
  });
});
