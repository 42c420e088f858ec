/**
 * The streaming-status module: tells Fourthwall the channel is live (which opens gifting) or
 * offline, with the broadcaster's Twitch id, login and live thumbnail. Owns `!stream` semantics
 * and the optional auto start/end; does not decide when the stream is live by itself (no Helix).
 * Emits `live` each time Fourthwall was told the stream started: by `goLive`, or by the stream
 * watch (src/twitch/stream-watch.ts), which reports it with `startedElsewhere` (delivery reminders
 * listen).
 */
import { EventEmitter } from 'node:events';
import type { Logger } from '../logging/index.js';
import type { StreamingInfo } from '../giveaway/model.js';
import type { ChatPort, ShopPort } from '../giveaway/ports.js';
import { GiftdropError } from '../shared/errors.js';

/** Twitch's live preview image at 1280x720 for a channel login. */
export function thumbnailUrl(login: string): string {
  return `https://static-cdn.jtvnw.net/previews-ttv/live_user_${login.toLowerCase()}-1280x720.jpg`;
}

/** `live`: Fourthwall was told the stream started. */
interface StreamingEvents {
  live: [];
}

export class StreamingService extends EventEmitter<StreamingEvents> {
  private readonly log: Logger;
  /** What we last set successfully, so a clean shutdown only ends what we started. */
  private startedByUs = false;

  constructor(private readonly deps: { shop: ShopPort; chat: ChatPort; logger: Logger }) {
    super();
    this.log = deps.logger.child({ module: 'streaming' });
  }

  /** PUT /streaming/start with the channel's room id, login and thumbnail. */
  async goLive(): Promise<StreamingInfo> {
    const broadcasterId = this.deps.chat.channelId();
    if (!broadcasterId) throw new GiftdropError('CHANNEL_UNKNOWN', 'the channel id is not known yet (not joined)');
    const login = this.deps.chat.channelLogin;
    const info = await this.deps.shop.streamingStart({
      broadcasterId,
      broadcasterLogin: login,
      thumbnailUrl: thumbnailUrl(login),
    });
    this.startedByUs = true;
    this.log.info({ broadcasterId, login, status: info.status }, 'streaming started');
    this.emit('live');
    return info;
  }

  /** The stream watch told Fourthwall the stream started (it sets the status itself): `live` listeners hear it. */
  startedElsewhere(): void {
    this.emit('live');
  }

  async goOffline(): Promise<StreamingInfo> {
    const info = await this.deps.shop.streamingEnd();
    this.startedByUs = false;
    this.log.info({ status: info.status }, 'streaming ended');
    return info;
  }

  /**
   * The start-up with `streaming.autoStart` (when auto streaming does not own the status): goLive;
   * when that fails, a warning and one chat line asking the mods to type `!<command> live`.
   */
  async goLiveAtStart(command: string): Promise<void> {
    try {
      await this.goLive();
    } catch (err) {
      this.log.warn(
        { err },
        'could not set Fourthwall streaming started; asking the mods in chat to type !stream live',
      );
      this.deps.chat.say(
        `⚠️ Could not tell Fourthwall the stream is live: ${(err as Error).message}. Mods: try !${command} live`,
        { priority: 'high' },
      );
    }
  }

  status(): Promise<StreamingInfo> {
    return this.deps.shop.streamingStatus();
  }

  /** On clean shutdown with autoStart: end only what this process started. */
  async endIfStartedByUs(): Promise<void> {
    if (!this.startedByUs) return;
    try {
      await this.goOffline();
    } catch (err) {
      this.log.warn(
        { err },
        'could not set Fourthwall streaming ended on shutdown; it stays started until the next !stream offline (or the dashboard)',
      );
    }
  }
}
