/**
 * Twitch Shared Chat in the sandbox chat server: the channel shares its chat with partner
 * channels, and their viewers' messages arrive in this channel's room as Twitch delivers them.
 *
 * What Twitch sends (checked against public captures of shared-chat PRIVMSGs): a partner viewer's
 * message keeps `room-id` = this channel and gets its own `id`; `source-room-id` names the channel
 * it was typed in, `source-id` its id there, `source-badges` / `source-badge-info` the chatter's
 * badges there, `source-only` whether it is shown only there; `badges`, `badge-info`, `mod` and
 * `subscriber` are the chatter's standing in THIS channel (a partner channel's moderator is a
 * plain viewer here unless they moderate here too). While a session runs, this channel's own
 * messages carry `source-room-id` = `room-id`, `source-id` = `id` and their own badges as
 * `source-badges`.
 *
 * Contract: `begin` starts a session (or adds partners to the running one) and `end` ends it;
 * both are recorded in the transcript (kind 'system') and emitted as 'shared-chat' events (begin,
 * update, end: what EventSub's `channel.shared_chat.*` carry), so the local Helix API can know the
 * partner channels' logins. Partner channel ids are the stable ids of their logins. `say` delivers
 * a partner viewer's message (transcript kind 'viewer' with `sourceChannelId`); it needs a running
 * session with that partner. Nothing here reads the bot's side.
 */
import { randomUUID } from 'node:crypto';
import type { ChatRoles } from '../../shared/chat.js';
import { GiftdropError } from '../../shared/errors.js';
import {
  badgeInfoTag,
  badgesTag,
  formatViewerPrivmsg,
  makeViewer,
  normaliseLogin,
  userIdFor,
  type ChannelContext,
  type InjectExtra,
  type SimViewer,
  type SimViewerOptions,
  type SourceTags,
} from './viewers.js';

/** A channel taking part in the Shared Chat session. */
export interface SharedChannel {
  readonly id: string;
  readonly login: string;
}

/** A viewer of a partner channel: `roles` is their standing in this channel, `rolesThere` in theirs. */
export interface PartnerViewer extends SimViewer {
  readonly partner: SharedChannel;
  readonly rolesThere: ChatRoles;
}

/** What a 'shared-chat' event carries (EventSub `channel.shared_chat.begin/update/end`). */
export interface SharedChatEvent {
  kind: 'begin' | 'update' | 'end';
  sessionId: string;
  /** The channel that started the session (this channel in the sandbox). */
  host: SharedChannel;
  /** Every channel in the session, this one first (empty on `end`). */
  participants: SharedChannel[];
}

/** The test-facing control of Shared Chat (`ChatServer.sharedChat`). */
export interface SharedChatControl {
  /** True while a session runs. */
  readonly active: boolean;
  readonly sessionId: string | undefined;
  /** The partner channels of the running session (this channel not included). */
  partners(): SharedChannel[];
  /** Starts a session with these partner channels (logins), or adds them to the running one. */
  begin(partnerLogins: readonly string[]): SharedChannel[];
  /** Ends the running session (nothing when none runs). */
  end(): void;
  /**
   * A viewer of partner channel `partnerLogin`: `there` are their roles in that channel (what
   * `source-badges` says), `here` their roles in this one (default none).
   */
  viewer(
    partnerLogin: string,
    login: string,
    opts?: { there?: SimViewerOptions; here?: SimViewerOptions },
  ): PartnerViewer;
  /** Delivers a partner viewer's message into this channel's room (`sourceOnly`: Twitch's `source-only=1`). */
  say(viewer: PartnerViewer, text: string, extra?: InjectExtra & { sourceOnly?: boolean }): void;
}

/** A transcript entry the session records (a subset of types.ts TranscriptEntry). */
interface SessionEntry {
  kind: 'viewer' | 'system';
  text: string;
  login?: string;
  userId?: string;
  displayName?: string;
  messageId?: string;
  sourceChannelId?: string;
  sourceOnly?: boolean;
  action?: boolean;
}

/** What the session needs from the chat server. */
export interface SharedChatHost {
  readonly ctx: ChannelContext;
  /** Sends a line to every client joined to the channel. */
  deliver(line: string): void;
  record(entry: SessionEntry): void;
  /** The line as EventSub readers get it (the chat server's 'chat-line' event). */
  line(line: SessionLine): void;
  announce(event: SharedChatEvent): void;
}

/** A partner viewer's line as readers get it (types.ts ChatLineEvent). */
interface SessionLine {
  messageId: string;
  userId: string;
  login: string;
  displayName: string;
  roles: ChatRoles;
  text: string;
  bits?: number;
  source: { channelId: string; channelLogin: string; messageId: string; roles: ChatRoles; only: boolean };
}

export class SharedChatSession implements SharedChatControl {
  private session: { id: string; partners: Map<string, SharedChannel> } | undefined;

  constructor(private readonly host: SharedChatHost) {}

  get active(): boolean {
    return this.session !== undefined;
  }

  get sessionId(): string | undefined {
    return this.session?.id;
  }

  partners(): SharedChannel[] {
    return [...(this.session?.partners.values() ?? [])];
  }

  begin(partnerLogins: readonly string[]): SharedChannel[] {
    const here = this.here();
    const added = partnerLogins.map((l) => {
      const login = normaliseLogin(l, 'partner channel');
      if (login === here.login)
        throw new GiftdropError(
          'SANDBOX_CHAT_BAD_INPUT',
          'a Shared Chat partner must be another channel than this one',
        );
      return { id: userIdFor(login), login };
    });
    const kind = this.session ? 'update' : 'begin';
    const session = (this.session ??= { id: randomUUID(), partners: new Map() });
    for (const p of added) session.partners.set(p.id, p);
    this.host.record({
      kind: 'system',
      text: `shared chat ${kind}: ${this.partners()
        .map((p) => p.login)
        .join(', ')}`,
    });
    this.host.announce({ kind, sessionId: session.id, host: here, participants: [here, ...this.partners()] });
    return this.partners();
  }

  end(): void {
    const session = this.session;
    if (!session) return;
    this.session = undefined;
    this.host.record({ kind: 'system', text: 'shared chat ended' });
    this.host.announce({ kind: 'end', sessionId: session.id, host: this.here(), participants: [] });
  }

  viewer(
    partnerLogin: string,
    login: string,
    opts: { there?: SimViewerOptions; here?: SimViewerOptions } = {},
  ): PartnerViewer {
    const partnerId = userIdFor(normaliseLogin(partnerLogin, 'partner channel'));
    const partner = this.session?.partners.get(partnerId);
    if (!partner)
      throw new GiftdropError(
        'SANDBOX_CHAT_BAD_INPUT',
        `${partnerLogin} is not in a running Shared Chat session (call begin first)`,
      );
    const l = normaliseLogin(login);
    // The partner channel's own broadcaster has the channel's id as user id.
    const userId = l === partner.login ? partner.id : undefined;
    const thereOpts = l === partner.login ? { ...opts.there, broadcaster: true } : (opts.there ?? {});
    const here = makeViewer(
      l,
      { ...opts.here, ...(opts.there?.displayName ? { displayName: opts.there.displayName } : {}) },
      userId,
    );
    const there = makeViewer(l, thereOpts, userId);
    return { ...here, partner, rolesThere: there.roles };
  }

  say(viewer: PartnerViewer, text: string, extra: InjectExtra & { sourceOnly?: boolean } = {}): void {
    if (!this.session?.partners.has(viewer.partner.id)) {
      throw new GiftdropError(
        'SANDBOX_CHAT_BAD_INPUT',
        `${viewer.partner.login} is not in a running Shared Chat session`,
      );
    }
    const messageId = randomUUID();
    const source: SourceTags = {
      roomId: viewer.partner.id,
      id: randomUUID(),
      badges: badgesTag(viewer.rolesThere),
      badgeInfo: badgeInfoTag(viewer.rolesThere),
      only: extra.sourceOnly ?? false,
    };
    const line = formatViewerPrivmsg(this.host.ctx, viewer, text, extra, messageId, source);
    this.host.record({
      kind: 'viewer',
      login: viewer.login,
      userId: viewer.userId,
      displayName: viewer.displayName,
      text,
      messageId,
      sourceChannelId: viewer.partner.id,
      ...(extra.sourceOnly ? { sourceOnly: true } : {}),
      ...(extra.action ? { action: true } : {}),
    });
    this.host.deliver(line);
    this.host.line({
      messageId,
      userId: viewer.userId,
      login: viewer.login,
      displayName: viewer.displayName,
      roles: viewer.roles,
      text,
      ...(extra.bits ? { bits: Math.floor(extra.bits) } : {}),
      source: {
        channelId: viewer.partner.id,
        channelLogin: viewer.partner.login,
        messageId: source.id,
        roles: viewer.rolesThere,
        only: source.only,
      },
    });
  }

  /** The Shared Chat tags of this channel's own message `messageId` while a session runs, else undefined. */
  ownSource(viewer: SimViewer, messageId: string): SourceTags | undefined {
    if (!this.session) return undefined;
    return {
      roomId: this.host.ctx.channelId,
      id: messageId,
      badges: badgesTag(viewer.roles),
      badgeInfo: badgeInfoTag(viewer.roles),
      only: false,
    };
  }

  private here(): SharedChannel {
    return { id: this.host.ctx.channelId, login: this.host.ctx.channel };
  }
}
