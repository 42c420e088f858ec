/**
 * TmiWorker: the bot thread's side of the chat worker (tmi-host.ts runs tmi.js on a worker
 * thread), for the chat client (client.ts).
 *
 * Contract:
 * - `connect()`, `disconnect()` and `raw(line)` are tmi.js's, run in the worker: they resolve or
 *   reject as tmi.js did (a rejection is often a plain string, e.g. 'Not connected to server.');
 *   `setReconnect` sets tmi.js's reconnect flag;
 * - the handlers get the channel's events in tmi.js's order, one batch per socket read; chat
 *   lines come as ChatMessages (chat-wire.ts WireMessage) whose `receivedAt` is `clock.now()`
 *   read once per batch; log lines of the worker go to `log` at their level;
 * - `token()` is asked at every login (read then, so a refreshed token counts from the next one);
 * - the worker starts with the first `connect()` (tmi.js is loaded there, never with this
 *   module) and is unref'd: it never holds the process open. `close()` disconnects and ends it
 *   (see there); the next `connect()` starts another. A worker that dies (it should not) is logged, every
 *   pending call rejects, the handlers get `disconnected`, and when tmi.js's reconnect flag was
 *   on a new worker connects after tmi.js's reconnect delay (doubled for each worker that dies
 *   before a connect succeeds, up to its maximum);
 * - under a TypeScript loader (tests, benchmarks: this file is a .ts) the worker loads tsx's ESM
 *   hooks first; from dist/ it is plain JavaScript.
 */
import { Worker } from 'node:worker_threads';
import type { ChatMessage } from '../shared/chat.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../logging/index.js';
import { readableLines, WireMessage, type HostCommand, type HostOptions, type HostPost } from './chat-wire.js';
import type { TmiTags } from './parse.js';

export interface TmiHandlers {
  message(message: ChatMessage): void;
  roomState(tags: TmiTags): void;
  notice(msgId: string, text: string): void;
  automod(msgId: string, text: string): void;
  mod(mod: boolean): void;
  userState(channel: string | undefined, tags: Record<string, unknown> | undefined): void;
  pong(token: string | undefined): void;
  connecting(): void;
  reconnect(): void;
  disconnected(reason: string): void;
}

export interface TmiWorkerOptions {
  options: HostOptions;
  /** The chat token without `oauth:`, read at every login. */
  token: () => string;
  handlers: TmiHandlers;
  clock: Pick<Clock, 'now'>;
  log: Logger;
}

/** The worker's entry next to this file: tmi-host.ts under a TypeScript loader, tmi-host.js in dist/. */
function hostEntry(): { url: URL; typescript: boolean } {
  const typescript = import.meta.url.endsWith('.ts');
  return { url: new URL(typescript ? './tmi-host.ts' : './tmi-host.js', import.meta.url), typescript };
}

function startWorker(data: HostOptions): Worker {
  const { url, typescript } = hostEntry();
  if (!typescript) return new Worker(url, { workerData: data });
  // tsx's hooks must be in place before the entry is resolved (execArgv's --import is too late in Node 20).
  const boot = `import('tsx/esm/api').then((api) => { api.register(); return import(${JSON.stringify(url.href)}); })`;
  return new Worker(boot, { eval: true, workerData: data });
}

export class TmiWorker {
  private worker: Worker | undefined;
  private calls = 0;
  private readonly pending = new Map<number, { op: HostCommand['op']; resolve: () => void; reject: (reason: unknown) => void }>();
  private reconnectOn = false;
  private readonly channel: string;
  /** Wait before a new worker replaces one that died (tmi.js's reconnect delays: doubled per death, reset by a connect). */
  private restartMs: number;
  private restartTimer: NodeJS.Timeout | undefined;

  constructor(private readonly o: TmiWorkerOptions) {
    this.channel = o.options.channelKey.slice(1);
    this.restartMs = o.options.reconnectInterval;
  }

  connect(): Promise<void> {
    this.cancelRestart();
    return this.call({ op: 'connect', id: 0 }).then(() => {
      this.restartMs = this.o.options.reconnectInterval;
    });
  }

  /** tmi.js's disconnect (the worker stays; no call when it was never started). */
  disconnect(): Promise<void> {
    if (!this.worker) return Promise.resolve();
    return this.call({ op: 'disconnect', id: 0 });
  }

  raw(line: string): Promise<void> {
    if (!this.worker) return Promise.reject('Not connected to server.');
    return this.call({ op: 'raw', id: 0, line });
  }

  setReconnect(on: boolean): void {
    this.reconnectOn = on;
    if (!on) this.cancelRestart();
    this.worker?.postMessage({ op: 'reconnect', on } satisfies HostCommand);
  }

  /**
   * Ends the worker: a connection made is closed with tmi.js's disconnect first; while a connect
   * is still under way the worker is ended at once (a worker still starting opens no socket).
   * Calls still pending reject.
   */
  async close(): Promise<void> {
    this.cancelRestart();
    const worker = this.worker;
    if (!worker) return;
    const connecting = [...this.pending.values()].some((p) => p.op === 'connect');
    if (!connecting) await this.disconnect().catch(() => undefined);
    if (this.worker !== worker) return; // it died meanwhile (died() cleaned up)
    this.worker = undefined;
    worker.removeAllListeners('exit');
    worker.removeAllListeners('error');
    this.rejectPending(new Error('the chat connection was closed'));
    await worker.terminate();
  }

  private rejectPending(err: Error): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(err);
  }

  private call(c: Extract<HostCommand, { op: 'connect' | 'disconnect' | 'raw' }>): Promise<void> {
    const worker = this.worker ?? this.start();
    const id = ++this.calls;
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, { op: c.op, resolve, reject });
      const command: HostCommand = { ...c, id };
      worker.postMessage(command);
    });
  }

  private start(): Worker {
    const worker = startWorker(this.o.options);
    worker.unref();
    this.worker = worker;
    worker.on('message', (post: HostPost) => this.onPost(worker, post));
    worker.on('error', (err) => this.died(worker, err));
    worker.on('exit', (code) => this.died(worker, new Error(`exited with code ${code}`)));
    worker.postMessage({ op: 'reconnect', on: this.reconnectOn } satisfies HostCommand);
    return worker;
  }

  private died(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.o.log.error({ err }, 'the chat worker stopped');
    this.rejectPending(new Error(`the chat worker stopped: ${err.message}`));
    this.o.handlers.disconnected(`the chat worker stopped: ${err.message}`);
    if (!this.reconnectOn) return;
    // A worker that cannot start would die again at once: wait as tmi.js does between reconnects.
    const wait = this.restartMs;
    this.restartMs = Math.min(this.restartMs * 2, this.o.options.maxReconnectInterval);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.reconnectOn && !this.worker) this.connect().catch(() => undefined);
    }, wait);
    this.restartTimer.unref();
  }

  private cancelRestart(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
  }

  private onPost(worker: Worker, post: HostPost): void {
    if (this.worker !== worker) return;
    if (post.kind === 'token') {
      let token = '';
      try {
        token = this.o.token();
      } catch (err) {
        this.o.log.error({ err }, 'could not read the chat token');
      }
      worker.postMessage({ op: 'token', id: post.id, token } satisfies HostCommand);
      return;
    }
    const h = this.o.handlers;
    const { events, replies } = post;
    const lines = readableLines(post.lines);
    const receivedAt = this.o.clock.now();
    const count = lines.count;
    let next = 0;
    const linesUpTo = (end: number) => {
      for (; next < end; next++) this.deliver(WireMessage.read(this.channel, lines, next, receivedAt));
    };
    for (const e of events) {
      linesUpTo(e.at);
      switch (e.kind) {
        case 'roomstate':
          h.roomState(e.tags);
          break;
        case 'notice':
          h.notice(e.msgId, e.text);
          break;
        case 'automod':
          h.automod(e.msgId, e.text);
          break;
        case 'mod':
          h.mod(e.mod);
          break;
        case 'userstate':
          h.userState(e.channel, e.tags);
          break;
        case 'pong':
          h.pong(e.token);
          break;
        case 'connecting':
          h.connecting();
          break;
        case 'reconnect':
          h.reconnect();
          break;
        case 'disconnected':
          h.disconnected(e.reason);
          break;
        case 'log':
          this.o.log[e.level](e.obj, e.msg);
          break;
      }
    }
    linesUpTo(count);
    for (const r of replies) {
      const p = this.pending.get(r.id);
      if (!p) continue;
      this.pending.delete(r.id);
      if (r.ok) p.resolve();
      else p.reject(r.error);
    }
  }

  /** One chat line to the handler (a throw is logged; the batch goes on). */
  private deliver(message: ChatMessage): void {
    try {
      this.o.handlers.message(message);
    } catch (err) {
      this.o.log.error({ err }, 'chat line handling failed');
    }
  }
}
