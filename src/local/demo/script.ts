/**
 * The scripted stream sandbox mode plays: the broadcaster goes live, a supporter gifts 3 items
 * (a Fourthwall gift draw, announced through signed webhooks), about 20 simulated viewers enter
 * (one twice, a mod, subscribers, a chatter saying other things; one by channel points, whose
 * second redemption is refunded), winners are announced and the
 * links go to the console; two supporters order merch (an order alert in chat) and the second order
 * is the merch train's stop: a link giveaway of a mug; then the broadcaster runs a link giveaway
 * that ends the same way.
 *
 * Contract: every step waits on what really happens (engine events, the sandbox shop's state,
 * the chat transcript), never on a fixed delay; `paceMs` only spaces the simulated chat lines,
 * squeezed so they all fit in the entry window. Each step is narrated in one line before it
 * happens. A step that fails ends the script with `ok: false` and the reason; a stop (Ctrl+C)
 * rejects with DemoAborted.
 * Does not: start or stop the stack, or read input.
 */
import type { Config } from '../../config/index.js';
import { SEED_PRODUCT_IDS } from '../../sandbox/fourthwall/index.js';
import type { DrawRecord } from '../../giveaway/model.js';
import type { SimViewerOptions } from '../../sandbox/chat/index.js';
import type { DemoPrinter } from './output.js';
import { claimAndRedeem } from './claim-visit.js';
import { plural } from '../../shared/plural.js';
import { giftdropCommand } from '../../platform/invocation.js';
import { DemoAborted, DemoTimeout, type DemoWorld, type DrawOutcome } from './world.js';

/** Engine minimum for a link giveaway's entry window, in seconds. */
const MIN_LINK_SECONDS = 5;
/** Gifts the scripted supporter buys. */
const DEMO_GIFTS = 3;
/** Winners of the scripted link giveaway. */
const DEMO_LINK_WINNERS = 2;
/** The scripted supporter. */
const DEMO_SUPPORTER = 'generous_fan';

/** Orders that make the demo's merch train depart (when the settings do not configure one). */
const DEMO_TRAIN_ORDERS = 2;

/** The config with the demo's merch train (every 2nd order: a 1-winner mug giveaway) unless the settings enable one. */
export function withDemoMerchTrain(config: Config, timings: DemoTimings): Config {
  // The demo shows the coalesced thank-you before it ends: a short alert window, unless the
  // settings chose another than the default.
  const alerts =
    config.settings.alerts.burstWindowSeconds === DEFAULT_ALERT_WINDOW_S
      ? { ...config.settings.alerts, burstWindowSeconds: DEMO_ALERT_WINDOW_S }
      : config.settings.alerts;
  config = { ...config, settings: { ...config.settings, alerts } };
  if (config.settings.merchTrain.enabled) return config;
  const merchTrain = {
    ...config.settings.merchTrain,
    enabled: true,
    everyOrders: DEMO_TRAIN_ORDERS,
    product: 'giftdrop-mug',
    winners: 1,
    seconds: Math.max(MIN_LINK_SECONDS, timings.linkSeconds),
  };
  return { ...config, settings: { ...config.settings, merchTrain } };
}

/** The alert window's default (config/shop.ts) and the demo's (a thank-you the demo shows before it ends). */
const DEFAULT_ALERT_WINDOW_S = 60;
const DEMO_ALERT_WINDOW_S = 8;

/** Timings of the script (settings.demo). */
export interface DemoTimings {
  drawSeconds: number;
  linkSeconds: number;
  paceMs: number;
}

export interface ScriptOptions {
  world: DemoWorld;
  printer: DemoPrinter;
  timings: DemoTimings;
  /** Claim window of the giveaway settings (s): winners may take that long to be final. */
  claimSeconds?: number;
  /** Time the script allows for things that are not bound to a window (ms). Default 15 000. */
  stepTimeoutMs?: number;
}

export interface ScriptResult {
  ok: boolean;
  /** History ids of the draws the script ran. */
  drawIds: string[];
  problem?: string;
}

/** One simulated chat line: who (with roles the first time) says what. */
interface Line {
  login: string;
  text: string;
  roles?: SimViewerOptions;
}

/** The cast: about 20 viewers, a mod, a VIP, subscribers, a first-time chatter. */
const CAST: Record<string, SimViewerOptions> = {
  pixel_pete: {},
  mod_mia: { mod: true },
  subby_sam: { subscriber: true, subMonths: 14 },
  eager_eli: {},
  luna_sub: { subscriber: true, subMonths: 3 },
  chatty_cathy: {},
  night_owl_88: {},
  vip_victor: { vip: true },
  gamer_gabi: {},
  tea_time_tom: { subscriber: true, subMonths: 1 },
  first_timer_fay: { firstMessage: true },
  bits_betty: {},
  quiet_quinn: {},
  retro_rick: {},
  speedy_sue: {},
  cozy_carl: {},
  merch_maya: { subscriber: true, subMonths: 26 },
  lurker_leo: {},
  hype_hana: {},
  dino_dan: {},
};

const HELLO: Line[] = [
  { login: 'chatty_cathy', text: 'hi chat! hi streamer!' },
  { login: 'mod_mia', text: 'welcome everyone, be nice :)' },
];

function giftDrawLines(supporter: string): Line[] {
  return [
    { login: 'chatty_cathy', text: `omg gifted merch, thank you ${supporter}!` },
    { login: 'pixel_pete', text: '!enter' },
    { login: 'mod_mia', text: '!enter' },
    { login: 'subby_sam', text: '!enter' },
    { login: 'eager_eli', text: '!enter' },
    { login: 'eager_eli', text: '!enter' },
    { login: 'luna_sub', text: '!enter' },
    { login: 'chatty_cathy', text: 'what do we type again?' },
    { login: 'night_owl_88', text: '!enter' },
    { login: 'vip_victor', text: '!enter' },
    { login: 'gamer_gabi', text: '!enter' },
    { login: 'tea_time_tom', text: '!enter' },
    { login: 'first_timer_fay', text: '!enter' },
    { login: 'chatty_cathy', text: '!enter' },
    { login: 'bits_betty', text: '!enter' },
    { login: 'quiet_quinn', text: '!enter' },
    { login: 'retro_rick', text: '!enter' },
    { login: 'speedy_sue', text: '!enter' },
    { login: 'cozy_carl', text: '!enter' },
    { login: 'merch_maya', text: '!enter' },
    { login: 'lurker_leo', text: '!enter' },
    { login: 'hype_hana', text: 'GL everyone!' },
    { login: 'hype_hana', text: '!enter' },
    { login: 'dino_dan', text: '!enter' },
  ];
}

function linkLines(): Line[] {
  return [
    { login: 'hype_hana', text: '!enter' },
    { login: 'pixel_pete', text: '!enter' },
    { login: 'gamer_gabi', text: 'another one?! !enter' },
    { login: 'gamer_gabi', text: '!enter' },
    { login: 'subby_sam', text: '!enter' },
    { login: 'dino_dan', text: '!enter' },
    { login: 'luna_sub', text: '!enter' },
    { login: 'retro_rick', text: '!enter' },
    { login: 'cozy_carl', text: '!enter' },
    { login: 'speedy_sue', text: '!enter' },
    { login: 'lurker_leo', text: '!enter' },
  ];
}

/** Says `lines` one by one, spaced to fit in the window that closes at `closesAtMs`, until `stop()`. */
async function playLines(
  world: DemoWorld,
  lines: Line[],
  paceMs: number,
  closesAtMs: number,
  now: () => number,
  stop: () => boolean,
): Promise<void> {
  const budget = Math.max(0, closesAtMs - now()) * 0.7;
  const gap = Math.min(paceMs, Math.floor(budget / Math.max(1, lines.length)));
  for (const line of lines) {
    if (stop()) return;
    world.viewer(line.login, CAST[line.login]);
    world.say(line.login, line.text);
    await world.pause(gap);
  }
}

/** What the script waits for once a draw is open: its close and its end. */
interface DrawWatch {
  closesAt: number;
  closed: Promise<DrawRecord>;
  ended: Promise<DrawOutcome>;
  isClosed(): boolean;
}

/** Starts listening for the close and the end of `draw` (right when it opened, so nothing is missed). */
function watchDraw(world: DemoWorld, draw: DrawRecord, stepMs: number, claimMs: number): DrawWatch {
  const closesAt = Date.parse(draw.closesAt);
  const openMs = Math.max(0, closesAt - world.now());
  let closedYet = false;
  const closed = world.nextEngineEvent(
    'draw-closed',
    (r) => r.id === draw.id,
    openMs + stepMs,
    `entries of ${draw.id} closing`,
  ).promise;
  void closed.then(
    () => (closedYet = true),
    () => undefined,
  );
  const ended = world.drawEnd(draw.id, openMs + claimMs + stepMs * 2).promise;
  return { closesAt, closed, ended, isClosed: () => closedYet };
}

/** Waits until the bot's winners line (mentioning every winner) and the seed reveal are in chat. */
/**
 * True once chat shows the opening of `record` since `from`: a bot line naming its prize and the
 * entry command (another line, a late thank-you or the last draw's check line, does not count).
 */
function announced(world: DemoWorld, from: number, record: DrawRecord): boolean {
  const enter = `${world.stack.bot.config.settings.commands.prefix}${world.stack.bot.config.settings.commands.names.enter ?? 'enter'}`;
  return world.botLinesSince(from).some((l) => l.text.includes(record.offer.name) && l.text.includes(enter));
}

async function waitForAnnouncement(
  world: DemoWorld,
  from: number,
  record: DrawRecord,
  timeoutMs: number,
): Promise<void> {
  const logins = record.winners.map((w) => w.login.toLowerCase());
  const seed = record.fairness.seed;
  const id = record.id.toLowerCase();
  const said = (): boolean => {
    const lines = world.botLinesSince(from).map((e) => e.text.toLowerCase());
    const winners = logins.length === 0 || lines.some((t) => logins.every((l) => t.includes(l)));
    // the draw's fairness line (messages.revealed) names the draw, or the seed in a custom template
    const revealed = !seed || lines.some((t) => t.includes(id) || t.includes(seed));
    return winners && revealed;
  };
  await world.until(said, timeoutMs, 'the winners announcement in chat');
}

/**
 * Every winner of the script's own draws (`drawIds`) opens the claim page, logs in with (the
 * local) Twitch and redeems; the dashboard's list empties.
 */
async function redeemStep(
  o: ScriptOptions,
  drawIds: readonly string[],
  step: number,
): Promise<{ ok: boolean; problem?: string }> {
  const { world, printer } = o;
  const bot = world.stack.bot;
  const claimUrl = bot.delivery.via().claimUrl;
  // The last draw's winners may still be being recorded (the tracker hears 'winners' and writes
  // each delivery): the list is read once those writes are over, so no winner is left out.
  await bot.delivery.idle();
  const ours = new Set(drawIds);
  const waiting = (await bot.delivery.waiting()).filter((p) => ours.has(p.drawId));
  if (!claimUrl || waiting.length === 0) return { ok: true };
  const base = claimUrl.replace(/\/claim$/, '');
  printer.narrate(
    `The dashboard lists ${waiting.length} prizes waiting. Each winner was whispered the claim page (${claimUrl}); whispers can be dropped silently by Twitch, so the list stays until Fourthwall says a prize was redeemed.`,
  );
  const winners = [...new Set(waiting.map((p) => p.login))];
  const first = winners[0]!;
  printer.narrate(
    `@${first} opens ${claimUrl}, logs in with Twitch (the local one: authorize, a single-use code, their token revoked right after) and sees only their own prize and link, then redeems it on the shop's page: Fourthwall sends ORDER_PLACED.`,
  );
  try {
    for (const login of winners) {
      const shown = await claimAndRedeem(base, login);
      if (login === first) printer.note(`@${first}'s claim page showed ${plural(shown, 'prize')}; redeemed.`);
    }
    printer.narrate(`The other winners do the same.`);
    await world.prizesRedeemed(ours, step);
  } catch (err) {
    if (err instanceof DemoAborted) throw err;
    return { ok: false, problem: `a winner could not redeem: ${(err as Error).message}` };
  }
  const redeemed = (await bot.repo.listDraws()).filter(
    (r) => ours.has(r.id) && r.winners.some((w) => w.delivery?.redeemedAt),
  ).length;
  printer.success(
    `Every prize is redeemed: the dashboard's "prizes waiting" list is empty, and ${giftdropCommand('history')} shows the delivery of ${plural(redeemed, 'draw')} as "all redeemed".`,
  );
  return { ok: true };
}

/** A channel-point entry and a refund: the reward is open while the draw is. */
async function channelPointsStep(o: ScriptOptions, step: number): Promise<void> {
  const { world, printer } = o;
  const cp = world.stack.bot.twitchEvents.channelPoints;
  if (!cp) return;
  const title = world.stack.bot.config.settings.channelPoints.title;
  printer.narrate(
    `Entries from channel points: the bot's own reward "${title}" opened with the draw (paused otherwise). bits_betty redeems it (Twitch tells the bot over EventSub); the bot enters her and marks the redemption FULFILLED.`,
  );
  const first = await world.redeem('bits_betty', step);
  printer.note(`bits_betty's redemption: ${first === 'FULFILLED' ? 'entered, FULFILLED' : 'refunded'}.`);
  printer.narrate(
    'bits_betty redeems it again: one redemption per viewer per draw, so the bot sets this one CANCELED and Twitch gives her points back.',
  );
  const second = await world.redeem('bits_betty', step);
  printer.success(
    `bits_betty's second redemption: ${second === 'CANCELED' ? 'refunded (CANCELED), the points are hers again' : 'fulfilled'}.`,
  );
}

function winnersText(record: DrawRecord): string {
  return record.winners.length ? record.winners.map((w) => `@${w.login}`).join(', ') : 'nobody (no eligible entrants)';
}

const BUYERS = ['merch_enjoyer', 'cozy_patron', 'tee_collector'] as const;

/** Paid orders until the merch train departs: the first is alerted in chat. */
async function merchTrainStep(
  o: ScriptOptions,
  drawIds: string[],
  step: number,
  claimMs: number,
): Promise<ScriptResult> {
  const { world, printer, timings } = o;
  const train = world.stack.bot.shop.train.snapshot();
  const every = train.everyOrders;
  const prize = train.product ? (world.findProduct(train.product)?.name ?? train.product) : 'merch';
  printer.narrate(
    `Supporters order merch: Fourthwall sends ORDER_PLACED with the buyer's email and address; the bot's alert shows only the chosen username and the product. Every ${every === 1 ? '' : `${every}${every === 2 ? 'nd' : 'th'} `}order is a merch train stop: a giveaway of ${prize}.`,
  );
  const trainOpened = world.nextEngineEvent(
    'draw-opened',
    (r) => r.kind === 'link-giveaway',
    step * (every + 1),
    'the merch train giveaway',
  );
  let mark = world.mark();
  const snap = () => world.stack.bot.shop.train.snapshot();
  const departures = snap().departures;
  // One order at a time, each waited for until counted (the counter may carry over from an earlier run).
  for (let i = 0; snap().departures === departures; i++) {
    const before = snap().count;
    world.order({ productId: SEED_PRODUCT_IDS.tshirt, username: BUYERS[i % BUYERS.length]! });
    if (i === 0) {
      await world.until(
        () => world.botLinesSince(mark).some((l) => /just bought/.test(l.text)),
        step,
        'the order alert in chat',
      );
      const window = world.stack.bot.config.settings.alerts.burstWindowSeconds;
      printer.note(
        `Alerts never flood chat: orders in the ${window} s after an alert (60 s unless set otherwise; this demo's is short) are thanked together in one line when that window ends, so the next buyer's thank-you shows up about ${window} s later, whatever the stream is doing then.`,
      );
    }
    await world.until(
      () => snap().count !== before || snap().departures !== departures,
      step,
      'the order counted by the merch train',
    );
  }
  const record = await trainOpened.promise;
  drawIds.push(record.id);
  const watch = watchDraw(world, record, step, claimMs);
  printer.narrate(
    `The merch train departs: the bot opened link giveaway ${record.id} (${record.gifts}x ${record.offer.name}) through the same engine call as !giveaway start.`,
  );
  // Viewers answer the announcement, so they type only once it is in chat.
  await world.until(() => announced(world, mark, record), step, 'the giveaway announcement in chat');
  await playLines(world, linkLines().slice(0, 6), timings.paceMs, watch.closesAt, () => world.now(), watch.isClosed);
  await watch.closed;
  mark = world.mark();
  const outcome = await watch.ended;
  if (outcome.status !== 'finished')
    return { ok: false, drawIds, problem: `the merch train giveaway ${outcome.status}` };
  await waitForAnnouncement(world, mark, outcome.record, step);
  printer.success(`Merch train giveaway finished: ${winnersText(outcome.record)} won.`);
  // The thank-you promised above: the second buyer's, once the alert window ended.
  const window = world.stack.bot.config.settings.alerts.burstWindowSeconds;
  await world.until(
    () => world.botLinesSince(0).filter((l) => /just bought|Thank you/i.test(l.text)).length >= 2,
    step + window * 1000,
    "the second buyer's thank-you",
  );
  return { ok: true, drawIds };
}

/** Plays the scripted stream. Rejects with DemoAborted when the demo is stopped. */
export async function playScript(o: ScriptOptions): Promise<ScriptResult> {
  const { world, printer, timings } = o;
  const step = o.stepTimeoutMs ?? 15_000;
  const claimMs = (o.claimSeconds ?? 0) * 1000;
  const now = (): number => world.now();
  const drawIds: string[] = [];
  const bot = world.stack.bot;
  const pace = timings.paceMs;
  try {
    // 1. Going live.
    printer.narrate(
      "The broadcaster goes live on Twitch: the bot saw the stream on the (local) Twitch API (GET /streams) and called PUT /streaming/start on Fourthwall with the stream's thumbnail, which opens gifting in the shop. Only followers can win here; lurker_leo never followed, so a pick of lurker_leo is set aside and the next one drawn.",
    );
    let mark = world.mark();
    await world.until(
      () => world.live && world.botLinesSince(0).some((e) => /LIVE/.test(e.text)),
      step,
      'Fourthwall showing the stream as live',
    );
    await world.pause(pace);
    for (const l of HELLO) {
      world.viewer(l.login, CAST[l.login]);
      world.say(l.login, l.text);
      await world.pause(pace);
    }

    // 2. A gift draw.
    let drawId = '';
    const windowMs = timings.drawSeconds * 1000;
    const opened = world.nextEngineEvent(
      'draw-opened',
      (r) => r.kind !== 'link-giveaway' && (r.source.drawId === drawId || r.kind === 'gift-purchase'),
      step + windowMs,
      'the bot opening the gift draw',
    );
    printer.narrate(
      `A supporter (${DEMO_SUPPORTER}) buys ${DEMO_GIFTS} gifted items in the shop: Fourthwall opens a ${timings.drawSeconds}s draw and sends GIFT_PURCHASE and GIFT_DRAW_STARTED to ${bot.webhookUrl} as signed webhooks.`,
    );
    mark = world.mark();
    const gift = world.gift({
      quantity: DEMO_GIFTS,
      username: DEMO_SUPPORTER,
      message: 'Merch for chat!',
      durationSeconds: timings.drawSeconds,
    });
    drawId = gift.drawId;
    const draw = await opened.promise;
    drawIds.push(draw.id);
    printer.narrate(
      `The bot verified the signature and opened draw ${draw.id} (${draw.gifts}x ${draw.offer.name}). Its announcement carries the draw code: the start of the hash of a secret seed it reveals after the draw (the verify page shows both).`,
    );
    const giftWatch = watchDraw(world, draw, step, claimMs);
    await world.until(() => announced(world, mark, draw), step, 'the draw announcement in chat');
    await channelPointsStep(o, step);
    printer.narrate(
      'Viewers type !enter while the window is open. The bot acknowledges entries in batches, never one line per viewer; a second !enter counts once.',
    );
    await playLines(world, giftDrawLines(DEMO_SUPPORTER), pace, giftWatch.closesAt, now, giftWatch.isClosed);
    const closedRecord = await giftWatch.closed;
    mark = world.mark();
    const delivery =
      draw.kind === 'gift-draw'
        ? 'sends them to Fourthwall (PUT /gifting/draw/{id}/finish) and gets one redeem link per winner'
        : "and gives each one of the purchase's gift links (purchase flow: no finish call)";
    printer.narrate(
      `Time is up: ${plural(closedRecord.entrants, 'entrant')}. The bot picks ${draw.gifts} winners from its committed seed, ${delivery}; links go to the streamer's console only (marked private), never to chat.`,
    );
    const outcome = await giftWatch.ended;
    if (outcome.status !== 'finished') {
      return {
        ok: false,
        drawIds,
        problem: `the gift draw ${outcome.status}${outcome.record.failure ? `: ${outcome.record.failure.reason}` : ''}`,
      };
    }
    await waitForAnnouncement(world, mark, outcome.record, step);
    printer.success(
      `Gift draw finished: ${winnersText(outcome.record)} won. Anyone can re-check it: ${giftdropCommand('verify', draw.id)}`,
    );
    await world.pause(pace);

    // 3. Orders: a supporter alert, and the merch train's giveaway.
    const trainOk = await merchTrainStep(o, drawIds, step, claimMs);
    if (!trainOk.ok) return trainOk;
    await world.pause(pace);

    // 4. A link giveaway.
    const hoodie = world.stack.fourthwall.state.products.get(SEED_PRODUCT_IDS.hoodie);
    const product = hoodie?.name ?? world.productNames()[0] ?? 'hoodie';
    const seconds = Math.max(MIN_LINK_SECONDS, timings.linkSeconds);
    const command = `!giveaway start ${product} ${DEMO_LINK_WINNERS} ${seconds}`;
    const linkOpened = world.nextEngineEvent(
      'draw-opened',
      (r) => r.kind === 'link-giveaway',
      step,
      'the bot opening the link giveaway',
    );
    printer.narrate(
      `The broadcaster runs a link giveaway: "${command}". The bot looks the product up in the shop (GET /products) and opens entries for ${seconds}s.`,
    );
    mark = world.mark();
    world.broadcast(command);
    let link: DrawRecord;
    let linkWatch: DrawWatch;
    try {
      link = await linkOpened.promise;
      linkWatch = watchDraw(world, link, step, claimMs);
      await world.until(() => announced(world, mark, link), step, 'the giveaway announcement in chat');
    } catch (err) {
      if (err instanceof DemoTimeout) {
        const reply = world.botLinesSince(mark).at(-1)?.text;
        return {
          ok: false,
          drawIds,
          problem: `the link giveaway did not open${reply ? `: the bot said "${reply}"` : ''}`,
        };
      }
      throw err;
    }
    drawIds.push(link.id);
    await playLines(world, linkLines(), pace, linkWatch.closesAt, now, linkWatch.isClosed);
    const linkClosedRecord = await linkWatch.closed;
    mark = world.mark();
    printer.narrate(
      `Entries closed: ${plural(linkClosedRecord.entrants, 'entrant')}. The bot draws ${link.gifts} winners and asks Fourthwall for ${link.gifts} giveaway links (POST /giveaway-links); the links go to the console only.`,
    );
    const linkOutcome = await linkWatch.ended;
    if (linkOutcome.status !== 'finished') {
      return {
        ok: false,
        drawIds,
        problem: `the link giveaway ${linkOutcome.status}${linkOutcome.record.failure ? `: ${linkOutcome.record.failure.reason}` : ''}`,
      };
    }
    await waitForAnnouncement(world, mark, linkOutcome.record, step);
    printer.success(`Link giveaway finished: ${winnersText(linkOutcome.record)} won.`);
    await world.pause(pace);

    // 5. The prizes reach the winners.
    const redeemOk = await redeemStep(o, drawIds, step);
    if (!redeemOk.ok) return { ...redeemOk, drawIds };
    return { ok: true, drawIds };
  } catch (err) {
    if (err instanceof DemoAborted) throw err;
    if (err instanceof DemoTimeout) return { ok: false, drawIds, problem: err.message };
    throw err;
  }
}
