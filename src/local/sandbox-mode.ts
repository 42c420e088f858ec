/**
 * Sandbox mode, what `npm start` runs without credentials: the local stack in-process (Fourthwall
 * sandbox, local Twitch chat server, the real bot connected to both over real sockets with signed
 * webhooks), a scripted stream narrated step by step, then an interactive prompt when stdin is a
 * terminal. See docs/demo.md.
 *
 * Contract: resolves with the exit code: 0 when the script ran (and, interactively, the user
 * quit), 1 when a scripted step failed. The bot listens on config.http.port, or on a port the OS
 * picks when that one is busy (with a note). Draws land in config.dataDir (DATA_DIR/sandbox). Stopping
 * (end of script without a terminal, /quit, Ctrl+C, the `onSignals` callback) closes any open
 * draw now (the sandbox shop ends with the process), ends streaming, stops the bot (history
 * flushed) and both servers, once.
 * Does not: read the environment (main does), or use the logger for the transcript (stdout).
 */
import { isatty } from 'node:tty';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config/index.js';
import type { Logger } from '../logging/index.js';
import type { OperatorPort } from '../giveaway/ports.js';
import { systemClock } from '../shared/clock.js';
import { startLocalStack, type LocalStack, type LocalStackOptions } from './local-stack.js';
import { hideLinks } from '../console/operator-console.js';
import { isAddressInUse } from '../app/port-check.js';
import { printHelp, queueTypedLines, runInteractive } from './demo/interactive.js';
import { DemoPrinter, type TextSink } from './demo/output.js';
import { playScript, withDemoMerchTrain, type DemoTimings } from './demo/script.js';
import { DemoAborted, DemoWorld } from './demo/world.js';
import { demoHelix, withDemoTwitch } from './demo/twitch.js';
import { newWorldLine, startNewWorld } from './sandbox-world.js';
import { plural } from '../shared/plural.js';
import { giftdropCommand } from '../platform/invocation.js';

export interface SandboxModeOptions {
  config: Config;
  logger: Logger;
  /** Registers the process's shutdown signals with the function that stops the demo. */
  onSignals(stop: (reason: string) => Promise<void>): void;
  /** Where the transcript goes (default process.stdout). */
  output?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Where typed lines come from (default process.stdin). */
  input?: NodeJS.ReadableStream;
  /** Stay interactive after the script (default: stdin is a terminal). */
  interactive?: boolean;
  /** Coloured output (default: the output is a terminal). */
  colour?: boolean;
  /** Play the scripted stream first (default true; false goes straight to the prompt). */
  script?: boolean;
  /** `npm start -- --reset`: the new world also gets a new dashboard token (sandbox-world.ts). */
  reset?: boolean;
  /** The setup page's routes on the demo bot's listeners (main.ts). */
  bot?: LocalStackOptions['bot'];
  /** Resolves when the setup page asks to go live: the demo stops and runSandboxMode resolves 'go-live'. */
  goLive?: Promise<void>;
  /** The setup page's address, said once the demo's pages answer. */
  setupUrl?: (localUrl: string) => string;
  /**
   * Picks the bot's port when HTTP_PORT is 0 (default: one the OS has free now). Another program
   * can take it before the bot listens; the demo then picks again.
   */
  pickPort?: (host: string) => Promise<number>;
}

/** Time allowed for closing open draws when the demo stops (ms). */
const CLOSE_DRAWS_MS = 10_000;
/** Time allowed for a step that is not bound to an entry window (ms). */
const STEP_TIMEOUT_MS = 15_000;

/** Times the demo picks a free port for the bot again when another program took the last one first. */
const PICK_ATTEMPTS = 5;

/** A port the OS has free now (for the bot's own address, which the claim page needs before it listens). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const port = (srv.address() as AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * The demo's claim page is the bot's own local address (a tunnel would point at the live bot):
 * `http://<host>:<port>/claim`, so its login runs against the local Twitch.
 */
function withLocalPublicUrl(config: Config, port: number): Config {
  const host = config.http.host === '0.0.0.0' || config.http.host === '::' ? '127.0.0.1' : config.http.host;
  const hostForUrl = host.includes(':') ? `[${host}]` : host;
  return { ...config, http: { ...config.http, port }, publicUrl: `http://${hostForUrl}:${port}` };
}

async function startStack(
  config: Config,
  logger: Logger,
  operator: OperatorPort,
  timings: DemoTimings,
  note: (t: string) => void,
  bot?: LocalStackOptions['bot'],
  pickPort: (host: string) => Promise<number> = freePort,
): Promise<LocalStack> {
  const start = async (c: Config) =>
    startLocalStack({
      ...(bot ? { bot } : {}),
      config: withLocalPublicUrl(c, c.http.port === 0 ? await pickPort(c.http.host) : c.http.port),
      logger,
      operator,
      fourthwall: { drawDurationSeconds: timings.drawSeconds },
      // Bots are usually moderators of their channel (it lifts Twitch's 1 line/s pacing).
      // The bot token may whisper (user:manage:whispers): winners are whispered the claim page.
      chat: { botIsMod: true, scopes: ['chat:read', 'chat:edit', 'moderator:read:followers', 'user:manage:whispers'] },
      // The local randomness beacon (its own key, drand's wire format) for the draws' fairness;
      // a round every second keeps the demo brisk (drand quicknet: every 3 s).
      beacon: { period: 1 },
      helix: demoHelix,
    });
  try {
    return await start(config);
  } catch (err) {
    if (!isAddressInUse(err)) throw err;
    if (config.http.port !== 0) {
      note(`Port ${config.http.port} is in use (another giftdrop?): the bot listens on a port the OS picks instead.`);
      config = { ...config, http: { ...config.http, port: 0, localPort: 0 } };
    }
  }
  // A port the OS picked (pickPort) is free when picked, not when the bot listens on it a moment
  // later: another program may take it in between. Then pick again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(config);
    } catch (err) {
      if (!isAddressInUse(err) || attempt >= PICK_ATTEMPTS) throw err;
    }
  }
}

/** Runs sandbox mode; resolves with the process exit code, or 'go-live' when the setup page asked (the demo stopped). */
export async function runSandboxMode(options: SandboxModeOptions): Promise<number | 'go-live'> {
  const { config, logger } = options;
  const output = options.output ?? process.stdout;
  const interactive = options.interactive ?? isatty(0);
  const colour = options.colour ?? output.isTTY === true;
  const timings: DemoTimings = { ...config.settings.demo };
  const sink: TextSink = { write: (t: string) => output.write(t) };
  let printer = new DemoPrinter({ out: sink, colour, botLogin: 'giftdrop_bot', channel: 'giftdrop_demo' });
  // The printer is replaced once the stack is up; the operator always prints with the current one.
  // Links are bearer secrets even in the sandbox: printed only on a terminal (contract "Links and logs").
  const terminal = output.isTTY === true;
  const operator: OperatorPort = {
    notify: (line, opts) =>
      opts?.terminalOnly && !terminal
        ? undefined
        : printer.private(opts?.secret && !terminal ? hideLinks(line, opts.drawId) : line, opts?.secret === true),
  };

  printer.title('giftdrop sandbox mode: a scripted stream against a local Fourthwall sandbox and a local Twitch chat');
  printer.note('Everything runs on this machine; nothing is bought and nothing is sent to Twitch or Fourthwall.');
  const newWorld = newWorldLine(startNewWorld(config, { reset: options.reset === true }), config.dataDir);
  if (newWorld) printer.note(newWorld);
  const stack = await startStack(
    withDemoTwitch(withDemoMerchTrain(config, timings)),
    logger,
    operator,
    timings,
    (t) => printer.note(t),
    options.bot,
    options.pickPort,
  );
  const abort = new AbortController();
  const world = new DemoWorld({ stack, clock: systemClock, signal: abort.signal });
  printer = new DemoPrinter({
    out: sink,
    colour,
    botLogin: stack.chatServer.botLogin,
    channel: stack.chatServer.channel,
    badges: (login) => world.badge(login),
  });
  // What chat said while the stack started (the auto-streaming LIVE line can come that early), then the rest.
  for (const entry of stack.chatServer.transcript) printer.chat(entry);
  stack.chatServer.on('transcript', (entry) => printer.chat(entry));
  // Whispers are private; the demo shows them (they carry the claim page, never a link here).
  stack.helix.onWhisper((w) => printer.whisper(world.loginOf(w.to) ?? `user ${w.to}`, w.message, w.delivered));

  let closing: Promise<void> | undefined;
  const shutdown = (reason: string): Promise<void> =>
    (closing ??= (async () => {
      abort.abort();
      const engine = stack.bot.engine;
      try {
        const open = engine.openDrawCount();
        if (open > 0) {
          printer.narrate(
            `Closing ${plural(open, 'open draw')} now (${reason}): the sandbox shop ends with this process.`,
          );
          engine.endNow();
          await Promise.race([engine.whenIdle(), new Promise((r) => setTimeout(r, CLOSE_DRAWS_MS).unref())]);
        }
        if (world.live) {
          printer.narrate('The stream ends: the bot tells Fourthwall (PUT /streaming/end).');
          await stack.bot.streaming
            .goOffline()
            .catch((err: unknown) => printer.problem(`streaming end failed: ${(err as Error).message}`));
        }
      } finally {
        await stack.close();
      }
      printer.note(`Stopped. The draws are in the history (${config.dataDir}): ${giftdropCommand('history')}`);
    })());
  options.onSignals(shutdown);

  printer.note(`Fourthwall sandbox: ${stack.fourthwall.apiUrl} (shop site ${stack.fourthwall.shopUrl})`);
  printer.note(
    `Twitch chat server: ${stack.chatServer.url}, channel #${stack.chatServer.channel}, bot ${stack.chatServer.botLogin} (a moderator)`,
  );
  printer.note(`Twitch EventSub: ${stack.twitch.eventSub.url} (channel points and bits, with the broadcaster's login)`);
  printer.note(
    `The bot: webhooks at ${stack.bot.webhookUrl}, health at ${stack.bot.http.url}/healthz; history in ${config.dataDir}`,
  );
  // (The overlay and the dashboard were announced by the bot itself, on the console line above.)
  const claimUrl = stack.bot.delivery.via().claimUrl;
  if (claimUrl) printer.note(`Claim page (winners log in with Twitch and see their prize): ${claimUrl}`);
  if (options.setupUrl) {
    const setupUrl = options.setupUrl(stack.bot.http.localUrl);
    printer.note(`Set up for your channel (no file to edit): ${setupUrl}`);
    // The link that signs the setup page in by itself (the token in the fragment, as the dashboard's): a secret.
    const signedIn = `${setupUrl}#token=${encodeURIComponent(stack.bot.pages.token.token)}`;
    operator.notify(`set up for your channel, signed in: ${signedIn} (a private link: do not show it on stream)`, {
      secret: true,
      terminalOnly: true,
    });
  }
  let goingLive = false;
  void options.goLive?.then(() => {
    goingLive = true;
    printer.narrate('The setup page asked to go live: the demo stops and the bot starts for your channel.');
    void shutdown('going live');
  });

  let ok = true;
  let doneLine: string | undefined;
  const input = options.input ?? process.stdin;
  let queued: { lines: string[]; ended: boolean } = { lines: [], ended: false };
  let stopQueueing: (() => { lines: string[]; ended: boolean }) | undefined;
  try {
    if (options.script !== false) {
      // What the user types during the script is acknowledged now and run when the prompt opens.
      stopQueueing = interactive ? queueTypedLines(input, printer) : undefined;
      const result = await playScript({
        world,
        printer,
        timings,
        claimSeconds: config.settings.claim.seconds,
        stepTimeoutMs: STEP_TIMEOUT_MS,
      });
      ok = result.ok;
      if (result.ok) {
        // said once every step of the script ran (after the last one below, when there is no prompt)
        doneLine = `Done: ${result.drawIds.length} draws are in the history (${config.dataDir}). See them with: ${giftdropCommand('history')}`;
      } else {
        printer.problem(`The scripted stream stopped: ${result.problem ?? 'unknown problem'}`);
      }
      if (stopQueueing) queued = stopQueueing();
      stopQueueing = undefined;
    }

    if (!interactive || queued.ended) {
      if (world.live) {
        printer.narrate(
          'The broadcaster sets the shop offline by hand: "!stream offline" (the bot calls PUT /streaming/end). The demo runs auto streaming (it followed the local Twitch stream at the start), so the bot answers that auto mode keeps this choice.',
        );
        world.broadcast('!stream offline');
        await world
          .until(() => !world.live, STEP_TIMEOUT_MS, 'Fourthwall showing the stream as offline')
          .catch((err: unknown) => {
            if (err instanceof DemoAborted) throw err;
            printer.problem((err as Error).message);
          });
      }
      if (doneLine) printer.success(doneLine);
      await shutdown('script finished');
      if (goingLive) return 'go-live';
      return ok ? 0 : 1;
    }

    if (doneLine) printer.success(doneLine);
    printer.narrate('Your turn: you are the broadcaster. Type in chat, or use these commands:');
    printHelp(printer);
    await runInteractive({ world, printer, timings, input, output, signal: abort.signal, queued: queued.lines });
    await shutdown('you quit');
    return goingLive ? 'go-live' : 0;
  } catch (err) {
    stopQueueing?.();
    if (err instanceof DemoAborted || abort.signal.aborted) {
      await closing;
      return goingLive ? 'go-live' : 0;
    }
    await shutdown('error').catch(() => undefined);
    throw err;
  }
}
