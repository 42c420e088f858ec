/**
 * The recorded run of the power-cut test (test/storage-power-cut.test.ts): the real engine, the
 * real event intake and the real HTTP server (webhooks over 127.0.0.1) and the real delivery
 * tracker, over the real FileDrawRepository on a simulated disk (power-cut-fs.ts) whose syncs take
 * real time. Every promise made to the outside is stamped with how many disk operations had
 * happened when it was made: the 200 a webhook client saw, a finish call told to the shop, a chat
 * line, a flushed entry, a delivery update resolved.
 *
 * The run: six webhooks at once (two GIFT_DRAW_STARTED, three GIFT_DRAW_ENDED for draws the bot
 * does not know, one of another shop), whose ids share event-file syncs (group commit); a redelivery;
 * a GIFT_DRAW_STARTED whose event-id sync fails (EIO) and one whose history append runs out of
 * space (ENOSPC), each answered 503 and then 200 on its redelivery; entries (one journal sync
 * failing with EIO); the close and the
 * finish at the shop; winners announced and whispered (delivery.json); an ORDER_PLACED redeeming
 * a gift; a link giveaway with entries, its links and deliveries; a reroll of one of its winners.
 * `restart` starts the same parts again on a disk a cut left, for the redeliveries.
 */
import { EventIntake } from '../../src/events/event-intake.js';
import { eventDispatch } from '../../src/events/dispatch.js';
import { DeliveryTracker, type WhisperPort } from '../../src/delivery/tracker.js';
import { signWebhookBody, SHOP_SIGNATURE_HEADER } from '../../src/fourthwall/webhooks.js';
import type { ProductInfo } from '../../src/giveaway/model.js';
import { mergeGiveawaySettings } from '../../src/giveaway/settings.js';
import { FileDrawRepository } from '../../src/storage/index.js';
import { startHttpServer, type BotHttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/logging/index.js';
import * as F from './fourthwall-fixtures.js';
import { chatMsg, FakeShop, harness, START_MS, type Harness } from './giveaway-fakes.js';
import { LogCapture } from './log-capture.js';
import { emptyImage, PowerCutFs } from './power-cut-fs.js';

export const DIR = '/data';
const SECRET = 'power-cut-webhook-secret';
const SHOP: string = F.IDS.shop;
const MUG: ProductInfo = { id: '3f1c0a52-3333-4a6b-9d1e-000000000003', name: 'Mug', slug: 'mug' };
const mod = () => chatMsg('modjo', { roles: { moderator: true } });

/** A webhook as Fourthwall sends it: its envelope id, type, the draw it is about, and its bytes. */
interface Webhook {
  eventId: string;
  type: string;
  drawId?: string;
  /** For ORDER_PLACED: the redeemed prize (draw and winner). */
  redeems?: { drawId: string; userId: string };
  body: string;
}

/** What the outside world was told, each stamped with how many disk operations had happened. */
interface Told {
  /** Every answer a webhook client saw (200s and others). */
  answers: { at: number; eventId: string; status: number }[];
  finishes: { at: number; drawId: string; userIds: string[] }[];
  chat: { at: number; text: string }[];
  flushed: { at: number; drawId: string; userIds: string[] }[];
  /** Delivery updates that resolved (on disk by the repository's contract). */
  deliveries: { at: number; drawId: string; userId: string; fields: Record<string, string> }[];
  whispers: { at: number; userId: string }[];
  /** A draw's opening said in chat (with its commitment): stamped at the engine's `draw-opened`, emitted with the line. */
  opened: { at: number; drawId: string; commitment: string }[];
  /** Winners said in chat: the engine's `winners` and `rerolled`, emitted with their lines. */
  announced: { at: number; drawId: string; logins: string[] }[];
}

export interface RecordedRun {
  fs: PowerCutFs;
  told: Told;
  webhooks: Webhook[];
  /** Every draw id and its Fourthwall draw id, and every login that was ever a winner, per draw. */
  draws: Map<string, { fourthwallId?: string; commitment: string }>;
  /** Lines the bot logged about webhooks it did not acknowledge. */
  refusals: string[];
  /** Answers the run did not expect (none, for a bot that keeps its promises). */
  surprises: string[];
}

const created = new Date(START_MS).toISOString();

function envelope(eventId: string, type: string, data: unknown, shopId: string = SHOP): string {
  return JSON.stringify(F.envelopeFixture(type, data, { id: eventId, shopId, createdAt: created }));
}

/** A GIFT_DRAW_STARTED for the fake shop's draw `drawId` (same gifts). */
function drawStarted(shop: FakeShop, eventId: string, drawId: string, shopId: string = SHOP): Webhook {
  const draw = shop.draws.get(drawId)!;
  const data = {
    ...F.drawFixture(),
    id: drawId,
    giveawayId: draw.giveawayId,
    gifts: draw.gifts.map((g) => ({ id: g.id, status: g.status })),
    createdAt: draw.createdAt,
    durationSeconds: draw.durationSeconds,
  };
  return { eventId, type: 'GIFT_DRAW_STARTED', drawId, body: envelope(eventId, 'GIFT_DRAW_STARTED', data, shopId) };
}

/** The parts of the bot a webhook goes through, on one disk. */
export interface Bot {
  h: Harness;
  server: BotHttpServer;
  intake: EventIntake;
  tracker: DeliveryTracker;
  logs: LogCapture;
  url: string;
  /** Posts a webhook over HTTP; returns the status (stamped into `answers` when given). */
  post(w: Webhook, answers?: Told['answers']): Promise<number>;
  stop(): Promise<void>;
}

/** Starts the engine, intake, HTTP server and delivery tracker on `fs` (the shop's state carried over). */
export async function startBot(
  fs: PowerCutFs,
  shop: FakeShop,
  onWhisper: (userId: string) => void = () => undefined,
): Promise<Bot> {
  const h = await harness({ dir: DIR, fileSystem: fs, shop, start: false });
  const logs = new LogCapture();
  const logger = createLogger({ destination: logs, level: 'info' });
  const whispers: WhisperPort = {
    available: () => true,
    send: async (userId) => {
      onWhisper(userId);
      return true;
    },
  };
  const tracker = new DeliveryTracker({
    store: h.repo,
    events: h.svc.events,
    chat: h.chat,
    messages: mergeGiveawaySettings().messages,
    clock: h.clock,
    logger,
    settings: {
      whispers: true,
      pollSeconds: 0,
      reminders: { whisper: false, chat: false, atStreamStart: false, afterHours: 0 },
    },
    whispers,
  });
  await h.svc.start();
  await tracker.start();
  const intake = new EventIntake({
    mode: 'live',
    handle: eventDispatch({
      engine: h.svc,
      delivery: {
        onOrder: async (order) => {
          const giftId = order.source?.giftId;
          if (giftId)
            await tracker.redeemed(giftId, {
              friendlyId: order.friendlyId ?? undefined,
              createdAt: order.createdAt ?? undefined,
            });
        },
      },
      shop: { handle: async () => undefined },
    }),
    handledTypes: new Set(['GIFT_DRAW_STARTED', 'GIFT_DRAW_ENDED', 'GIFT_PURCHASE', 'ORDER_PLACED']),
    store: h.repo,
    shopId: async () => SHOP,
    clock: h.clock,
    logger,
  });
  const server = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    logger,
    secrets: { webhookSecret: SECRET },
    onEvent: (e) => intake.receive(e),
    health: () => ({ status: 'ok', mode: 'live', chat: 'connected', openDraws: 0 }),
    now: () => h.clock.now(),
  });
  const url = `${server.url}/webhooks/fourthwall`;
  return {
    h,
    server,
    intake,
    tracker,
    logs,
    url,
    async post(w, answers) {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [SHOP_SIGNATURE_HEADER]: signWebhookBody(w.body, SECRET) },
        body: w.body,
      });
      // Stamped when the client has the answer's status line: what it saw, when it saw it.
      answers?.push({ at: fs.ops.length, eventId: w.eventId, status: res.status });
      await res.arrayBuffer();
      return res.status;
    },
    async stop() {
      await server.close();
      await intake.stop();
      tracker.stop();
      await tracker.idle();
      await h.shutdown();
    },
  };
}

/** The run (see the module comment). */
export async function recordRun(): Promise<RecordedRun> {
  const fs = new PowerCutFs(emptyImage([DIR]));
  // A disk's sync takes time: a reply written before a sync reaches its client before the sync is recorded.
  fs.syncDelay = () => new Promise((r) => setTimeout(r, 1));
  const told: Told = {
    answers: [],
    finishes: [],
    chat: [],
    flushed: [],
    deliveries: [],
    whispers: [],
    opened: [],
    announced: [],
  };
  const shop = new FakeShop();
  shop.products = [MUG];
  const bot = await startBot(fs, shop, (userId) => told.whispers.push({ at: fs.ops.length, userId }));
  const { h } = bot;
  const say = h.chat.say.bind(h.chat);
  h.chat.say = (text, options) => {
    told.chat.push({ at: fs.ops.length, text });
    say(text, options);
  };
  h.svc.events.on('draw-opened', (r) =>
    told.opened.push({ at: fs.ops.length, drawId: r.id, commitment: r.fairness.commitment }),
  );
  h.svc.events.on('winners', (r, winners) =>
    told.announced.push({ at: fs.ops.length, drawId: r.id, logins: winners.map((w) => w.login) }),
  );
  h.svc.events.on('rerolled', (r, _old, winner) =>
    told.announced.push({ at: fs.ops.length, drawId: r.id, logins: [winner.login] }),
  );
  const finish = h.shop.finishDraw.bind(h.shop);
  h.shop.finishDraw = (drawId, participants) => {
    told.finishes.push({ at: fs.ops.length, drawId, userIds: participants.map((p) => p.userId) });
    return finish(drawId, participants);
  };
  const update = h.repo.updateDelivery.bind(h.repo);
  h.repo.updateDelivery = async (drawId, userId, patch) => {
    const next = await update(drawId, userId, patch);
    const fields = Object.fromEntries(
      Object.entries(patch).filter((e): e is [string, string] => typeof e[1] === 'string'),
    );
    told.deliveries.push({ at: fs.ops.length, drawId, userId, fields });
    return next;
  };
  const enterAll = async (drawIds: string[], logins: string[]) => {
    for (const l of logins) h.svc.enter(chatMsg(l));
    await h.repo.flush();
    for (const drawId of drawIds)
      told.flushed.push({ at: fs.ops.length, drawId, userIds: logins.map((l) => `u-${l}`) });
  };
  const webhooks: Webhook[] = [];
  const post = async (w: Webhook) => {
    if (!webhooks.includes(w)) webhooks.push(w);
    return bot.post(w, told.answers);
  };
  // A wrong answer is noted (the first test asserts none), not thrown: the run goes on, so the cut
  // checks still see what such a bot leaves on the disk.
  const surprises: string[] = [];
  const expectStatus = (status: number, want: number, what: string) => {
    if (status !== want) surprises.push(`${what} answered ${status}, expected ${want}`);
  };

  try {
    // Six webhooks at once: their ids share the event file's syncs.
    for (const id of ['gdr_a', 'gdr_b', 'gdr_c', 'gdr_d'])
      shop.addDraw({ id, gifts: id === 'gdr_a' ? 2 : 1, durationSeconds: 60 });
    const first = [
      drawStarted(shop, 'evt-a', 'gdr_a'),
      drawStarted(shop, 'evt-b', 'gdr_b'),
      ...[1, 2, 3].map((n) => ({
        eventId: `evt-ended-${n}`,
        type: 'GIFT_DRAW_ENDED',
        body: envelope(`evt-ended-${n}`, 'GIFT_DRAW_ENDED', { ...F.drawFixture(), id: `gdr_unknown_${n}` }),
      })),
      { ...drawStarted(shop, 'evt-other-shop', 'gdr_a', 'sh_another_shop'), drawId: undefined },
    ];
    const statuses = await Promise.all(first.map(post));
    statuses.forEach((s, i) => expectStatus(s, 200, first[i]!.eventId));
    expectStatus(await post(first[0]!), 200, 'a redelivery');

    // A sync that fails (EIO) and a write that runs out of space (ENOSPC): refused, then acknowledged.
    const eio = drawStarted(shop, 'evt-c', 'gdr_c');
    fs.failNext({ on: 'sync', path: /\/events\.jsonl$/, code: 'EIO' });
    expectStatus(await post(eio), 503, 'a webhook whose id sync failed');
    expectStatus(await post(eio), 200, 'its redelivery');
    const enospc = drawStarted(shop, 'evt-d', 'gdr_d');
    fs.failNext({ on: 'write', path: /\/history\.jsonl$/, code: 'ENOSPC' });
    expectStatus(await post(enospc), 503, 'a webhook whose draw could not be saved');
    expectStatus(await post(enospc), 200, 'its redelivery');

    // Entries in small batches (each a journal append and sync), then the close and the finish.
    const gifts = ['gdr_a', 'gdr_b', 'gdr_c', 'gdr_d'];
    for (let i = 0; i < 40; i += 2) {
      if (i === 20) {
        // A journal sync that fails (EIO): the batch goes again with the next flush, never twice in the file.
        fs.failNext({ on: 'sync', path: /\/journal\/gdr_a\.jsonl$/, code: 'EIO' });
        for (const l of [`gv${i}`, `gv${i + 1}`]) h.svc.enter(chatMsg(l));
        const failed = await h.repo.flush().then(
          () => false,
          () => true,
        );
        if (!failed) throw new Error('recorded run: the journal flush with a failing sync resolved');
        await enterAll(gifts, [`gv${i}`, `gv${i + 1}`]);
        continue;
      }
      await enterAll(gifts, [`gv${i}`, `gv${i + 1}`]);
    }
    h.svc.enter(chatMsg('fay')); // journaled by the close's flush, never awaited alone
    h.clock.advance(60_000);
    await h.svc.whenIdle();
    for (const id of gifts)
      if ((await h.repo.getDraw(id))?.status !== 'finished') surprises.push(`${id} did not finish`);
    await bot.tracker.idle();

    // A winner redeems their gift (ORDER_PLACED with its gift id): acknowledged once recorded.
    const won = (await h.repo.getDraw('gdr_a'))?.winners[0] ?? { userId: 'nobody', giftId: 'gft_none' };
    const order = { ...F.orderFixture(), source: { type: 'GIFT', giftId: won.giftId } };
    const redeem: Webhook = {
      eventId: 'evt-order',
      type: 'ORDER_PLACED',
      redeems: { drawId: 'gdr_a', userId: won.userId },
      body: envelope('evt-order', 'ORDER_PLACED', order),
    };
    expectStatus(await post(redeem), 200, 'ORDER_PLACED');

    // A link giveaway with its deliveries, then a reroll of its first winner.
    const res = await h.svc.startLinkGiveaway(mod(), 'mug', 2, 30);
    if (!res.ok) throw new Error(res.message);
    const linkId = (res as { id: string }).id;
    for (let i = 0; i < 18; i += 3) await enterAll([linkId], [`lv${i}`, `lv${i + 1}`, `lv${i + 2}`]);
    h.clock.advance(30_000);
    await h.svc.whenIdle();
    await bot.tracker.idle();
    const linkRecord = await h.repo.getDraw(linkId);
    if (linkRecord?.status !== 'finished') surprises.push(`the link giveaway did not finish (${linkRecord?.status})`);
    const rerolled = await h.svc.reroll(`@${linkRecord?.winners[0]?.login ?? 'nobody'}`, mod(), linkId);
    if (!rerolled.ok) surprises.push(`the reroll was refused: ${rerolled.message}`);
    await h.svc.whenIdle();
    await bot.tracker.idle();
  } finally {
    await bot.stop();
  }
  fs.syncDelay = undefined;

  const draws = new Map<string, { fourthwallId?: string; commitment: string }>();
  const check = await FileDrawRepository.open(DIR, { fileSystem: fs, readOnly: true });
  for (const r of await check.listDraws()) {
    draws.set(r.id, {
      ...(r.source.drawId ? { fourthwallId: r.source.drawId } : {}),
      commitment: r.fairness.commitment,
    });
  }
  await check.close();
  const refusals = bot.logs.lines.filter((l) => l.includes('not acknowledged'));
  return { fs, told, webhooks, draws, refusals, surprises };
}
