/**
 * Message routing for the Twitch chat client: turns what tmi.js reports for the bot's channel
 * into calls of narrow handlers, and reads the tags of ROOMSTATE and USERSTATE (for client.ts).
 *
 * Contract:
 * - only events of `channelKey` are routed; every other channel's are ignored;
 * - chat, /me and cheer lines that are not the bot's own echo are parsed (parse.ts) and handed
 *   to `message`, in order, as tmi.js reports them (while their tags are fresh in the CPU's
 *   caches); a line that does not parse is logged (warn, with the login) and dropped, and one
 *   whose handling throws is logged (error); the bot keeps running either way;
 * - a NOTICE reaches `notice` with its msg-id ('' when it has none) and text ('' when absent);
 *   an AutoMod hold reaches `automod`; MODE +o/-o for the bot reaches `mod`;
 * - the receive path does one channel compare, one TagsMessage (identity and text read now, the
 *   other fields when first used) and one call per line; the clock is read once per socket read
 *   (the lines tmi.js reports from one read, synchronously, share that `receivedAt`: the reading
 *   is dropped by a microtask queued with it, which runs once they are all handled).
 * Connection state, the outbox and the token are not here (client.ts owns them).
 */
import type tmi from 'tmi.js';
import type { ChatMessage } from '../shared/chat.js';
import type { Clock } from '../shared/clock.js';
import type { RoomState } from './client-types.js';
import { TagsMessage, type TmiTags } from './parse.js';
import { seconds } from './tmi-glue.js';

/** Where the client wants the channel's events. */
export interface ChannelHandlers {
  message(message: ChatMessage): void;
  roomState(tags: TmiTags): void;
  notice(msgId: string, text: string): void;
  automod(msgId: string, text: string): void;
  mod(mod: boolean): void;
}

export interface ChannelSource {
  client: tmi.Client;
  /** `#channel`, lower case. */
  channelKey: string;
  botLogin: string;
  log: RouteLog;
  /** Stamps each line's `receivedAt`. */
  clock: Pick<Clock, 'now'>;
}

/** Where routing reports a rejected or failed line (a pino logger is one). */
interface RouteLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Subscribes the handlers to the channel's tmi.js events (see the module header). */
export function routeChannelEvents(source: ChannelSource, handlers: ChannelHandlers): void {
  const { client, channelKey, botLogin, log, clock } = source;
  const channel = channelKey.slice(1);
  /** When the current socket read was handled (-1: none yet; see the module header). */
  let readAt = -1;
  const readDone = (): void => {
    readAt = -1;
  };
  const receive = (tags: TmiTags, text: string): void => {
    try {
      if (readAt < 0) {
        readAt = clock.now();
        queueMicrotask(readDone);
      }
      const message = TagsMessage.of(channel, tags, text, false, readAt);
      if (typeof message !== 'string') handlers.message(message);
      else
        log.warn(
          { reason: message, login: typeof tags.username === 'string' ? tags.username : undefined },
          'chat line rejected',
        );
    } catch (err) {
      log.error({ err }, 'chat line handling failed');
    }
  };
  client.on('message', (ch, tags, text, self) => {
    if (self || ch !== channelKey) return;
    receive(tags, text);
  });
  client.on('cheer', (ch, tags, text) => {
    if (ch === channelKey) receive(tags, text);
  });
  client.on('roomstate', (channel, tags) => {
    if (channel !== channelKey) return;
    handlers.roomState(tags as TmiTags);
  });
  client.on('notice', (channel, rawId: unknown, rawText: unknown) => {
    if (channel !== channelKey) return;
    // tmi.js passes null for a NOTICE without a msg-id tag.
    const msgId = typeof rawId === 'string' ? rawId : '';
    const text = typeof rawText === 'string' ? rawText : '';
    handlers.notice(msgId, text);
  });
  client.on('automod', (channel, msgId, text) => {
    if (channel !== channelKey) return;
    handlers.automod(msgId, text);
  });
  client.on('mod', (channel, username) => {
    if (channel === channelKey && username === botLogin) handlers.mod(true);
  });
  client.on('unmod', (channel, username) => {
    if (channel === channelKey && username === botLogin) handlers.mod(false);
  });
}

/**
 * Applies a ROOMSTATE's tags (as tmi.js maps them) to `room`; keys absent from the tags keep
 * their value. Returns the `room-id` when the tags carry a non-empty one.
 */
export function applyRoomState(room: RoomState, tags: TmiTags): string | undefined {
  const roomId = tags['room-id'];
  if ('slow' in tags) room.slow = seconds(tags.slow);
  if ('followers-only' in tags) {
    const f = tags['followers-only'];
    room.followersOnly = f === false ? 0 : f === true ? 1 : Number(f) >= 0 ? Number(f) : -1;
  }
  if ('subs-only' in tags) room.subsOnly = tags['subs-only'] === true;
  if ('emote-only' in tags) room.emoteOnly = tags['emote-only'] === true;
  return typeof roomId === 'string' && roomId !== '' ? roomId : undefined;
}

/** A USERSTATE's raw IRC tags (mod=1, badges=moderator/1,subscriber/12) name a moderator or the broadcaster. */
export function userStateIsMod(tags: Record<string, unknown>): boolean {
  const badges = typeof tags.badges === 'string' ? tags.badges : '';
  return tags.mod === '1' || tags.mod === true || /(^|,)(broadcaster|moderator)\//.test(badges);
}
