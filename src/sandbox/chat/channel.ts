/**
 * The sandbox chat channel's state and its low-level helpers, shared by the IRC command handling
 * (irc-session.ts), the test-facing control API (control.ts) and the HTTP side (server.ts): the
 * channel and bot identity, the bot's token (SandboxOAuth), room modes, the open connections,
 * the transcript, and the lines the server writes about the bot (USERSTATE, its PRIVMSG echo).
 *
 * Contract: the constructor validates the options (GiftdropError SANDBOX_CHAT_BAD_INPUT) and
 * opens nothing; `send` writes nothing to a closed or half-open socket and strips tags for a
 * client without the tags capability; `record` stamps an entry on the injected clock, appends it
 * to the transcript and emits 'transcript' (and 'notice' for notices); `wake` re-checks every
 * pending `waitFor`. Nothing here reads process.env.
 */
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { WebSocket } from 'ws';
import { systemClock, type Clock } from '../../shared/clock.js';
import { GiftdropError } from '../../shared/errors.js';
import type { Logger } from '../../logging/index.js';
import { silentLogger } from '../../logging/index.js';
import { formatTags, stripTags } from './irc.js';
import { SandboxOAuth } from './oauth.js';
import { SandboxViewerLogin } from './viewer-login.js';
import { SandboxAppTokens } from './app-tokens.js';
import { SandboxDeviceLogin } from './device-code.js';
import { OutboundPolicy, type RoomModes } from './limits.js';
import { makeViewer, normaliseLogin, userIdFor, type ChannelContext, type SimViewer } from './viewers.js';
import type { ChatServerOptions, RoomStateChange, TranscriptEntry } from './types.js';

/** One client socket and what it negotiated. */
export interface Conn {
  id: number;
  ws: WebSocket;
  caps: Set<string>;
  pass?: string;
  login?: string;
  anonymous: boolean;
  joined: Set<string>;
  pongWaiters: (() => void)[];
  halfOpen?: boolean;
}

const TAGS_CAP = 'twitch.tv/tags';

/** A PASS value without its `oauth:` prefix. */
export function bareToken(pass: string): string {
  return pass.replace(/^oauth:/i, '');
}

/** The channel state and helpers; see the module header. */
export abstract class ChatChannel extends EventEmitter {
  readonly host: string;
  readonly channel: string;
  readonly channelId: string;
  readonly botLogin: string;
  readonly botUserId: string;
  readonly broadcaster: SimViewer;
  readonly transcript: TranscriptEntry[] = [];
  /** PONG replies held back by `holdPongs(true)` (undefined: answered at once). */
  protected heldPongs: (() => void)[] | undefined;

  protected readonly clock: Clock;
  protected readonly ctx: ChannelContext;
  protected readonly log: Logger;
  protected readonly policy: OutboundPolicy;
  protected readonly modes: RoomModes = { slow: 0, followersOnly: -1, subsOnly: false, emoteOnly: false, r9k: false };
  protected readonly oauth: SandboxOAuth;
  /** `http://host:port` of the server, once it listens (the device login's verification page). */
  protected httpBase = '';
  protected readonly conns = new Set<Conn>();
  protected readonly chatted = new Set<string>();
  protected readonly waiters = new Set<() => void>();
  protected botMod: boolean;
  protected readonly botSubscriber: boolean;
  protected readonly botFollowing: boolean;
  /** The broadcaster authorized the application with `channel:bot` (Send Chat Message's Chat Bot badge). */
  channelBotGranted: boolean;

  constructor(opts: ChatServerOptions) {
    super();
    this.host = opts.host ?? '127.0.0.1';
    this.channel = normaliseLogin(opts.channel ?? 'giftdrop_demo', 'channel');
    this.channelId = opts.channelId ?? userIdFor(this.channel);
    if (!/^\d+$/.test(this.channelId) || this.channelId === '0' || this.channelId === '1') {
      throw new GiftdropError(
        'SANDBOX_CHAT_BAD_INPUT',
        `channelId must be a numeric string other than 0/1 (got ${JSON.stringify(this.channelId)})`,
      );
    }
    this.botLogin = normaliseLogin(opts.botLogin ?? 'giftdrop_bot', 'botLogin');
    this.botUserId = this.botLogin === this.channel ? this.channelId : userIdFor(this.botLogin);
    const token = opts.token !== undefined ? bareToken(opts.token) : randomBytes(15).toString('hex');
    if (!token || /\s/.test(token)) {
      throw new GiftdropError('SANDBOX_CHAT_BAD_INPUT', 'token must be a non-empty string without spaces');
    }
    this.botMod = opts.botIsMod ?? false;
    this.botSubscriber = opts.botIsSubscriber ?? false;
    this.botFollowing = opts.botFollowing ?? false;
    this.channelBotGranted = opts.channelBotGranted ?? false;
    this.clock = opts.clock ?? systemClock;
    const clock = this.clock;
    this.oauth = new SandboxOAuth({
      token,
      login: this.botLogin,
      userId: this.botUserId,
      clock,
      ...(opts.refreshToken !== undefined ? { refreshToken: opts.refreshToken } : {}),
      ...(opts.clientId !== undefined ? { clientId: opts.clientId } : {}),
      ...(opts.clientSecret !== undefined ? { clientSecret: opts.clientSecret } : {}),
      ...(opts.scopes !== undefined ? { scopes: opts.scopes } : {}),
      ...(opts.tokenLifetimeSeconds !== undefined ? { tokenLifetimeSeconds: opts.tokenLifetimeSeconds } : {}),
    });
    this.oauth.viewerLogin = new SandboxViewerLogin({
      clientId: () => this.oauth.appClientId,
      clientSecret: () => this.oauth.clientSecret,
      userFor: (login) => {
        const l = normaliseLogin(login);
        return { id: l === this.channel ? this.channelId : userIdFor(l), login: l };
      },
      suggestions: () =>
        [...new Set(this.transcript.filter((e) => e.kind === 'viewer' && e.login).map((e) => e.login!))].reverse(),
      clock,
    });
    this.oauth.appTokens = new SandboxAppTokens({
      clientId: () => this.oauth.clientId,
      clientSecret: () => this.oauth.clientSecret,
      clock,
    });
    this.oauth.deviceLogin = new SandboxDeviceLogin({
      clock,
      publicClientId: opts.publicClientId ?? 'giftdroppublicsandbox',
      intervalSeconds: opts.deviceIntervalSeconds ?? 5,
      codeLifetimeSeconds: opts.deviceCodeLifetimeSeconds ?? 1800,
      tokenLifetimeSeconds: opts.tokenLifetimeSeconds ?? 14_400,
      baseUrl: () => this.httpBase,
      userFor: (login) => {
        const l = normaliseLogin(login);
        return {
          id: l === this.channel ? this.channelId : l === this.botLogin ? this.botUserId : userIdFor(l),
          login: l,
        };
      },
      knownLogins: () => [this.botLogin, this.channel],
      botLogin: this.botLogin,
      installBotGrant: (grant) => {
        this.oauth.install(grant);
        this.record({
          kind: 'system',
          login: this.botLogin,
          text: `${this.botLogin} logged in by device code (public client ${grant.clientId})`,
        });
      },
    });
    this.ctx = { channel: this.channel, channelId: this.channelId, now: () => clock.now() };
    this.log = (opts.logger ?? silentLogger()).child({ module: 'sandbox-chat' });
    this.policy = new OutboundPolicy(opts.limits);
    this.applyModes(opts.roomState ?? {});
    this.broadcaster = makeViewer(this.channel, { broadcaster: true }, this.channelId);
  }

  /** Emits the bot's delivered line as a 'chat-line' (what EventSub readers get of it). */
  protected botChatLine(messageId: string, text: string, chatBotBadge = false): void {
    this.emit('chat-line', {
      messageId,
      userId: this.botUserId,
      login: this.botLogin,
      displayName: this.botLogin,
      roles: {
        broadcaster: this.botLogin === this.channel,
        moderator: this.botMod,
        vip: false,
        subscriber: this.botSubscriber,
        subMonths: this.botSubscriber ? 1 : 0,
        firstMessage: false,
      },
      text,
      ...(chatBotBadge ? { chatBotBadge: true } : {}),
    });
  }

  protected botBadges(): string {
    const badges: string[] = [];
    if (this.botLogin === this.channel) badges.push('broadcaster/1');
    if (this.botMod) badges.push('moderator/1');
    return badges.join(',');
  }

  protected userstateLine(id?: string): string {
    const tags: Record<string, string | number> = {
      'badge-info': '',
      badges: this.botBadges(),
      color: '',
      'display-name': this.botLogin,
      'emote-sets': '0',
    };
    if (id) tags.id = id;
    tags.mod = this.botMod ? 1 : 0;
    tags.subscriber = this.botSubscriber ? 1 : 0;
    tags['user-type'] = this.botMod ? 'mod' : '';
    return `${formatTags(tags)}:tmi.twitch.tv USERSTATE #${this.channel}`;
  }

  protected botPrivmsgLine(channel: string, body: string, id: string): string {
    const l = this.botLogin;
    const tags = formatTags({
      'badge-info': '',
      badges: this.botBadges(),
      color: '',
      'display-name': l,
      emotes: '',
      'first-msg': 0,
      flags: '',
      id,
      mod: this.botMod ? 1 : 0,
      'returning-chatter': 0,
      'room-id': this.channelId,
      subscriber: this.botSubscriber ? 1 : 0,
      'tmi-sent-ts': this.clock.now(),
      turbo: 0,
      'user-id': this.botUserId,
      'user-type': this.botMod ? 'mod' : '',
    });
    return `${tags}:${l}!${l}@${l}.tmi.twitch.tv PRIVMSG #${channel} :${body}`;
  }

  protected applyModes(s: RoomStateChange): void {
    const int = (v: number, min: number, what: string): number => {
      if (!Number.isInteger(v) || v < min) {
        throw new GiftdropError('SANDBOX_CHAT_BAD_INPUT', `${what} must be an integer >= ${min} (got ${v})`);
      }
      return v;
    };
    const next = { ...this.modes };
    if (s.slow !== undefined) next.slow = int(s.slow, 0, 'slow');
    if (s.followersOnly !== undefined) next.followersOnly = int(s.followersOnly, -1, 'followersOnly');
    if (s.subsOnly !== undefined) next.subsOnly = Boolean(s.subsOnly);
    if (s.emoteOnly !== undefined) next.emoteOnly = Boolean(s.emoteOnly);
    if (s.r9k !== undefined) next.r9k = Boolean(s.r9k);
    Object.assign(this.modes, next);
  }

  protected *inChannel(): Generator<Conn> {
    for (const conn of this.conns) {
      if (conn.joined.has(this.channel) && conn.ws.readyState === WebSocket.OPEN) yield conn;
    }
  }

  protected send(conn: Conn, lines: string | string[]): void {
    if (conn.ws.readyState !== WebSocket.OPEN || conn.halfOpen) return;
    const list = typeof lines === 'string' ? [lines] : lines;
    const out = conn.caps.has(TAGS_CAP) ? list : list.map(stripTags);
    conn.ws.send(`${out.join('\r\n')}\r\n`);
  }

  protected record(e: Omit<TranscriptEntry, 'at'>): TranscriptEntry {
    const entry: TranscriptEntry = { at: this.clock.now(), ...e };
    this.transcript.push(entry);
    this.emit('transcript', entry);
    if (entry.kind === 'notice') this.emit('notice', entry);
    return entry;
  }

  protected wake(): void {
    for (const check of [...this.waiters]) check();
  }
}
