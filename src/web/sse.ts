/**
 * Server-sent event streams with a bound: at most `max` open clients (503 with Retry-After above
 * it), a heartbeat comment so proxies and OBS keep the stream open, and a client that does not
 * read (more than MAX_BUFFERED bytes waiting) is dropped instead of growing memory.
 *
 * Contract: `open` answers the request (200 + first frame, or 503) and keeps the client until it
 * disconnects or `closeAll`; `broadcast` writes one frame to every client and returns the bytes
 * written per client. Does not decide what is sent or when.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

const MAX_BUFFERED = 1024 * 1024;
const HEARTBEAT_MS = 20_000;

export interface SseHubOptions {
  max: number;
  /** Extra response headers (e.g. a Content-Security-Policy). */
  headers?: Record<string, string>;
}

export function sseFrame(event: string, data: string): string {
  return `event: ${event}\ndata: ${data.replace(/\n/g, '\ndata: ')}\n\n`;
}

export class SseHub {
  private readonly clients = new Set<ServerResponse>();
  private readonly heartbeat: NodeJS.Timeout;

  constructor(private readonly options: SseHubOptions) {
    this.heartbeat = setInterval(() => this.write(': ping\n\n'), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  get size(): number {
    return this.clients.size;
  }

  /** Opens a stream for `req` starting with `first` (an already formatted frame); false when full. */
  open(req: IncomingMessage, res: ServerResponse, first: string): boolean {
    if (this.clients.size >= this.options.max) {
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'retry-after': '5', ...this.options.headers });
      res.end('too many overlay connections\n');
      return false;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...this.options.headers,
    });
    req.socket.setNoDelay(true);
    req.socket.setTimeout(0);
    res.write(`retry: 2000\n\n${first}`);
    this.clients.add(res);
    const drop = () => this.clients.delete(res);
    res.on('close', drop);
    res.on('error', drop);
    return true;
  }

  /** Writes `frame` to every client; returns its size in bytes. */
  broadcast(frame: string): number {
    this.write(frame);
    return Buffer.byteLength(frame);
  }

  closeAll(): void {
    clearInterval(this.heartbeat);
    for (const res of this.clients) res.end();
    this.clients.clear();
  }

  private write(text: string): void {
    for (const res of this.clients) {
      if (res.writableLength > MAX_BUFFERED) {
        this.clients.delete(res);
        res.destroy();
        continue;
      }
      res.write(text);
    }
  }
}
