/**
 * ChannelLogins: the giveaway domain's ChannelDirectory (Shared Chat counts name each channel by
 * its login where known). It knows this channel (from chat), the channels Shared Chat session data
 * named (`learn`: EventSub `channel.shared_chat.begin/update` participants), and asks the Twitch
 * API (`GET /users?id=..`) for the others when a client id is configured.
 *
 * Contract: `loginOf` never does I/O; `lookUp` starts at most one API call at a time for the ids
 * asked since the last one (batched on a microtask), never for a known id, and never throws (a
 * failed lookup is logged at debug and the id may be asked again after `retryAfterMs`); without an
 * API it does nothing (partner channels are then shown by id, unless Shared Chat data named them).
 * At most `maxEntries` channels are kept (least recently used go first). Does not decide anything
 * about entries (giveaway/shared-chat.ts does).
 */
import type { Logger } from '../logging/index.js';
import type { ChannelDirectory } from '../giveaway/ports.js';
import type { Clock } from '../shared/clock.js';
import { LruCache } from '../shared/lru-cache.js';

interface ThisChannel {
  readonly channelLogin: string;
  channelId(): string | undefined;
}

/** What the directory needs from the Twitch API (HelixClient is one). */
interface UserLookup {
  users(ids: readonly string[]): Promise<{ id: string; login: string }[]>;
}

export interface ChannelLoginsOptions {
  chat: ThisChannel;
  /** The Twitch API, when TWITCH_CLIENT_ID is set. */
  api?: UserLookup;
  clock: Clock;
  logger: Logger;
  /** Default 256. */
  maxEntries?: number;
  /** How long an id whose lookup failed (or found nobody) is not asked again (default 60 000 ms). */
  retryAfterMs?: number;
}

export class ChannelLogins implements ChannelDirectory {
  private readonly known: LruCache<string, string>;
  private readonly failedAt: LruCache<string, number>;
  private readonly wanted = new Set<string>();
  /** The lookup loop while it runs. */
  private running: Promise<void> | undefined;
  private readonly log: Logger;

  constructor(private readonly o: ChannelLoginsOptions) {
    const maxEntries = o.maxEntries ?? 256;
    this.known = new LruCache({ maxEntries });
    this.failedAt = new LruCache({ maxEntries });
    this.log = o.logger.child({ module: 'twitch.channels' });
  }

  loginOf(channelId: string): string | undefined {
    if (channelId !== '' && channelId === this.o.chat.channelId()) return this.o.chat.channelLogin;
    return this.known.get(channelId);
  }

  /** A channel's login from Shared Chat session data (or any other source Twitch gave). */
  learn(channelId: string, login: string): void {
    if (!channelId || !login) return;
    this.known.set(channelId, login.toLowerCase());
    this.failedAt.forget(channelId);
  }

  lookUp(channelId: string): void {
    if (!this.o.api || !channelId || this.loginOf(channelId) !== undefined) return;
    const failed = this.failedAt.get(channelId);
    if (failed !== undefined && this.o.clock.now() - failed < (this.o.retryAfterMs ?? 60_000)) return;
    this.wanted.add(channelId);
    // (a microtask later: the ids asked in the same turn go in one call)
    this.running ??= Promise.resolve().then(() => this.run());
  }

  /** Resolves when no lookup is running or waiting. */
  async idle(): Promise<void> {
    await this.running;
  }

  private async run(): Promise<void> {
    try {
      while (this.wanted.size > 0) {
        const ids = [...this.wanted].slice(0, 100);
        for (const id of ids) this.wanted.delete(id);
        try {
          const users = await this.o.api!.users(ids);
          for (const u of users) this.learn(u.id, u.login);
          for (const id of ids) if (this.known.get(id) === undefined) this.failedAt.set(id, this.o.clock.now());
        } catch (err) {
          for (const id of ids) this.failedAt.set(id, this.o.clock.now());
          this.log.debug(
            { err, channels: ids.length },
            'could not look Shared Chat partner channels up; they are shown by id for now',
          );
        }
      }
    } finally {
      this.running = undefined;
    }
  }
}
