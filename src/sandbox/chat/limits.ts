/**
 * What Twitch enforces on a message the bot sends, as a pure policy over an injected clock:
 * the per-account sliding window (20 / 30 s, or 100 / 30 s with mod/broadcaster status), the
 * per-channel pacing for non-mods (1 s, or ROOMSTATE slow), the 30 s duplicate rule for
 * non-mods, subs-only / followers-only / emote-only modes for the unprivileged, and length.
 *
 * Contract: `judge` records every attempt in the window, delivered or not (Twitch counts
 * dropped messages too), and returns either `{ ok: true }` or the NOTICE Twitch would send.
 * Deliberately not here: sockets, the transcript, flood disconnects and 30-minute lock-outs.
 */

/** Configurable limits (defaults are Twitch's). */
export interface ChatLimits {
  /** Messages per window when not mod/broadcaster. Default 20. */
  messages?: number;
  /** Messages per window when mod/broadcaster. Default 100. */
  modMessages?: number;
  /** Window length in ms. Default 30 000. */
  windowMs?: number;
  /** Same text as the last delivered one within this many ms is a duplicate. Default 30 000. */
  duplicateWindowMs?: number;
  /** Minimum gap between messages in a channel when not mod. Default 1 000. */
  minIntervalMs?: number;
  /** Maximum length in characters (code points). Default 500. */
  maxLength?: number;
}

/** Chat modes of a room, as ROOMSTATE carries them. */
export interface RoomModes {
  /** Seconds between messages, 0 = off. */
  slow: number;
  /** Minutes of following required, -1 = off. */
  followersOnly: number;
  subsOnly: boolean;
  emoteOnly: boolean;
  r9k: boolean;
}

/** Who is sending, as far as the rules care. */
export interface SenderStatus {
  login: string;
  /** Moderator or broadcaster in this channel. */
  privileged: boolean;
  subscriber: boolean;
  following: boolean;
}

export type Verdict = { ok: true } | { ok: false; msgId: string; text: string; silent: boolean };

interface ChannelMemory {
  lastAt: number;
  lastText: string;
}

const DEFAULT_LIMITS: Required<ChatLimits> = {
  messages: 20,
  modMessages: 100,
  windowMs: 30_000,
  duplicateWindowMs: 30_000,
  minIntervalMs: 1_000,
  maxLength: 500,
};

/** Twitch's NOTICE texts, by msg-id (`n`: seconds to wait, or the length limit). */
export function noticeText(msgId: string, channel: string, n = 1): string {
  switch (msgId) {
    case 'msg_ratelimit':
      return 'Your message was not sent because you are sending messages too quickly.';
    case 'msg_duplicate':
      return 'Your message was not sent because it is identical to the previous one you sent, less than 30 seconds ago.';
    case 'msg_slowmode':
      return `This room is in slow mode and you are sending messages too quickly. You will be able to talk again in ${n} seconds.`;
    case 'msg_subsonly':
      return `This room is in subscribers-only mode. To talk, purchase a channel subscription at https://www.twitch.tv/products/${channel}/ticket?ref=subscriber_only_mode_chat.`;
    case 'msg_followersonly':
      return `This room is in followers-only mode. Follow ${channel} to join the community!`;
    case 'msg_emoteonly':
      return 'This room is in emote-only mode.';
    case 'msg_too_long':
      return `Your message was not sent because it is longer than ${n} characters (Twitch drops it silently).`;
    case 'unrecognized_cmd':
      return 'Unrecognized command. Chat commands over IRC were removed by Twitch.';
    case 'msg_room_not_found':
      return 'This channel does not exist or has been suspended.';
    default:
      return msgId;
  }
}

/** The outbound rules for one server: per-account windows and per-channel memory. */
export class OutboundPolicy {
  readonly limits: Required<ChatLimits>;
  private readonly attempts = new Map<string, number[]>();
  private readonly channels = new Map<string, ChannelMemory>();

  constructor(limits: ChatLimits = {}) {
    const merged = { ...DEFAULT_LIMITS };
    for (const key of Object.keys(DEFAULT_LIMITS) as (keyof ChatLimits)[]) {
      const v = limits[key];
      if (v === undefined) continue;
      if (!Number.isFinite(v) || v < 0) {
        throw new RangeError(`limits.${key} must be a non-negative number (got ${v})`);
      }
      merged[key] = v;
    }
    this.limits = merged;
  }

  /** Decides whether a message from `sender` to `channel` is delivered, and remembers it. */
  judge(now: number, channel: string, sender: SenderStatus, text: string, modes: RoomModes): Verdict {
    const L = this.limits;
    const times = this.attemptsOf(sender.login, now);
    const sentBefore = times.length;
    times.push(now);
    if (text.length > L.maxLength && codePoints(text) > L.maxLength) {
      return drop('msg_too_long', channel, true, L.maxLength);
    }
    if (sentBefore >= (sender.privileged ? L.modMessages : L.messages)) return drop('msg_ratelimit', channel);
    const key = `${sender.login}#${channel}`;
    const memory = this.channels.get(key);
    if (!sender.privileged) {
      if (modes.subsOnly && !sender.subscriber) return drop('msg_subsonly', channel);
      if (modes.followersOnly >= 0 && !sender.following) return drop('msg_followersonly', channel);
      if (modes.emoteOnly) return drop('msg_emoteonly', channel);
      if (memory) {
        const since = now - memory.lastAt;
        const slowMs = modes.slow * 1000;
        if (slowMs > 0 && since < slowMs) {
          return drop('msg_slowmode', channel, false, Math.ceil((slowMs - since) / 1000));
        }
        if (since < L.minIntervalMs) return drop('msg_ratelimit', channel);
        if (since < L.duplicateWindowMs && memory.lastText === text.trim()) return drop('msg_duplicate', channel);
      }
    }
    this.channels.set(key, { lastAt: now, lastText: text.trim() });
    return { ok: true };
  }

  /** Attempts by `login` still inside the window at `now`. */
  inWindow(login: string, now: number): number {
    return this.attemptsOf(login, now).length;
  }

  private attemptsOf(login: string, now: number): number[] {
    let times = this.attempts.get(login);
    if (!times) {
      times = [];
      this.attempts.set(login, times);
    }
    const cutoff = now - this.limits.windowMs;
    let stale = 0;
    while (stale < times.length && times[stale]! <= cutoff) stale++;
    if (stale) times.splice(0, stale);
    return times;
  }
}

function drop(msgId: string, channel: string, silent = false, n = 1): Verdict {
  return { ok: false, msgId, text: noticeText(msgId, channel, n), silent };
}

function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}
