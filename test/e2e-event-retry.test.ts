/**
 * Nothing acknowledged is lost, nothing is given twice (issue 9), with the real bot in-process
 * against the Fourthwall sandbox and the chat server over real sockets:
 * - a save failure (EIO) while opening a GIFT_DRAW_STARTED draw leaves the event unprocessed and
 *   unacknowledged (503, said in one line): the bot retries it, Fourthwall's redelivery is answered
 *   200 once it is saved, and the draw runs once;
 * - `!giveaway retry` after a link creation whose outcome was unknown reuses the package that
 *   attempt created (`GET /giveaway-links/packages`): the sandbox holds one package, not two.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DrawRecord } from '../src/giveaway/model.js';
import {
  enterAll,
  logins,
  setShopLive,
  startInProcessStack,
  waitUntil,
  type InProcessStack,
} from './support/e2e-stack.js';
import { drawSettled, nextDrawOpened, startLinkStack, type LinkStack } from './support/e2e-link-stack.js';
import { FailingSaves } from './support/failing-repository.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('a handling failure is not acknowledged', () => {
  it('a save failure on GIFT_DRAW_STARTED is answered 503 and retried: the draw opens, runs and finishes; the event is processed once', async () => {
    let storage: FailingSaves | undefined;
    const s: InProcessStack = await startInProcessStack({
      fourthwall: { drawDurationSeconds: 4 },
      bot: {
        events: { retryBaseMs: 50 },
        wrapRepository: (repo) => (storage = new FailingSaves(repo)),
      },
    });
    cleanups.push(() => s.close());
    setShopLive({ fourthwall: s.fourthwall, chat: s.chatServer });
    storage!.failNext((r) => r.kind === 'gift-draw' && r.status === 'open');

    const opened = new Promise<DrawRecord>((resolve) => s.bot.engine.events.once('draw-opened', resolve));
    const { draw } = s.fourthwall.control.simulateGiftPurchase({ quantity: 1, username: 'eio_fan' });
    const drawId = draw['id'] as string;
    const delivery = await s.fourthwall.control.waitForDelivery((d) => d.type === 'GIFT_DRAW_STARTED' && d.done);
    // Refused while it was not saved, acknowledged on Fourthwall's redelivery once it was.
    expect(delivery.statuses).toEqual([503, 200]);

    // The failed save was not swallowed: said in one line, not marked processed, then retried by the bot.
    const record = await opened;
    expect(record.id).toBe(drawId);
    expect(storage!.failed.map((r) => r.id)).toEqual([drawId]);
    expect(
      s.logs.lines.filter((l) => l.includes('not acknowledged (503)') && l.includes(delivery.eventId)),
    ).toHaveLength(1);
    await waitUntil(() => s.bot.repo.isEventProcessed(delivery.eventId), 5000, 'event marked processed');
    expect(record.source.eventId).toBe(delivery.eventId);

    // The draw runs with the rest of its window and finishes at Fourthwall.
    await s.chatServer.waitFor(
      () => s.chatServer.botMessages().some((m) => m.startsWith('🎁 eio_fan gifted')),
      5000,
      'draw announced',
    );
    enterAll(s.chatServer, logins('eio', 3));
    await waitUntil(async () => (await s.bot.repo.getDraw(drawId))?.status === 'finished', 15_000, 'draw finished');
    const finished = (await s.bot.repo.getDraw(drawId))!;
    expect(finished.winners).toHaveLength(1);
    expect(s.fourthwall.control.requests.filter((r) => r.operation === 'finishDraw' && r.status === 200)).toHaveLength(
      1,
    );
    // One delivery (two attempts) of the event; the bot opened the draw once.
    expect(s.fourthwall.control.deliveries.filter((d) => d.eventId === delivery.eventId)).toHaveLength(1);
    expect(s.chatServer.botMessages().filter((m) => m.startsWith('🎁 eio_fan gifted'))).toHaveLength(1);
    expect(s.bot.events.retrying).toBe(0);
  });
});

describe('!giveaway retry after an unknown outcome', () => {
  it('reuses the package the unconfirmed attempt created: one package at Fourthwall, the winner gets its link', async () => {
    const s: LinkStack = await startLinkStack();
    cleanups.push(() => s.close(true));
    // Fourthwall creates the package, then the connection drops before the answer.
    s.fw.control.faults.dropAfterProcessing('createGiveawayLinks');

    const opened = nextDrawOpened(s);
    const from = s.mark();
    s.say(s.mod, '!giveaway start giftdrop-mug 2 60');
    const open = await opened;
    await s.nextBotLine(/Giveaway: \d+x Giftdrop Mug/, from);
    s.enter(['ana', 'ben', 'cai', 'dee']);
    const first = drawSettled(s, open.id);
    s.say(s.mod, '!giveaway end');
    const { event, record } = await first;
    expect(event).toBe('draw-failed');
    expect(record.failure?.reason).toMatch(/did not confirm/);
    expect(s.fw.state.packages.size).toBe(1);
    const created = [...s.fw.state.packages.values()][0]!;

    const again = drawSettled(s, open.id);
    s.say(s.mod, '!giveaway retry');
    expect((await again).event).toBe('draw-finished');
    await s.idle();

    // No second package: one creation call in all, and the list was read before deciding.
    expect(s.fw.state.packages.size).toBe(1);
    expect(s.requests('createGiveawayLinks')).toHaveLength(1);
    expect(s.requests('listGiveawayPackages').length).toBeGreaterThanOrEqual(1);
    const row = await s.record(open.id);
    expect(row.status).toBe('finished');
    expect(row.source.packageId).toBe(created.packageId);
    expect(row.winners.map((w) => w.redeemUrl).sort()).toEqual(created.giveawayLinks.map((l) => l.link).sort());
  });

  it('when the packages cannot be read, the retry creates nothing and says so', async () => {
    const s: LinkStack = await startLinkStack();
    cleanups.push(() => s.close(true));
    s.fw.control.faults.dropAfterProcessing('createGiveawayLinks');
    const opened = nextDrawOpened(s);
    s.say(s.mod, '!giveaway start giftdrop-mug 1 60');
    const open = await opened;
    s.enter(['ana', 'ben']);
    const first = drawSettled(s, open.id);
    s.say(s.mod, '!giveaway end');
    expect((await first).event).toBe('draw-failed');

    s.fw.control.faults.fail('listGiveawayPackages', 10, 401);
    const again = drawSettled(s, open.id);
    s.say(s.mod, '!giveaway retry');
    const { event, record } = await again;
    expect(event).toBe('draw-failed');
    expect(record.failure?.reason).toMatch(/nothing was created/);
    expect(s.requests('createGiveawayLinks')).toHaveLength(1);
    expect(s.fw.state.packages.size).toBe(1);
  });
});
