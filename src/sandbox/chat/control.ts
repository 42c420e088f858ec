/**
 * The sandbox chat server's control and faults API, the part a test or the sandbox demo drives:
 * play viewers (`viewer`, `inject`, `injectRaw`, Shared Chat's partner viewers through
 * `sharedChat`, shared-chat.ts), read what happened (`transcript`,
 * `botMessages`, `notices`, `waitFor`, `joined`, `connections`), change the channel
 * (`setBotMod`, `setRoomState`) and break things on purpose (`expireToken`, `revokeLogin`, `halfOpen`,
 * `holdPongs`, `sendReconnect`, `dropConnections`, `ping`).
 *
 * Contract: every change is recorded in the transcript (kind 'system') and told to the clients
 * the way Twitch would (USERSTATE/MODE, one ROOMSTATE per changed mode, RECONNECT); `waitFor`
 * re-checks on every change and rejects with the transcript's tail after its (real-time)
 * timeout; `injectRaw` batches pre-formatted lines into large frames and records nothing.
 */
import { randomUUID } from 'node:crypto';
import { WebSocket } from 'ws';
import type { RoomModes } from './limits.js';
import {
  formatViewerPrivmsg,
  makeViewer,
  normaliseLogin,
  type InjectExtra,
  type SimViewer,
  type SimViewerOptions,
} from './viewers.js';
import { IrcSessions } from './irc-session.js';
import { SharedChatSession } from './shared-chat.js';
import { ApiMessages, type ApiMessageInput, type ApiMessageResult } from './api-messages.js';
import type { ChatServer, RoomStateChange } from './types.js';

const RAW_BATCH_CHARS = 256 * 1024;

/** The test-facing API on top of the IRC handling; see the module header. */
export abstract class ChatControl extends IrcSessions {
  readonly sharedChat = new SharedChatSession({
    ctx: this.ctx,
    deliver: (line) => {
      for (const conn of this.inChannel()) this.send(conn, line);
      this.wake();
    },
    record: (entry) => this.record(entry),
    line: (line) => this.emit('chat-line', line),
    announce: (event) => {
      this.emit('shared-chat', event);
      this.wake();
    },
  });

  private readonly api = new ApiMessages({
    channel: this.channel,
    botLogin: this.botLogin,
    botUserId: this.botUserId,
    now: () => this.clock.now(),
    policy: this.policy,
    modes: this.modes,
    sender: () => ({
      privileged: this.botLogin === this.channel || this.botMod,
      subscriber: this.botSubscriber,
      following: this.botFollowing,
    }),
    dropped: (entry) => {
      this.record(entry);
      this.wake();
    },
    delivered: (entry) => {
      const recorded = this.record(entry);
      const line = this.botPrivmsgLine(this.channel, entry.text, entry.messageId!);
      for (const conn of this.inChannel()) this.send(conn, line);
      this.emit('bot-message', recorded);
      this.botChatLine(entry.messageId!, entry.text, entry.chatBotBadge);
      this.wake();
    },
  });

  postApiMessage(input: ApiMessageInput): ApiMessageResult {
    return this.api.post(input);
  }

  dropNextApiMessage(code: string): void {
    this.api.dropNext(code);
  }

  isBotMod(): boolean {
    return this.botMod;
  }

  viewer(login: string, opts: SimViewerOptions = {}): SimViewer {
    const l = normaliseLogin(login);
    if (l === this.channel) return makeViewer(l, { ...opts, broadcaster: true }, this.channelId);
    return makeViewer(l, opts);
  }

  get token(): string {
    return this.oauth.accessToken;
  }

  get refreshToken(): string {
    return this.oauth.refreshToken;
  }

  get clientId(): string {
    return this.oauth.clientId;
  }

  get clientSecret(): string {
    return this.oauth.clientSecret;
  }

  get tokens(): ChatServer['tokens'] {
    return this.oauth;
  }

  expireToken(): void {
    this.oauth.expire();
    this.record({ kind: 'system', text: 'the bot token expired' });
    this.wake();
  }

  revokeLogin(login: string): number {
    const l = normaliseLogin(login);
    let n = this.oauth.deviceLogin?.revoke(l) ?? 0;
    if (l === this.botLogin) {
      this.oauth.revoke();
      n++;
    }
    this.record({ kind: 'system', login: l, text: `${l} disconnected the application: its tokens were revoked` });
    this.wake();
    return n;
  }

  get deviceLogin(): ChatServer['deviceLogin'] {
    return this.oauth.deviceLogin!;
  }

  holdPongs(hold: boolean): void {
    this.record({ kind: 'system', text: hold ? 'PONG replies held back' : 'PONG replies released' });
    if (hold) {
      this.heldPongs ??= [];
      return;
    }
    const held = this.heldPongs ?? [];
    this.heldPongs = undefined;
    for (const reply of held) reply();
  }

  halfOpen(): void {
    this.record({ kind: 'system', text: `${this.conns.size} connection(s) went half-open` });
    for (const conn of this.conns) conn.halfOpen = true;
    this.wake();
  }

  get roomState(): Readonly<RoomModes> {
    return { ...this.modes };
  }

  formatPrivmsg(viewer: SimViewer, text: string, extra: InjectExtra = {}): string {
    return formatViewerPrivmsg(this.ctx, viewer, text, extra);
  }

  inject(viewer: SimViewer, text: string, extra: InjectExtra = {}): void {
    const firstMessage = extra.firstMessage ?? (viewer.roles.firstMessage && !this.chatted.has(viewer.userId));
    const messageId = randomUUID();
    const source = this.sharedChat.ownSource(viewer, messageId);
    const line = formatViewerPrivmsg(this.ctx, viewer, text, { ...extra, firstMessage }, messageId, source);
    this.chatted.add(viewer.userId);
    this.record({
      kind: 'viewer',
      login: viewer.login,
      userId: viewer.userId,
      displayName: viewer.displayName,
      text,
      messageId,
      ...(extra.action ? { action: true } : {}),
      ...(extra.bits ? { bits: Math.floor(extra.bits) } : {}),
    });
    for (const conn of this.inChannel()) this.send(conn, line);
    this.emit('chat-line', {
      messageId,
      userId: viewer.userId,
      login: viewer.login,
      displayName: viewer.displayName,
      roles: { ...viewer.roles, firstMessage },
      text,
      ...(extra.bits ? { bits: Math.floor(extra.bits) } : {}),
      ...(source
        ? {
            source: {
              channelId: this.channelId,
              channelLogin: this.channel,
              messageId,
              roles: viewer.roles,
              only: false,
            },
          }
        : {}),
    });
    this.wake();
  }

  injectRaw(lines: readonly string[], options: { only?: number } = {}): void {
    if (!lines.length) return;
    const joined = [...this.inChannel()];
    const chosen = options.only === undefined ? joined : joined.slice(options.only, options.only + 1);
    const targets = chosen.filter((c) => !c.halfOpen);
    if (!targets.length) return;
    let start = 0;
    let size = 0;
    for (let i = 0; i < lines.length; i++) {
      size += lines[i]!.length + 2;
      if (size >= RAW_BATCH_CHARS || i === lines.length - 1) {
        const frame = `${lines.slice(start, i + 1).join('\r\n')}\r\n`;
        for (const conn of targets) conn.ws.send(frame);
        start = i + 1;
        size = 0;
      }
    }
  }

  botMessages(): string[] {
    return this.transcript.filter((e) => e.kind === 'bot').map((e) => e.text);
  }

  notices(): { msgId: string; text: string }[] {
    return this.transcript.filter((e) => e.kind === 'notice').map((e) => ({ msgId: e.msgId ?? '', text: e.text }));
  }

  waitFor(predicate: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const finish = (err?: Error): void => {
        if (settled) return;
        settled = true;
        this.waiters.delete(check);
        clearInterval(poll);
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
      const check = (): void => {
        try {
          if (predicate()) finish();
        } catch (err) {
          finish(err instanceof Error ? err : new Error(String(err)));
        }
      };
      const poll = setInterval(check, 10);
      const timer = setTimeout(() => {
        const tail = this.transcript
          .slice(-5)
          .map((e) => `${e.kind}${e.login ? ` ${e.login}` : ''}${e.msgId ? ` [${e.msgId}]` : ''}: ${e.text}`)
          .join(' | ');
        finish(
          new Error(
            `sandbox chat: waitFor(${what}) timed out after ${timeoutMs} ms; last transcript: ${tail || '(empty)'}`,
          ),
        );
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  setBotMod(mod: boolean): void {
    if (this.botMod === mod) return;
    this.botMod = mod;
    this.record({
      kind: 'system',
      login: this.botLogin,
      text: `${this.botLogin} is ${mod ? 'now' : 'no longer'} a moderator`,
    });
    for (const conn of this.inChannel()) {
      if (conn.anonymous) {
        if (conn.caps.has('twitch.tv/membership'))
          this.send(conn, `:jtv MODE #${this.channel} ${mod ? '+o' : '-o'} ${this.botLogin}`);
        continue;
      }
      const lines = [this.userstateLine()];
      if (conn.caps.has('twitch.tv/membership'))
        lines.push(`:jtv MODE #${this.channel} ${mod ? '+o' : '-o'} ${this.botLogin}`);
      this.send(conn, lines);
    }
    this.wake();
  }

  setRoomState(s: RoomStateChange): void {
    const before = { ...this.modes };
    this.applyModes(s);
    const lines: string[] = [];
    const room = `@room-id=${this.channelId};`;
    const target = ` :tmi.twitch.tv ROOMSTATE #${this.channel}`;
    if (before.emoteOnly !== this.modes.emoteOnly)
      lines.push(`${room}emote-only=${this.modes.emoteOnly ? 1 : 0}${target}`);
    if (before.followersOnly !== this.modes.followersOnly)
      lines.push(`${room}followers-only=${this.modes.followersOnly}${target}`);
    if (before.r9k !== this.modes.r9k) lines.push(`${room}r9k=${this.modes.r9k ? 1 : 0}${target}`);
    if (before.slow !== this.modes.slow) lines.push(`${room}slow=${this.modes.slow}${target}`);
    if (before.subsOnly !== this.modes.subsOnly) lines.push(`${room}subs-only=${this.modes.subsOnly ? 1 : 0}${target}`);
    if (!lines.length) return;
    this.record({ kind: 'system', text: `room state: ${JSON.stringify(this.modes)}` });
    for (const conn of this.inChannel()) this.send(conn, lines);
    this.wake();
  }

  sendReconnect(): void {
    this.record({ kind: 'system', text: `RECONNECT sent to ${this.conns.size} connection(s)` });
    for (const conn of this.conns) {
      this.send(conn, ':tmi.twitch.tv RECONNECT');
      conn.ws.close(1000, 'reconnect');
    }
    this.wake();
  }

  dropConnections(): void {
    this.record({ kind: 'system', text: `dropped ${this.conns.size} connection(s)` });
    for (const conn of this.conns) conn.ws.terminate();
    this.wake();
  }

  ping(timeoutMs = 5000): Promise<number> {
    const targets = [...this.conns].filter((c) => c.login !== undefined && c.ws.readyState === WebSocket.OPEN);
    const answers = targets.map(
      (conn) =>
        new Promise<void>((resolve) => {
          conn.pongWaiters.push(resolve);
          this.send(conn, 'PING :tmi.twitch.tv');
        }),
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`sandbox chat: no PONG from every client within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    return Promise.race([Promise.all(answers), timeout])
      .then(() => targets.length)
      .finally(() => clearTimeout(timer));
  }

  connections(): number {
    return this.conns.size;
  }

  joined(): string[] {
    const out: string[] = [];
    for (const conn of this.inChannel()) if (conn.login) out.push(conn.login);
    return out;
  }
}
