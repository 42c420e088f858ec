/**
 * A local Twitch chat gateway for tests, benchmarks and the sandbox demo: a WebSocket server
 * (subprotocol `irc`) that speaks enough Twitch IRC for tmi.js 1.8.5 (CAP, PASS/NICK with
 * token check, welcome numerics, GLOBALUSERSTATE, JOIN -> USERSTATE then ROOMSTATE, PART,
 * PING/PONG both ways, RECONNECT) and lets a test play the channel: inject viewer messages with
 * realistic tags, watch what the bot says, change its mod status and the room's modes.
 *
 * Contract: every bot PRIVMSG is judged by Twitch's rules (see limits.ts) on the injected
 * clock; a delivered one is recorded in the transcript (kind 'bot') and answered with
 * USERSTATE (never an echo); a dropped one gets Twitch's NOTICE (none for an over-long one,
 * which Twitch drops silently) and a transcript entry of kind 'notice'. The one token
 * authenticates the bot login; `justinfan<digits>` may connect anonymously to read.
 * The same HTTP port serves Twitch's token validation and refresh under `/oauth2` (oauth.ts):
 * one access token is valid at a time and a refresh rotates it, so the chat login follows; and
 * Twitch's device code flow for a public application (device-code.ts: `/oauth2/device`, the
 * verification page `/activate`, single-use refresh tokens).
 * `halfOpen()` makes every open socket swallow what the bot writes and answer nothing (no
 * USERSTATE, no PONG, no chat) until `dropConnections()`, like a connection that died silently.
 * Deliberately not here: more than one channel, whispers, moderation commands (Twitch removed
 * them from IRC), flood disconnects, TLS. Nothing here reads process.env.
 *
 * Layout: types.ts (the public types), channel.ts (state and the lines written about the bot),
 * irc-session.ts (IRC command handling), control.ts (the control and faults API); this file owns
 * the HTTP side: listening, `/oauth2` and mounted handlers on the same port, the WebSocket
 * upgrade, and `close()`. Every public name stays importable from here.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { GiftdropError } from '../../shared/errors.js';
import { ChatControl } from './control.js';
import type { ChatServer, ChatServerOptions } from './types.js';

export type { SimViewer, SimViewerOptions, InjectExtra } from './viewers.js';
export type { ChatServer, ChatServerOptions, TranscriptEntry } from './types.js';

/** Starts the sandbox chat server; resolves once it listens. */
export async function startChatServer(opts: ChatServerOptions = {}): Promise<ChatServer> {
  const server = new SandboxChatServer(opts);
  await server.listen(opts.port ?? 0);
  return server;
}

class SandboxChatServer extends ChatControl implements ChatServer {
  port = 0;
  url = '';
  authUrl = '';

  private readonly http = createServer((req, res) => this.plainHttp(req, res));
  private readonly mounts: Array<(req: IncomingMessage, res: ServerResponse) => boolean> = [];
  private readonly wss: WebSocketServer;
  private closed = false;

  constructor(opts: ChatServerOptions) {
    super(opts);
    this.wss = new WebSocketServer({
      server: this.http,
      maxPayload: 1024 * 1024,
      handleProtocols: (protocols) => (protocols.has('irc') ? 'irc' : false),
    });
    this.wss.on('connection', (ws) => this.accept(ws));
    this.wss.on('error', (err) => this.log.debug({ err }, 'websocket server error'));
  }

  async listen(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => {
        this.closed = true;
        this.wss.close();
        reject(
          new GiftdropError(
            'SANDBOX_CHAT_LISTEN',
            `sandbox chat server cannot listen on ${this.host}:${port}: ${err.message}`,
            { cause: err },
          ),
        );
      };
      this.http.once('error', onError);
      this.http.listen(port, this.host, () => {
        this.http.off('error', onError);
        resolve();
      });
    });
    this.port = (this.http.address() as AddressInfo).port;
    const hostPort = `${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.port}`;
    this.url = `ws://${hostPort}`;
    this.authUrl = `http://${hostPort}/oauth2`;
    this.httpBase = `http://${hostPort}`;
    this.log.info({ url: this.url, channel: this.channel, botLogin: this.botLogin }, 'sandbox chat server listening');
  }

  mount(handler: (req: IncomingMessage, res: ServerResponse) => boolean): void {
    this.mounts.push(handler);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const conn of this.conns) conn.ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    await new Promise<void>((resolve) => {
      this.http.close(() => resolve());
      this.http.closeAllConnections();
    });
    for (const check of [...this.waiters]) check();
    this.log.info('sandbox chat server closed');
  }

  private plainHttp(req: IncomingMessage, res: ServerResponse): void {
    const handled = this.oauth.handle(req, res, (e) => {
      this.record({ kind: 'system', text: `oauth2 ${e.endpoint}: ${e.status}${e.message ? ` ${e.message}` : ''}` });
      this.emit('oauth', e);
      this.wake();
    });
    if (handled) return;
    for (const mounted of this.mounts) if (mounted(req, res)) return;
    res.writeHead(426, { 'content-type': 'text/plain; charset=utf-8', upgrade: 'websocket' });
    res.end('giftdrop sandbox chat: connect with a WebSocket (subprotocol irc)\n');
  }
}
