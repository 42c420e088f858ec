/**
 * End-to-end harness for the streamer-run giveaways (issue 5): the whole local stack in the test
 * process (Fourthwall sandbox + chat server + the real bot via startLocalStack), configured
 * from a real JSON settings file through loadConfig, with the bot's log captured, the operator
 * console recorded, and small readers for what the tests check (bot lines, the sandbox request
 * log, the history export and `verify` through their CLI run functions).
 *
 * Waits are on predicates over the chat transcript / engine state, never sleeps. Does not spawn
 * a process (the real-process case uses the e2e process helpers) and asserts nothing itself.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, secretValues, type Config } from '../../src/config/index.js';
import { createLogger } from '../../src/logging/index.js';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../src/local/local-stack.js';
import type { FourthwallSandboxOptions, RequestRecord } from '../../src/sandbox/fourthwall/index.js';
import type { ChatServer, ChatServerOptions, SimViewer, SimViewerOptions } from '../../src/sandbox/chat/index.js';
import type { Delivery, DrawRecord } from '../../src/giveaway/model.js';
import { runHistoryCli } from '../../src/cli/history.js';
import { runVerifyCli } from '../../src/cli/verify.js';
import { LogCapture } from './log-capture.js';
import { captureIo } from './cli-io.js';

/** One row of `npm run history -- --json` (the contract's export shape). */
export interface ExportRow {
  id: string;
  kind: 'gift-draw' | 'gift-purchase' | 'link-giveaway';
  status: string;
  source: { drawId?: string; giveawayId?: string; packageId?: string; eventId?: string };
  offer: { id: string; name: string };
  gifts: number;
  openedAt: string;
  closesAt: string;
  closedAt?: string;
  entrants: number;
  winners: {
    userId: string;
    login: string;
    displayName: string;
    giftId?: string;
    redeemUrl?: string;
    claimed?: boolean;
  }[];
  fairness: { commitment: string; seed?: string; entrantsDigest?: string };
}

/** Settings that keep chat quiet and predictable in tests (no reminders, no batched acks). */
export const QUIET_REMINDERS = { halfTime: false, nearEndSeconds: 0, ackEverySeconds: 0 } as const;

export interface LinkStackOptions {
  /** The JSON settings file's content (merged over QUIET_REMINDERS). */
  settings?: Record<string, unknown>;
  /** Reuse a data directory (a second bot run on the same history). */
  dataDir?: string;
  fourthwall?: FourthwallSandboxOptions;
  chat?: ChatServerOptions;
  /** The local Helix API (issue 13): e.g. follows and account ages before the bot starts. */
  helix?: LocalStackOptions['helix'];
  /** The bot's clock (e.g. a ManualClock the test advances); default the system clock. */
  clock?: LocalStackOptions['clock'];
  /** Event intake tuning and storage fault injection. */
  bot?: LocalStackOptions['bot'];
  /** Extra environment for loadConfig (e.g. HTTP_PORT and GIFTDROP_PUBLIC_URL for the claim page). */
  env?: Record<string, string>;
}

export interface LinkStack {
  stack: LocalStack;
  fw: LocalStack['fourthwall'];
  chat: ChatServer;
  bot: LocalStack['bot'];
  config: Config;
  dataDir: string;
  /** Lines the bot wrote to the operator console. */
  operator: string[];
  /** The bot's log (JSON lines, through the product's logger and its scrubbing). */
  log: LogCapture;
  /** A moderator of the channel. */
  mod: SimViewer;
  viewer(login: string, opts?: SimViewerOptions): SimViewer;
  say(who: SimViewer, text: string): void;
  /** Every viewer in `logins` types `!enter`. */
  enter(logins: readonly string[], opts?: SimViewerOptions): SimViewer[];
  /** Number of bot lines so far (a mark for `nextBotLine`). */
  mark(): number;
  /** Waits for the first bot line after `from` matching `re`; returns it. */
  nextBotLine(re: RegExp, from?: number, timeoutMs?: number): Promise<string>;
  botLines(from?: number): string[];
  /** Requests the sandbox received for `operation`. */
  requests(operation: string): RequestRecord[];
  /** Waits until the bot has nothing in flight and the history is flushed. */
  idle(): Promise<void>;
  /** The full stored record of a draw (with frozen entrants, rerolls, rules). */
  record(id: string): Promise<DrawRecord>;
  /** `npm run history -- --json`, through the CLI's run function (read-only, beside the bot). */
  history(): Promise<ExportRow[]>;
  /** `npm run verify -- <id>`, through the CLI's run function. */
  verify(id: string): Promise<{ code: number; out: string; err: string }>;
  /** Stops the bot and both servers (keeps the data directory unless `removeData`). */
  close(removeData?: boolean): Promise<void>;
}

/** A temporary directory for one test's history. */
export function tempDir(prefix = 'gd-e2e-link-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Starts the stack with `settings` written to a real config file and loaded like `npm start` would. */
export async function startLinkStack(options: LinkStackOptions = {}): Promise<LinkStack> {
  const dataDir = options.dataDir ?? (await tempDir());
  const settings = { reminders: QUIET_REMINDERS, ...options.settings };
  const file = join(dataDir, 'giftdrop.test.json');
  await writeFile(file, JSON.stringify(settings));
  const base = loadConfig({
    env: {
      GIFTDROP_CONFIG: file,
      DATA_DIR: dataDir,
      HTTP_PORT: '0',
      GIFTDROP_LOCAL_PORT: '0',
      LOG_LEVEL: 'info',
      ...options.env,
    },
    dotenv: false,
    cwd: dataDir,
  });
  const log = new LogCapture();
  const operator: string[] = [];
  // Like main.ts: the product's logger with the config's secrets registered. The sandbox
  // credentials are only known after the sandbox started, so links (the secret under test) are
  // covered by the logger's link scrubbing, as in production.
  const logger = createLogger({ level: 'info', destination: log, secrets: secretValues(base) });
  const stack = await startLocalStack({
    // The bot's data folder is `dataDir` itself (not DATA_DIR/sandbox), so tests read it directly.
    config: { ...base, dataDir },
    logger,
    operator: { notify: (line) => void operator.push(line) },
    fourthwall: { drawDurationSeconds: 600, ...options.fourthwall },
    chat: { botIsMod: true, ...options.chat },
    outbox: {},
    ...(options.helix ? { helix: options.helix } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.bot ? { bot: options.bot } : {}),
  });
  const chat = stack.chatServer;
  const mod = chat.viewer('modjo', { mod: true });
  const botLines = (from = 0) => chat.botMessages().slice(from);
  return {
    stack,
    fw: stack.fourthwall,
    chat,
    bot: stack.bot,
    config: stack.config,
    dataDir,
    operator,
    log,
    mod,
    viewer: (login, opts) => chat.viewer(login, opts),
    say: (who, text) => chat.inject(who, text),
    enter(logins, opts) {
      return logins.map((l) => {
        const v = chat.viewer(l, opts);
        chat.inject(v, '!enter');
        return v;
      });
    },
    mark: () => chat.botMessages().length,
    async nextBotLine(re, from = 0, timeoutMs = 5000) {
      const find = () => botLines(from).find((l) => re.test(l));
      await chat.waitFor(() => find() !== undefined, timeoutMs, `a bot line matching ${re}`);
      return find()!;
    },
    botLines,
    requests: (operation) => stack.fourthwall.control.requests.filter((r) => r.operation === operation),
    async idle() {
      await stack.bot.engine.whenIdle();
      await stack.bot.repo.flush();
    },
    async record(id) {
      const r = await stack.bot.repo.getDraw(id);
      if (!r) throw new Error(`no draw ${id} in the history`);
      return r;
    },
    async history() {
      await stack.bot.repo.flush();
      const c = captureIo(dataDir);
      const code = await runHistoryCli(['--json'], c.io);
      if (code !== 0) throw new Error(`history exited ${code}: ${c.err()}`);
      return JSON.parse(c.out()) as ExportRow[];
    },
    async verify(id) {
      await stack.bot.repo.flush();
      const c = captureIo(dataDir);
      const code = await runVerifyCli([id], c.io);
      return { code, out: c.out(), err: c.err() };
    },
    async close(removeData = false) {
      await stack.close();
      if (removeData) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The draw id the engine opened next (resolves on `draw-opened`). */
export function nextDrawOpened(s: LinkStack): Promise<DrawRecord> {
  return new Promise((resolve) => s.bot.engine.events.once('draw-opened', resolve));
}

/** Resolves once the draw `id` has `count` entrants (on the engine's `entered` events; start it before the !enter lines). */
export function entrantsReach(s: LinkStack, id: string, count: number): Promise<void> {
  return new Promise((resolve) => {
    const on = (drawId: string, _userId: string, entrants: number) => {
      if (drawId !== id || entrants < count) return;
      s.bot.engine.events.off('entered', on);
      resolve();
    };
    s.bot.engine.events.on('entered', on);
  });
}

/** Resolves once the winner's delivery state satisfies `pred` (on the delivery tracker's `changed` events). */
export function deliveryReaches(s: LinkStack, userId: string, pred: (d: Delivery) => boolean): Promise<Delivery> {
  return new Promise((resolve) => {
    const on = (_drawId: string, id: string, d: Delivery) => {
      if (id !== userId || !pred(d)) return;
      s.bot.delivery.off('changed', on);
      resolve(d);
    };
    s.bot.delivery.on('changed', on);
  });
}

/** A moderator starts a one-winner link giveaway of the mug, `logins` enter, the moderator ends it: the settled record. */
export async function runMugGiveaway(s: LinkStack, logins: string[]): Promise<DrawRecord> {
  const opened = nextDrawOpened(s);
  s.say(s.mod, '!giveaway start mug 1 30');
  const open = await opened;
  const entered = entrantsReach(s, open.id, logins.length);
  s.enter(logins);
  await entered;
  const settled = drawSettled(s, open.id);
  s.say(s.mod, '!giveaway end');
  return (await settled).record;
}

/** Resolves when the draw `id` (or any draw) is finished, failed or cancelled. */
export function drawSettled(s: LinkStack, id?: string): Promise<{ event: SettleEvent; record: DrawRecord }> {
  const events = s.bot.engine.events;
  return new Promise((resolve) => {
    const handlers = new Map<SettleEvent, (r: DrawRecord) => void>();
    for (const event of SETTLE_EVENTS) {
      handlers.set(event, (r) => {
        if (id !== undefined && r.id !== id) return;
        for (const [e, h] of handlers) events.off(e, h);
        resolve({ event, record: r });
      });
    }
    for (const [e, h] of handlers) events.on(e, h);
  });
}

const SETTLE_EVENTS = ['draw-finished', 'draw-failed', 'draw-cancelled'] as const;
type SettleEvent = (typeof SETTLE_EVENTS)[number];

/** `promise`, or a rejection naming `what` after `ms`: a wait that hangs says which step it was. */
export function within<T>(promise: Promise<T>, what: string, ms = 60_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
