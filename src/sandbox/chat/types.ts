/**
 * The sandbox chat server's public types: its options, the transcript entries, the events and
 * the `ChatServer` interface tests and the sandbox demo program against.
 *
 * Contract: types only (no runtime code); server.ts re-exports every name here, so importers
 * keep using `./server.js` or the folder's index.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OAuthEvent, SandboxExtraLogins, TokenUser } from './oauth.js';
import type { SandboxViewerLogin } from './viewer-login.js';
import type { SandboxDeviceLogin } from './device-code.js';
import type { Clock } from '../../shared/clock.js';
import type { ChatRoles } from '../../shared/chat.js';
import type { Logger } from '../../logging/index.js';
import type { ChatLimits, RoomModes } from './limits.js';
import type { InjectExtra, SimViewer, SimViewerOptions } from './viewers.js';
import type { SharedChatControl, SharedChatEvent } from './shared-chat.js';
import type { SandboxAppTokens } from './app-tokens.js';
import type { ApiMessageInput, ApiMessageResult } from './api-messages.js';

/** Options of {@link startChatServer}. */
export interface ChatServerOptions {
  /** Default 0 (the OS picks). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Channel login without `#`. Default `giftdrop_demo`. */
  channel?: string;
  /** Channel user id (`room-id`). Default derived from the channel login. */
  channelId?: string;
  /** The login the token belongs to. Default `giftdrop_bot`. */
  botLogin?: string;
  /** The bot's OAuth token (with or without `oauth:`). Random when absent. */
  token?: string;
  /** The refresh token `/oauth2/token` accepts (rotated on each refresh). Random when absent. */
  refreshToken?: string;
  /** OAuth client id / secret the token endpoint expects. Default `giftdropsandboxclient` / random. */
  clientId?: string;
  clientSecret?: string;
  /** The public application's client id for the device code flow (no secret). Default `giftdroppublicsandbox`. */
  publicClientId?: string;
  /** Seconds between device-code polls (`interval`; Twitch: 5). Default 5. */
  deviceIntervalSeconds?: number;
  /** Seconds a device code can be authorized (Twitch: 1800). Default 1800. */
  deviceCodeLifetimeSeconds?: number;
  /** Scopes `/oauth2/validate` reports. Default chat:read chat:edit. */
  scopes?: string[];
  /** Lifetime of an access token on the server's clock (default 14 400 s, like Twitch's). */
  tokenLifetimeSeconds?: number;
  /** The bot starts as a moderator of the channel. Default false. */
  botIsMod?: boolean;
  /** The bot subscribes to the channel (subs-only mode lets it talk). Default false. */
  botIsSubscriber?: boolean;
  /** The bot follows the channel (followers-only mode lets it talk). Default false. */
  botFollowing?: boolean;
  /** Room modes at start. Default all off. */
  roomState?: RoomStateChange;
  /** The broadcaster authorized the application with `channel:bot` (the Chat Bot badge without mod status). Default false. */
  channelBotGranted?: boolean;
  clock?: Clock;
  limits?: ChatLimits;
  logger?: Logger;
}

/** A change of room modes; absent keys keep their value. */
export interface RoomStateChange {
  /** Seconds between messages for non-mods; 0 = off. */
  slow?: number;
  /** Minutes of following required; -1 = off, 0 = any follower. */
  followersOnly?: number;
  subsOnly?: boolean;
  emoteOnly?: boolean;
  r9k?: boolean;
}

/** One line of what happened in the channel, in order. */
export interface TranscriptEntry {
  /** Clock time (ms since the epoch). */
  at: number;
  kind: 'viewer' | 'bot' | 'notice' | 'system';
  login?: string;
  userId?: string;
  displayName?: string;
  /** The message text (viewer/bot, without the ACTION wrapper), the NOTICE text, or a system note. */
  text: string;
  /** NOTICE msg-id, on notice entries (`msg_ratelimit`, `msg_duplicate`, `msg_too_long`, ...). */
  msgId?: string;
  /** The PRIVMSG `id` tag, on viewer entries and delivered bot messages. */
  messageId?: string;
  /** A `/me` line. */
  action?: boolean;
  /** Bits cheered (viewer entries). */
  bits?: number;
  /** On notice entries: the bot's text that was not delivered. */
  attempted?: string;
  /** On bot entries sent as a reply: the `reply-parent-msg-id` tag. */
  replyTo?: string;
  /** On viewer entries of a Shared Chat partner channel's viewer: the channel (user id) it was typed in. */
  sourceChannelId?: string;
  /** On such entries: Twitch's `source-only=1` (shown only in its source channel). */
  sourceOnly?: boolean;
  /** On bot and notice entries of a message sent with Helix Send Chat Message (api-messages.ts). */
  via?: 'api';
  /** On bot entries sent through the API: shown with the Chat Bot badge (app token, user:bot, channel:bot or mod). */
  chatBotBadge?: boolean;
  /** On bot entries sent through the API: its `for_source_only` (app tokens only). */
  forSourceOnly?: boolean;
}

/**
 * One chat line as a reader of the channel's chat sees it (the `chat-line` event): what EventSub's
 * `channel.chat.message` carries (eventsub-events.ts maps it). `roles` are the chatter's standing
 * in this channel; `source` is set for a Shared Chat partner viewer's line (their channel and
 * their roles there) and for this channel's own lines during a session (`channelId` = this one).
 */
export interface ChatLineEvent {
  messageId: string;
  userId: string;
  login: string;
  displayName: string;
  roles: ChatRoles;
  text: string;
  bits?: number;
  /** The bot's line sent with an app token that carries the Chat Bot badge. */
  chatBotBadge?: boolean;
  source?: { channelId: string; channelLogin: string; messageId: string; roles: ChatRoles; only: boolean };
}

/** Payload of the `connection` and `disconnect` events. */
export interface ConnectionInfo {
  /** Connection number, unique per server. */
  id: number;
  /** Authenticated login (undefined when the socket closed before logging in). */
  login?: string;
  anonymous: boolean;
}

interface ChatServerEvents {
  'bot-message': [entry: TranscriptEntry];
  notice: [entry: TranscriptEntry];
  connection: [info: ConnectionInfo];
  disconnect: [info: ConnectionInfo];
  transcript: [entry: TranscriptEntry];
  join: [info: ConnectionInfo & { channel: string }];
  oauth: [event: OAuthEvent];
  /** A client sent PING (`token`: its parameter); answered with `PONG :<token>` unless held. */
  'client-ping': [info: { id: number; token: string }];
  /** A Shared Chat session began, changed its channels, or ended (shared-chat.ts). */
  'shared-chat': [event: SharedChatEvent];
  /** Every chat line delivered in the channel: viewers', Shared Chat partners', the bot's (IRC or API). */
  'chat-line': [line: ChatLineEvent];
}

/** The running sandbox chat server. */
export interface ChatServer {
  /** `ws://127.0.0.1:PORT` */
  readonly url: string;
  readonly port: number;
  readonly host: string;
  /** The bot's current access token (without `oauth:`); changes when the bot refreshes it. */
  readonly token: string;
  /** The current refresh token, client id and secret of `/oauth2/token`. */
  readonly refreshToken: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** `http://host:port/oauth2`: this server's Twitch OAuth stand-in (validate, token). */
  readonly authUrl: string;
  /** The current access token expires now: validate answers 401 and the next chat login is refused. */
  expireToken(): void;
  /**
   * `login` disconnects the application (Twitch settings > Connections): its access and refresh
   * tokens stop working (the bot's chat login included). Returns the grants ended.
   */
  revokeLogin(login: string): number;
  /** The device code flow (public application): its client id, stats, and `answer` for tests without a browser. */
  readonly deviceLogin: SandboxDeviceLogin;
  /** This server's token check (current token, client id, scopes), for the Helix sandbox. */
  readonly tokens: {
    accepts(token: string): boolean;
    readonly clientId: string;
    readonly scopes: readonly string[];
    /** The bot account's user id. */
    readonly userId: string;
    /** The account a user token from the viewer login or a device login other than the bot's belongs to (a device login's: with its scopes and client id). */
    userOf(token: string): TokenUser | undefined;
    /** The viewer login (authorization code flow) behind `/oauth2/authorize`. */
    readonly viewerLogin: SandboxViewerLogin | undefined;
    /** The application's app tokens (client credentials grant, app-tokens.ts). */
    readonly appTokens: SandboxAppTokens | undefined;
    /** Other accounts' logins `/oauth2` also answers for (the broadcaster's: sandbox/helix/accounts.ts). */
    accounts: SandboxExtraLogins | undefined;
  };
  /**
   * A message the bot sends with Helix Send Chat Message (the Helix sandbox calls it once the token
   * checks passed): judged like an IRC line, delivered or dropped with Twitch's drop reason.
   */
  postApiMessage(input: ApiMessageInput): ApiMessageResult;
  /** The next API message is dropped with `code` whatever the rules say (e.g. AutoMod's `msg_rejected`). */
  dropNextApiMessage(code: string): void;
  /** Whether the bot is a moderator of the channel now. */
  isBotMod(): boolean;
  /** Whether the broadcaster authorized the application with `channel:bot`. */
  channelBotGranted: boolean;
  /** Serves more HTTP paths on this port (the Helix sandbox under /helix); `handler` returns false for others. */
  mount(handler: (req: IncomingMessage, res: ServerResponse) => boolean): void;
  /** Every open socket goes half-open: it swallows what clients write and answers nothing until dropped. */
  halfOpen(): void;
  /** While true, clients' PINGs are not answered; false sends the held PONGs (a slow server). */
  holdPongs(hold: boolean): void;
  readonly channel: string;
  readonly channelId: string;
  readonly botLogin: string;
  readonly botUserId: string;
  /** A simulated chatter; the same login always has the same user id. */
  viewer(login: string, opts?: SimViewerOptions): SimViewer;
  /** The channel owner (user id = channelId). */
  readonly broadcaster: SimViewer;
  /**
   * Delivers a viewer's message to every client in the channel and records it (during a Shared
   * Chat session with this channel's own Shared Chat tags).
   */
  inject(viewer: SimViewer, text: string, extra?: InjectExtra): void;
  /** Twitch Shared Chat: partner channels and their viewers' messages in this room (shared-chat.ts). */
  readonly sharedChat: SharedChatControl;
  /**
   * Fast bulk path: pre-formatted IRC lines (no line endings), batched many per frame, sent to
   * every client in the channel, or with `only` to the one that is `joined()[only]` (in join
   * order: a benchmark feeds two clients in turn). Not recorded in the transcript.
   */
  injectRaw(lines: readonly string[], options?: { only?: number }): void;
  /** The IRC line `inject` would send (without `\r\n`). */
  formatPrivmsg(viewer: SimViewer, text: string, extra?: InjectExtra): string;
  readonly transcript: TranscriptEntry[];
  /** Texts the bot got delivered, in order. */
  botMessages(): string[];
  /** NOTICEs the bot earned (including the silent `msg_too_long`), in order. */
  notices(): { msgId: string; text: string }[];
  /** Resolves once `predicate()` is true; rejects with a clear error after `timeoutMs` (real time, default 5000). */
  waitFor(predicate: () => boolean, timeoutMs?: number, what?: string): Promise<void>;
  on<E extends keyof ChatServerEvents>(event: E, fn: (...args: ChatServerEvents[E]) => void): unknown;
  off<E extends keyof ChatServerEvents>(event: E, fn: (...args: ChatServerEvents[E]) => void): unknown;
  once<E extends keyof ChatServerEvents>(event: E, fn: (...args: ChatServerEvents[E]) => void): unknown;
  /** Changes the bot's mod status and tells its clients (USERSTATE with mod=1/0 and badges). */
  setBotMod(mod: boolean): void;
  /** Changes room modes and sends one ROOMSTATE per changed mode. */
  setRoomState(s: RoomStateChange): void;
  readonly roomState: Readonly<RoomModes>;
  /** Sends RECONNECT to every client, then closes them. */
  sendReconnect(): void;
  /** Terminates every socket abruptly. */
  dropConnections(): void;
  /** PINGs every logged-in client; resolves with how many answered PONG, rejects on timeout. */
  ping(timeoutMs?: number): Promise<number>;
  /** Open sockets. */
  connections(): number;
  /** Logins currently joined to the channel (one entry per connection). */
  joined(): string[];
  close(): Promise<void>;
}
