/**
 * Interactive sandbox mode (stdin is a terminal): a prompt where each line is said in chat as the
 * broadcaster, or is a demo command (see commands.ts: /as, /gift, /viewers, /help, /quit). Draws
 * the user starts are narrated from the engine's events, and printed lines never garble the
 * prompt (it is redrawn under them).
 *
 * Contract: resolves when the user quits (/quit, Ctrl+C, Ctrl+D, end of input) or the signal
 * aborts; a bad line prints what is wrong and changes nothing. Does not: stop the stack.
 */
import { localTime } from '../../shared/time-text.js';
import { clearLine, createInterface, cursorTo } from 'node:readline';
import type { DrawRecord } from '../../giveaway/model.js';
import { DEMO_HELP, parseDemoCommand } from './commands.js';
import type { DemoPrinter } from './output.js';
import type { DemoTimings } from './script.js';
import { DemoAborted, type DemoWorld } from './world.js';
import { claimAndRedeem } from './claim-visit.js';
import { plural } from '../../shared/plural.js';
import { giftdropCommand } from '../../platform/invocation.js';

export interface InteractiveOptions {
  world: DemoWorld;
  printer: DemoPrinter;
  timings: DemoTimings;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream & { isTTY?: boolean };
  signal: AbortSignal;
  /** Lines typed while the scripted stream played, handled first (in order). */
  queued?: readonly string[];
}

/**
 * While the scripted stream plays, collects what the user types (so it is not silently held
 * back): each line is acknowledged at once as queued, and handed to runInteractive afterwards.
 * `stop()` ends the collection and returns the lines, and whether the input ended (Ctrl+D).
 */
export function queueTypedLines(
  input: NodeJS.ReadableStream,
  printer: DemoPrinter,
): () => { lines: string[]; ended: boolean } {
  const lines: string[] = [];
  let ended = false;
  let stopping = false;
  const rl = createInterface({ input, terminal: false });
  rl.on('line', (line) => {
    if (line.trim() === '') return;
    lines.push(line);
    printer.note(`Queued "${line}": it runs when the scripted stream ends (the prompt opens then).`);
  });
  rl.on('close', () => {
    if (!stopping) ended = true;
  });
  return () => {
    stopping = true;
    rl.close();
    return { lines, ended };
  };
}

/** Longest time `/viewers` takes to send its lines, whatever n is (ms). */
const VIEWERS_SPREAD_MS = 3_000;
/** Usernames the simulated supporters of `/gift` buy under, in turn (a real-looking handle, not a role). */
const GIFT_BUYERS = ['merch_enjoyer', 'cozy_patron', 'tee_collector', 'mug_hunter'] as const;

/** Prints the /help text. */
export function printHelp(printer: DemoPrinter): void {
  for (const line of DEMO_HELP.split('\n')) printer.note(line);
}

/** Narrates draws from the engine's events; returns a function that stops it. */
function narrateEngine(world: DemoWorld, printer: DemoPrinter): () => void {
  const events = world.stack.bot.engine.events;
  const opened = (r: DrawRecord): void =>
    printer.narrate(
      `Draw ${r.id} is open: ${r.gifts}x ${r.offer.name} until ${localTime(r.closesAt)}; viewers type !enter.`,
    );
  const closed = (r: DrawRecord): void =>
    printer.narrate(`Entries of ${r.id} closed with ${plural(r.entrants, 'entrant')}; picking winners.`);
  const finished = (r: DrawRecord): void =>
    printer.success(
      `Draw ${r.id} finished: ${r.winners.length ? r.winners.map((w) => `@${w.login}`).join(', ') : 'no winners'}. ${giftdropCommand('verify', r.id)}`,
    );
  const failed = (r: DrawRecord): void =>
    printer.problem(`Draw ${r.id} failed${r.failure ? `: ${r.failure.reason}` : ''}.`);
  const cancelled = (r: DrawRecord): void => printer.narrate(`Draw ${r.id} was cancelled.`);
  events.on('draw-opened', opened);
  events.on('draw-closed', closed);
  events.on('draw-finished', finished);
  events.on('draw-failed', failed);
  events.on('draw-cancelled', cancelled);
  return () => {
    events.off('draw-opened', opened);
    events.off('draw-closed', closed);
    events.off('draw-finished', finished);
    events.off('draw-failed', failed);
    events.off('draw-cancelled', cancelled);
  };
}

/** Runs the prompt until the user quits. */
export async function runInteractive(o: InteractiveOptions): Promise<void> {
  const { world, printer, output } = o;
  const terminal = output.isTTY === true;
  const rl = createInterface({ input: o.input, output, terminal, prompt: 'broadcaster> ' });
  // A prompt drawn after close() would resume the input (readline resumes a paused interface),
  // and a resumed stdin keeps the process alive after the shutdown.
  let closed = false;
  let giftsBought = 0;
  rl.once('close', () => (closed = true));
  const restoreSink = { write: (t: string) => output.write(t) };
  printer.setSink({
    write(text: string) {
      if (terminal && !closed) {
        clearLine(output, 0);
        cursorTo(output, 0);
      }
      output.write(text);
      if (terminal && !closed) rl.prompt(true);
    },
  });
  const stopNarrating = narrateEngine(world, printer);

  const sendViewers = async (count: number): Promise<void> => {
    const gap = Math.min(o.timings.paceMs, Math.floor(VIEWERS_SPREAD_MS / count));
    for (let i = 0; i < count; i++) {
      world.say(world.freshViewer(), '!enter');
      await world.pause(gap);
    }
  };

  const handle = (line: string): void => {
    const cmd = parseDemoCommand(line);
    try {
      switch (cmd.kind) {
        case 'empty':
          break;
        case 'say':
          world.broadcast(cmd.text);
          if (cmd.hint) printer.note(cmd.hint);
          break;
        case 'as':
          world.viewer(cmd.login, Object.keys(cmd.roles).length ? cmd.roles : undefined);
          world.say(cmd.login, cmd.text, cmd.extra);
          break;
        case 'gift': {
          let productId: string | undefined;
          if (cmd.product) {
            const p = world.findProduct(cmd.product);
            if (!p) {
              printer.problem(
                `No single product matches "${cmd.product}". Products: ${world.productNames().join(', ')}`,
              );
              break;
            }
            productId = p.id;
          }
          if (!world.live) {
            printer.problem('The shop sells gifts only while the stream is live: type !stream live first.');
            break;
          }
          const buyer = GIFT_BUYERS[giftsBought++ % GIFT_BUYERS.length]!;
          const g = world.gift({
            quantity: cmd.quantity,
            username: buyer,
            durationSeconds: o.timings.drawSeconds,
            ...(productId ? { productId } : {}),
          });
          printer.narrate(
            `A simulated supporter, ${buyer}, buys ${cmd.quantity}x ${g.offer}: Fourthwall opens draw ${g.drawId} and sends GIFT_DRAW_STARTED (signed webhook) to the bot.`,
          );
          break;
        }
        case 'order': {
          const p = cmd.product ? world.findProduct(cmd.product) : undefined;
          if (cmd.product && !p) {
            printer.problem(`No single product matches "${cmd.product}". Products: ${world.productNames().join(', ')}`);
            break;
          }
          const buyer = GIFT_BUYERS[giftsBought++ % GIFT_BUYERS.length]!;
          const name = world.order({ username: buyer, ...(p ? { productId: p.id } : {}) });
          printer.narrate(
            `A simulated supporter, ${buyer}, orders ${name}: Fourthwall sends ORDER_PLACED (signed webhook; with an email and an address the bot never shows).`,
          );
          break;
        }
        case 'viewers':
          printer.narrate(`${cmd.count} simulated viewers type !enter.`);
          void sendViewers(cmd.count).catch((err: unknown) => {
            if (!(err instanceof DemoAborted)) printer.problem((err as Error).message);
          });
          break;
        case 'redeem': {
          const base = world.stack.bot.delivery.via().claimUrl?.replace(/\/claim$/, '');
          if (!base) {
            printer.problem('There is no claim page in this run.');
            break;
          }
          const login = cmd.login;
          printer.narrate(`@${login} opens the claim page, logs in with Twitch and redeems what it shows.`);
          void claimAndRedeem(base, login).then(
            (n) =>
              n === 0
                ? printer.note(`@${login}'s claim page says nothing is waiting for them.`)
                : printer.success(
                    `@${login} redeemed ${plural(n, 'prize')} on the shop's page: Fourthwall sends ORDER_PLACED, and the dashboard's "prizes waiting" list drops them.`,
                  ),
            (err: unknown) => printer.problem(`@${login} could not redeem: ${(err as Error).message}`),
          );
          break;
        }
        case 'points': {
          const login = cmd.login;
          if (!world.stack.bot.twitchEvents.channelPoints) {
            printer.problem('Channel points are off in this run.');
            break;
          }
          void world.redeem(login, 10_000, { waitOpen: false }).then(
            (status) =>
              status === 'paused'
                ? printer.note(`The reward is paused while no draw is open: Twitch does not let @${login} redeem it.`)
                : status === 'FULFILLED'
                  ? printer.success(`@${login} redeemed the reward: entered, FULFILLED.`)
                  : printer.note(
                      `@${login}'s redemption was refunded (CANCELED): one per viewer per draw, or not eligible.`,
                    ),
            (err: unknown) => printer.problem(`@${login} could not redeem: ${(err as Error).message}`),
          );
          break;
        }
        case 'bits': {
          const v = world.viewer(cmd.login);
          const sent = world.stack.twitch.useBits({ id: v.userId, login: v.login }, cmd.bits);
          printer.note(
            sent
              ? `@${cmd.login} used ${cmd.bits} bits.`
              : `@${cmd.login} used ${cmd.bits} bits, but bits are off in the settings (nothing listens).`,
          );
          break;
        }
        case 'shared': {
          const joined = world.sharedSay(cmd.partner, cmd.login, cmd.text);
          if (joined)
            printer.narrate(
              `Shared Chat with #${cmd.partner} (Twitch's Stream Together): their viewers' lines show in your chat, marked with the channel they were typed in.`,
            );
          if (joined || /^!enter\b/i.test(cmd.text))
            printer.note(
              world.stack.config.settings.sharedChat.partnerEntries
                ? `sharedChat.partnerEntries is on (a joint giveaway): a partner viewer's !enter counts, and each draw says how many entrants came from each channel.`
                : `Only your own viewers enter (the default): the bot does not count @${cmd.login}'s !enter, and a partner channel's line never runs a command here. "sharedChat": { "partnerEntries": true } in the settings file makes it a joint giveaway.`,
            );
          break;
        }
        case 'shared-end':
          if (world.endShared()) printer.narrate("Shared Chat ended: only your channel's chat again.");
          else printer.problem('No Shared Chat session is running.');
          break;
        case 'help':
          printHelp(printer);
          break;
        case 'quit':
          rl.close();
          break;
        case 'error':
          printer.problem(cmd.message);
          break;
      }
    } catch (err) {
      printer.problem((err as Error).message);
    }
  };

  await new Promise<void>((resolve) => {
    const onAbort = (): void => rl.close();
    rl.on('line', (line) => {
      if (closed) return;
      handle(line);
      if (!closed) rl.prompt();
    });
    rl.on('SIGINT', () => rl.close());
    rl.on('close', () => {
      o.signal.removeEventListener('abort', onAbort);
      resolve();
    });
    if (o.signal.aborted) rl.close();
    else o.signal.addEventListener('abort', onAbort, { once: true });
    for (const line of o.queued ?? []) {
      if (closed) break;
      printer.note(`Running queued "${line}".`);
      handle(line);
    }
    if (!closed) rl.prompt();
  });
  stopNarrating();
  if (terminal) output.write('\n');
  printer.setSink(restoreSink);
}
