/**
 * Server-sent event streams with bounds that never lock the streamer's overlay out: at most
 * `maxPerClient` streams per client (web clients key them by address) and `max` in all; a new
 * stream over either cap EVICTS one (of that client, else of all) instead of being refused, so a
 * reload or reconnect of the real overlay always gets in, and an evicted EventSource simply
 * reconnects. The one evicted is a stream that does not read (bytes still waiting since the last
 * heartbeat) if there is one, else the NEWEST: the long-lived stream of the overlay that renders
 * is kept, and a client re-opening streams in a loop only replaces its own previous one. A heartbeat comment every `heartbeatMs` keeps proxies and OBS
 * from closing the stream; a client that has not drained what was written by the next heartbeat
 * (idle: it does not read) or holds more than MAX_BUFFERED bytes is dropped; a stream older than
 * `maxAgeMs` is ended (the browser reconnects at once and gets the current state), so no stream is
 * held forever.
 *
 * Contract: `open` answers the request (200 + first frame) and keeps the client until it
 * disconnects, is evicted or timed out, or `closeAll`; `broadcast` writes one frame to every client
 * and returns its size in bytes. Does not decide what is sent or when.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

const MAX_BUFFERED = 1024 * 1024;

export interface SseHubOptions {
  /** Streams in all. */
  max: number;
  /** Streams per client key (default 8). */
  maxPerClient?: number;
  /** Heartbeat interval (default 15 s); a client that has not drained by the next one is dropped. */
  heartbeatMs?: number;
  /** A stream is ended (and reconnects) after this long (default 30 minutes). */
  maxAgeMs?: number;
  /** Extra response headers (e.g. a Content-Security-Policy). */
  headers?: Record<string, string>;
}

interface Client {
  res: ServerResponse;
  key: string;
  openedAt: number;
  /** Bytes still waiting at the last heartbeat. */
  waiting: number;
}

export function sseFrame(event: string, data: string): string {
  return `event: ${event}\ndata: ${data.replace(/\n/g, '\ndata: ')}\n\n`;
}

export class SseHub {
  /** In opening order: the first is the oldest. */
  private readonly clients = new Map<ServerResponse, Client>();
  private readonly heartbeat: NodeJS.Timeout;
  private evictions = 0;

  constructor(private readonly options: SseHubOptions) {
    this.heartbeat = setInterval(() => this.beat(), options.heartbeatMs ?? 15_000);
    this.heartbeat.unref();
  }

  get size(): number {
    return this.clients.size;
  }

  /** Streams ended to make room for newer ones, so far. */
  get evicted(): number {
    return this.evictions;
  }

  /** Opens a stream for `req` (client `key`) starting with `first` (an already formatted frame). */
  open(req: IncomingMessage, res: ServerResponse, first: string, key: string): void {
    const perClient = this.options.maxPerClient ?? 8;
    let mine = 0;
    for (const c of this.clients.values()) if (c.key === key) mine += 1;
    if (mine >= perClient) this.evictOne((c) => c.key === key);
    if (this.clients.size >= this.options.max) this.evictOne(() => true);
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      // The stream is the whole connection: when it ends, so does the socket.
      connection: 'close',
      'x-accel-buffering': 'no',
      ...this.options.headers,
    });
    req.socket.setNoDelay(true);
    req.socket.setTimeout(0);
    res.write(`retry: 2000\n\n${first}`);
    const client: Client = { res, key, openedAt: Date.now(), waiting: 0 };
    this.clients.set(res, client);
    const drop = () => this.clients.delete(res);
    res.on('close', drop);
    res.on('error', drop);
  }

  /** Writes `frame` to every client; returns its size in bytes. */
  broadcast(frame: string): number {
    this.write(frame);
    return Buffer.byteLength(frame);
  }

  closeAll(): void {
    clearInterval(this.heartbeat);
    for (const res of this.clients.keys()) res.end();
    this.clients.clear();
  }

  /** Ends one matching stream: one that does not read, else the newest (see the module comment). */
  private evictOne(match: (c: Client) => boolean): void {
    let victim: Client | undefined;
    for (const c of this.clients.values()) {
      if (!match(c)) continue;
      if (c.res.writableLength > 0) {
        victim = c;
        break;
      }
      victim = c; // opening order: the last match is the newest
    }
    if (!victim) return;
    this.end(victim);
    this.evictions += 1;
  }

  private end(c: Client): void {
    this.clients.delete(c.res);
    c.res.end();
    // A client that does not read would keep the socket until its buffers drain: cut it.
    if (c.res.writableLength > 0) c.res.destroy();
  }

  private beat(): void {
    const now = Date.now();
    const maxAge = this.options.maxAgeMs ?? 1_800_000;
    for (const c of [...this.clients.values()]) {
      // Idle: what was waiting at the last heartbeat is still waiting (the client does not read).
      if (c.waiting > 0 && c.res.writableLength >= c.waiting) {
        this.clients.delete(c.res);
        c.res.destroy();
        continue;
      }
      if (now - c.openedAt >= maxAge) {
        this.end(c);
        continue;
      }
    }
    this.write(': ping\n\n');
    for (const c of this.clients.values()) c.waiting = c.res.writableLength;
  }

  private write(text: string): void {
    for (const c of [...this.clients.values()]) {
      if (c.res.writableLength > MAX_BUFFERED) {
        this.clients.delete(c.res);
        c.res.destroy();
        continue;
      }
      c.res.write(text);
    }
  }
}
