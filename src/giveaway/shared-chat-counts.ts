/**
 * How many of a draw's entrants came from each channel, for a joint giveaway during Twitch Shared
 * Chat (shared-chat.ts: partner entries on). The record's `entrantsByChannel` is what the
 * history, its export and the verify page show.
 *
 * Contract: `recordChannelCounts` sets `entrantsByChannel` on the record when partner entries are
 * on or the draw has partner entrants (a draw restored after the setting was turned off keeps its
 * counts), and leaves the record alone otherwise; this channel comes first (even with 0), then the
 * partner channels, most entrants first (ties by id); each channel is named by its login where the
 * directory (or chat, for this channel) knows it. Counting reads only the partner entrants (a side
 * map of the entrant store), so it is cheap at any draw size. Pure apart from asking the directory
 * to look unknown channels up.
 */
import type { ChannelEntrants, DrawRecord } from './model.js';
import type { ChannelDirectory } from './ports.js';
import type { SharedChatSettings } from './shared-chat.js';

/** What the counts read from the draw's entrant store. */
interface CountedEntrants {
  readonly size: number;
  partnerCounts(): Map<string, number>;
}

/** This channel as chat knows it. */
interface ThisChannel {
  readonly channelLogin: string;
  channelId(): string | undefined;
}

/** The per-channel counts of `entrants` (see the module contract). */
export function channelCounts(
  entrants: CountedEntrants,
  here: ThisChannel,
  directory?: ChannelDirectory,
): ChannelEntrants[] {
  const partners = entrants.partnerCounts();
  let fromPartners = 0;
  for (const n of partners.values()) fromPartners += n;
  const hereId = here.channelId();
  const own: ChannelEntrants = {
    ...(hereId ? { channelId: hereId } : { channelId: '' }),
    login: here.channelLogin,
    entrants: entrants.size - fromPartners,
    own: true,
  };
  const rest = [...partners]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([channelId, n]): ChannelEntrants => {
      const login = directory?.loginOf(channelId);
      if (login === undefined) directory?.lookUp(channelId);
      return { channelId, ...(login !== undefined ? { login } : {}), entrants: n };
    });
  return [own, ...rest];
}

/** Brings `record.entrantsByChannel` up to date (see the module contract). */
export function recordChannelCounts(
  record: DrawRecord,
  entrants: CountedEntrants,
  here: ThisChannel,
  settings: SharedChatSettings,
  directory?: ChannelDirectory,
): void {
  if (!settings.partnerEntries && record.entrantsByChannel === undefined && entrants.partnerCounts().size === 0) return;
  record.entrantsByChannel = channelCounts(entrants, here, directory);
}

/** `giftdrop_demo 3, partner_one 6` (a channel without a known login by its id). */
export function channelCountsText(counts: readonly ChannelEntrants[]): string {
  return counts.map((c) => `${c.login ?? c.channelId} ${c.entrants}`).join(', ');
}
