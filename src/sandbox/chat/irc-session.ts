/**
 * The sandbox chat server's IRC command handling: one WebSocket per client, Twitch IRC lines in
 * (CAP, PASS/NICK with the token check, PING/PONG, JOIN, PART, PRIVMSG, QUIT) and Twitch's
 * answers out (welcome numerics, GLOBALUSERSTATE, USERSTATE then ROOMSTATE on JOIN, NOTICEs).
 *
 * Contract: every bot PRIVMSG is judged by Twitch's rules (limits.ts) on the injected clock; a
 * delivered one is recorded (kind 'bot'), answered with USERSTATE (never an echo) and relayed to
 * the other clients in the channel; a dropped one gets Twitch's NOTICE (none for an over-long
 * one) and a transcript entry of kind 'notice'. The current token authenticates the bot login;
 * `justinfan<digits>` connects anonymously to read. A half-open socket swallows every line and
 * answers nothing. A line that fails to parse or to be handled is logged and skipped.
 */
import { randomUUID } from 'node:crypto';
import { WebSocket, type RawData } from 'ws';
import { formatTags, parseLine, type IrcLine } from './irc.js';
import { noticeText } from './limits.js';
import { bareToken, ChatChannel, type Conn } from './channel.js';
import type { ConnectionInfo } from './types.js';

const KNOWN_CAPS = ['twitch.tv/tags', 'twitch.tv/commands', 'twitch.tv/membership'];

/** IRC command handling on top of the channel state; see the module header. */
export abstract class IrcSessions extends ChatChannel {
  private nextConnId = 1;

  protected accept(ws: WebSocket): void {
    const conn: Conn = {
      id: this.nextConnId++,
      ws,
      caps: new Set(),
      anonymous: false,
      joined: new Set(),
      pongWaiters: [],
    };
    this.conns.add(conn);
    this.log.debug({ conn: conn.id }, 'socket opened');
    ws.on('message', (data: RawData, isBinary: boolean) => this.onFrame(conn, data, isBinary));
    ws.on('error', (err) => this.log.debug({ conn: conn.id, err }, 'socket error'));
    ws.on('close', () => {
      this.conns.delete(conn);
      const info: ConnectionInfo = {
        id: conn.id,
        anonymous: conn.anonymous,
        ...(conn.login ? { login: conn.login } : {}),
      };
      if (conn.login) this.record({ kind: 'system', login: conn.login, text: `${conn.login} disconnected` });
      this.log.debug({ conn: conn.id }, 'socket closed');
      this.emit('disconnect', info);
      this.wake();
    });
  }

  private onFrame(conn: Conn, data: RawData, isBinary: boolean): void {
    if (isBinary) {
      this.log.debug({ conn: conn.id }, 'binary frame ignored');
      return;
    }
    const text = Array.isArray(data)
      ? Buffer.concat(data).toString('utf8')
      : (Buffer.isBuffer(data) ? data : Buffer.from(data)).toString('utf8');
    for (const raw of text.split(/\r?\n/)) {
      if (!raw.trim()) continue;
      const msg = parseLine(raw);
      if (!msg) {
        this.log.debug({ conn: conn.id, line: raw.slice(0, 200) }, 'unparseable line ignored');
        continue;
      }
      if (conn.halfOpen) {
        // Written into a dead connection: never delivered, never answered.
        const attempted = msg.command === 'PRIVMSG' ? (msg.params[1] ?? '') : undefined;
        this.record({
          kind: 'system',
          text: `half-open connection swallowed ${msg.command}`,
          ...(attempted !== undefined ? { attempted } : {}),
        });
        continue;
      }
      try {
        this.dispatch(conn, msg);
      } catch (err) {
        this.log.warn({ conn: conn.id, err, command: msg.command }, 'sandbox chat failed to handle a line');
      }
      if (conn.ws.readyState !== WebSocket.OPEN) break;
    }
    this.wake();
  }

  private dispatch(conn: Conn, msg: IrcLine): void {
    switch (msg.command) {
      case 'CAP':
        return this.onCap(conn, msg);
      case 'PASS':
        conn.pass = msg.params[0] ?? '';
        return;
      case 'NICK':
        return this.onNick(conn, msg.params[0] ?? '');
      case 'PING': {
        const token = msg.params[0] ?? 'tmi.twitch.tv';
        this.emit('client-ping', { id: conn.id, token });
        const reply = () => this.send(conn, `PONG :${token}`);
        if (this.heldPongs) this.heldPongs.push(reply);
        else reply();
        return;
      }
      case 'PONG': {
        const waiters = conn.pongWaiters.splice(0);
        for (const w of waiters) w();
        return;
      }
      case 'QUIT':
        conn.ws.close(1000, 'quit');
        return;
    }
    if (!conn.login) {
      this.log.debug({ conn: conn.id, command: msg.command }, 'command before login ignored');
      return;
    }
    switch (msg.command) {
      case 'JOIN':
        return this.onJoin(conn, msg.params[0] ?? '');
      case 'PART':
        return this.onPart(conn, msg.params[0] ?? '');
      case 'PRIVMSG':
        return this.onPrivmsg(conn, msg.params[0] ?? '', msg.params[1] ?? '', msg.tags);
      default:
        this.send(conn, `:tmi.twitch.tv 421 ${conn.login} ${msg.command} :Unknown command`);
    }
  }

  private onCap(conn: Conn, msg: IrcLine): void {
    const sub = (msg.params[0] ?? '').toUpperCase();
    if (sub === 'LS') return this.send(conn, `:tmi.twitch.tv CAP * LS :${KNOWN_CAPS.join(' ')}`);
    if (sub !== 'REQ') return;
    const wanted = (msg.params[1] ?? '').split(' ').filter(Boolean);
    if (wanted.every((c) => KNOWN_CAPS.includes(c))) {
      for (const c of wanted) conn.caps.add(c);
      this.send(conn, `:tmi.twitch.tv CAP * ACK :${wanted.join(' ')}`);
    } else {
      this.send(conn, `:tmi.twitch.tv CAP * NAK :${wanted.join(' ')}`);
    }
  }

  private onNick(conn: Conn, rawNick: string): void {
    if (conn.login) return;
    const nick = rawNick.toLowerCase();
    if (/^justinfan\d+$/.test(nick)) {
      conn.anonymous = true;
      conn.login = nick;
    } else if (conn.pass !== undefined && this.tokenMatches(conn.pass)) {
      conn.login = this.botLogin;
      if (nick !== this.botLogin)
        this.log.debug({ conn: conn.id, nick }, 'NICK differs from the token owner; using the token owner');
    } else {
      this.log.info({ conn: conn.id }, 'login rejected: wrong or missing token');
      this.record({ kind: 'system', text: `login rejected for ${nick || '(no nick)'}: wrong or missing token` });
      this.send(conn, ':tmi.twitch.tv NOTICE * :Login authentication failed');
      conn.ws.close(1000, 'authentication failed');
      return;
    }
    const l = conn.login;
    const lines = [
      `:tmi.twitch.tv 001 ${l} :Welcome, GLHF!`,
      `:tmi.twitch.tv 002 ${l} :Your host is tmi.twitch.tv`,
      `:tmi.twitch.tv 003 ${l} :This server is rather new`,
      `:tmi.twitch.tv 004 ${l} :-`,
      `:tmi.twitch.tv 375 ${l} :-`,
      `:tmi.twitch.tv 372 ${l} :You are in a maze of twisty passages, all alike.`,
      `:tmi.twitch.tv 376 ${l} :>`,
    ];
    if (!conn.anonymous && conn.caps.has('twitch.tv/commands')) {
      lines.push(
        `${formatTags({
          'badge-info': '',
          badges: '',
          color: '',
          'display-name': this.botLogin,
          'emote-sets': '0',
          'user-id': this.botUserId,
          'user-type': '',
        })}:tmi.twitch.tv GLOBALUSERSTATE`,
      );
    }
    this.send(conn, lines);
    const info: ConnectionInfo = { id: conn.id, login: l, anonymous: conn.anonymous };
    this.record({ kind: 'system', login: l, text: `${l} connected${conn.anonymous ? ' (anonymous)' : ''}` });
    this.emit('connection', info);
  }

  private tokenMatches(pass: string): boolean {
    return this.oauth.accepts(bareToken(pass));
  }

  private onJoin(conn: Conn, target: string): void {
    const l = conn.login!;
    for (const raw of target.split(',')) {
      const name = raw.trim().replace(/^#/, '').toLowerCase();
      if (!name) continue;
      if (name !== this.channel) {
        this.send(
          conn,
          `@msg-id=msg_room_not_found :tmi.twitch.tv NOTICE #${name} :${noticeText('msg_room_not_found', name)}`,
        );
        continue;
      }
      conn.joined.add(name);
      const lines = [`:${l}!${l}@${l}.tmi.twitch.tv JOIN #${name}`];
      if (conn.caps.has('twitch.tv/membership')) {
        lines.push(
          `:${l}.tmi.twitch.tv 353 ${l} = #${name} :${l}`,
          `:${l}.tmi.twitch.tv 366 ${l} #${name} :End of /NAMES list`,
        );
      }
      if (!conn.anonymous) lines.push(this.userstateLine());
      lines.push(
        `${formatTags({
          'emote-only': this.modes.emoteOnly ? 1 : 0,
          'followers-only': this.modes.followersOnly,
          r9k: this.modes.r9k ? 1 : 0,
          'room-id': this.channelId,
          slow: this.modes.slow,
          'subs-only': this.modes.subsOnly ? 1 : 0,
        })}:tmi.twitch.tv ROOMSTATE #${name}`,
      );
      this.send(conn, lines);
      this.record({ kind: 'system', login: l, text: `${l} joined #${name}` });
      this.emit('join', { id: conn.id, login: l, anonymous: conn.anonymous, channel: name });
    }
  }

  private onPart(conn: Conn, target: string): void {
    const l = conn.login!;
    for (const raw of target.split(',')) {
      const name = raw.trim().replace(/^#/, '').toLowerCase();
      if (!conn.joined.delete(name)) continue;
      this.send(conn, `:${l}!${l}@${l}.tmi.twitch.tv PART #${name}`);
      this.record({ kind: 'system', login: l, text: `${l} left #${name}` });
    }
  }

  private onPrivmsg(conn: Conn, target: string, body: string, tags: Record<string, string>): void {
    if (conn.anonymous) return;
    const name = target.replace(/^#/, '').toLowerCase();
    if (name !== this.channel) {
      this.send(
        conn,
        `@msg-id=msg_room_not_found :tmi.twitch.tv NOTICE #${name} :${noticeText('msg_room_not_found', name)}`,
      );
      return;
    }
    const l = conn.login!;
    const actionMatch = /^\u0001ACTION (.*)\u0001$/s.exec(body);
    const meMatch = actionMatch ? null : /^\/me (.*)$/s.exec(body);
    const action = Boolean(actionMatch || meMatch);
    const text = actionMatch?.[1] ?? meMatch?.[1] ?? body;
    const privileged = l === this.channel || this.botMod;
    const verdict =
      !action && /^[/.][A-Za-z]/.test(body)
        ? { ok: false as const, msgId: 'unrecognized_cmd', text: noticeText('unrecognized_cmd', name), silent: false }
        : this.policy.judge(
            this.clock.now(),
            name,
            { login: l, privileged, subscriber: this.botSubscriber, following: this.botFollowing },
            text,
            this.modes,
          );
    if (!verdict.ok) {
      this.record({
        kind: 'notice',
        login: l,
        userId: this.botUserId,
        text: verdict.text,
        msgId: verdict.msgId,
        attempted: text,
      });
      if (!verdict.silent) this.send(conn, `@msg-id=${verdict.msgId} :tmi.twitch.tv NOTICE #${name} :${verdict.text}`);
      return;
    }
    const messageId = randomUUID();
    const entry = this.record({
      kind: 'bot',
      login: l,
      userId: this.botUserId,
      displayName: this.botLogin,
      text,
      messageId,
      ...(action ? { action: true } : {}),
      ...(tags['reply-parent-msg-id'] ? { replyTo: tags['reply-parent-msg-id'] } : {}),
    });
    this.send(conn, this.userstateLine(messageId));
    const out = this.botPrivmsgLine(name, action ? `\u0001ACTION ${text}\u0001` : text, messageId);
    for (const other of this.inChannel()) if (other !== conn) this.send(other, out);
    this.emit('bot-message', entry);
    this.botChatLine(messageId, text);
  }
}
