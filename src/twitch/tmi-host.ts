/**
 * The chat worker's entry (a worker thread started by tmi-worker.ts): the bot's tmi.js 1.8.5
 * client lives here, so reading the socket and parsing IRC (most of a chat line's cost) never
 * holds the bot's event loop, and a chat flood runs beside the giveaway engine on another core.
 *
 * Contract: builds one tmi.js client from `workerData` (HostOptions, chat-wire.ts); routes its
 * channel's events with chat-routing.ts (as the bot's thread did before) and reads USERSTATE and
 * PONG lines through userstate-tap.ts; posts everything in tmi.js's order, batched per turn (all
 * the lines of a socket read go in one batch, chat lines as bytes in transferred buffers), with the replies to the
 * commands made before them. The password is asked of the bot's thread at every login (its token
 * keeper stays there). Log lines at or above the bot's level are posted as events. Commands:
 * connect, disconnect, raw (a line written with tmi.js's raw()), reconnect (tmi.js's reconnect
 * flag). Holds nothing else; the bot's thread ends it with `terminate()`.
 */
import type { EventEmitter } from 'node:events';
import { parentPort, workerData } from 'node:worker_threads';
import tmi from 'tmi.js';
import { routeChannelEvents } from './chat-routing.js';
import { LineWriter, type HostCommand, type HostEvent, type HostOptions, type HostPost, type HostReply, type LogLevel } from './chat-wire.js';
import { tmiLogger } from './tmi-glue.js';
import { tapUserState, tmiSocket } from './userstate-tap.js';

const port = parentPort;
if (!port) throw new Error('tmi-host.ts runs as a worker thread (tmi-worker.ts starts it)');
const o = workerData as HostOptions;

const LEVELS: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

const lines = new LineWriter();
let events: HostEvent[] = [];
let replies: HostReply[] = [];
let queued = false;

function post(): void {
  queued = false;
  const taken = lines.take();
  const batch: HostPost = { kind: 'batch', lines: taken, events, replies };
  events = [];
  replies = [];
  try {
    port!.postMessage(batch, [taken.bytes.buffer, taken.starts.buffer, taken.numbers.buffer]);
  } catch {
    // Only a log line's fields can fail to clone: they go as a note, so no line or event is lost.
    for (const e of batch.events) if (e.kind === 'log') e.obj = { note: 'log fields could not be passed from the chat worker' };
    port!.postMessage(batch, [taken.bytes.buffer, taken.starts.buffer, taken.numbers.buffer]);
  }
}

/** Posts what this turn added once the turn ends (a socket read's lines go together). */
function soon(): void {
  if (queued) return;
  queued = true;
  queueMicrotask(post);
}

function event(e: HostEvent): void {
  events.push(e);
  soon();
}

function at(): number {
  return lines.count;
}

function reply(id: number, ok: boolean, error?: unknown): void {
  replies.push(ok ? { id, ok } : { id, ok, error: cloneable(error) });
  soon();
}

/** What tmi.js rejects with, in a form a structured clone keeps (strings stay strings). */
function cloneable(error: unknown): unknown {
  if (typeof error === 'string' || error instanceof Error) return error;
  return String(error);
}

/** The logger the routing and tmi.js write to: posted as events when the bot's logger writes that level. */
function logAt(level: LogLevel) {
  const enabled = LEVELS[level] >= o.logLevel;
  return (objOrMsg: unknown, msg?: string): void => {
    if (!enabled) return;
    const obj = typeof objOrMsg === 'object' && objOrMsg !== null ? (objOrMsg as Record<string, unknown>) : {};
    const text = typeof objOrMsg === 'string' ? objOrMsg : (msg ?? '');
    event({ at: at(), kind: 'log', level, obj: cloneLogObject(obj), msg: text });
  };
}

/** A log object's fields, with an `err` reduced to what a clone keeps. */
function cloneLogObject(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) out[k] = v instanceof Error ? { name: v.name, message: v.message } : v;
  return out;
}

const log = { trace: logAt('trace'), debug: logAt('debug'), info: logAt('info'), warn: logAt('warn'), error: logAt('error'), fatal: logAt('fatal') };

// The token is asked of the bot's thread at every login (tmi.js awaits a promised password).
let tokenAsks = 0;
const tokenWaits = new Map<number, (token: string) => void>();
function password(): Promise<string> {
  const id = ++tokenAsks;
  return new Promise((resolve) => {
    tokenWaits.set(id, resolve);
    const ask: HostPost = { kind: 'token', id };
    port!.postMessage(ask);
  });
}

const client = new tmi.Client({
  options: { skipUpdatingEmotesets: true, messagesLogLevel: 'trace', joinInterval: o.joinInterval },
  connection: {
    server: o.server,
    port: o.port,
    secure: o.secure,
    reconnect: true,
    reconnectInterval: o.reconnectInterval,
    maxReconnectInterval: o.maxReconnectInterval,
    maxReconnectAttempts: Infinity,
    timeout: o.timeout,
  },
  identity: { username: o.botLogin, password },
  channels: [o.channelKey],
  logger: tmiLogger(log),
});

routeChannelEvents(
  // (the receive time is the bot thread's, read when a batch arrives: chat-wire.ts)
  { client, channelKey: o.channelKey, botLogin: o.botLogin, log },
  {
    message: (m) => {
      lines.add(m);
      soon();
    },
    roomState: (tags) => event({ at: at(), kind: 'roomstate', tags: { ...tags } }),
    notice: (msgId, text) => event({ at: at(), kind: 'notice', msgId, text }),
    automod: (msgId, text) => event({ at: at(), kind: 'automod', msgId, text }),
    mod: (mod) => event({ at: at(), kind: 'mod', mod }),
  },
);

const onRaw = (_copy: unknown, message: { command?: string; params?: string[]; tags?: Record<string, unknown> }): void => {
  if (message.command === 'USERSTATE') event({ at: at(), kind: 'userstate', channel: message.params?.[0], tags: message.tags ? { ...message.tags } : undefined });
  else if (message.command === 'PONG') event({ at: at(), kind: 'pong', token: message.params?.at(-1) });
};

client.on('connecting', () => {
  // tmi.js opened a new socket (first connect or a reconnect): read its USERSTATE lines.
  const socket = tmiSocket(client);
  if (socket) tapUserState(socket, client as unknown as EventEmitter, onRaw);
  else log.warn('tmi.js has no socket to read USERSTATE from; lines cannot be confirmed');
  event({ at: at(), kind: 'connecting' });
});
client.on('reconnect', () => event({ at: at(), kind: 'reconnect' }));
client.on('disconnected', (reason) => event({ at: at(), kind: 'disconnected', reason: String(reason) }));

/** tmi.js's reconnect flag (not in @types/tmi.js). */
function setReconnect(on: boolean): void {
  (client as unknown as { reconnect: boolean }).reconnect = on;
}

function settle(id: number, run: () => Promise<unknown>): void {
  let p: Promise<unknown>;
  try {
    p = run();
  } catch (err) {
    reply(id, false, err);
    return;
  }
  p.then(
    () => reply(id, true),
    (err: unknown) => reply(id, false, err),
  );
}

port.on('message', (c: HostCommand) => {
  switch (c.op) {
    case 'connect':
      settle(c.id, () => client.connect());
      break;
    case 'disconnect':
      settle(c.id, () => client.disconnect());
      break;
    case 'raw':
      settle(c.id, () => client.raw(c.line));
      break;
    case 'reconnect':
      setReconnect(c.on);
      break;
    case 'token': {
      const wait = tokenWaits.get(c.id);
      tokenWaits.delete(c.id);
      wait?.(c.token);
      break;
    }
  }
});
