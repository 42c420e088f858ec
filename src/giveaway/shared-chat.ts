/**
 * Shared Chat, decided on purpose: the one home for the rule about messages and events that come
 * from the other channels of a Twitch Shared Chat session ("partner channels"). Twitch delivers
 * their viewers' messages into this channel's chat too, marked with the channel they were typed in
 * (IRC `source-room-id`, EventSub `source_broadcaster_user_id`); the gifts are bought by this
 * shop's supporters for this stream.
 *
 * The rule:
 * - a message without a source channel, or whose source channel is this channel, is this
 *   channel's own (`own`); a message shown only in its source channel (`source-only`) is ignored
 *   wherever it comes from; any other source channel is a partner's (`partner`), and so is a
 *   source channel that cannot be compared because this channel's id is not known yet;
 * - partner viewers enter only when the streamer turns `sharedChat.partnerEntries` on (a joint
 *   giveaway); then the draw's record counts entrants per channel;
 * - partner messages never run commands here, except the two an entrant of a joint giveaway needs
 *   (`enter`, and `claim` for a partner winner asked to claim), and only with partner entries on;
 * - roles are this channel's only: what a partner channel's badges say (`source-badges`,
 *   EventSub `source_badges`) grants nothing here; the chat adapters read roles from this
 *   channel's tags alone, so a partner channel's broadcaster or moderator is a viewer here.
 * Used by the command registry's gate (chat lines over IRC and over EventSub alike) and by
 * Entries.enter (the engine's own check, for every way into a draw). Pure: no I/O, no state.
 */
import type { ChatMessage } from '../shared/chat.js';

/** Where a message or event comes from, as far as Shared Chat goes. */
export type ChatOrigin = 'own' | 'partner' | 'source-only';

/** The Shared Chat settings (`sharedChat` in the settings file). */
export interface SharedChatSettings {
  /** Partner channels' viewers may enter (a joint giveaway). Default false. */
  partnerEntries: boolean;
}

/** The commands a partner viewer may run when partner entries are on (canonical names). */
const PARTNER_COMMANDS: ReadonlySet<string> = new Set(['enter', 'claim']);

/**
 * The origin of `m`. `thisChannelId` is this channel's user id as chat knows it, used when the
 * message itself does not carry it. Reads `sourceChannelId` first: outside a Shared Chat session
 * that is the only field read.
 */
export function chatOrigin(
  m: Pick<ChatMessage, 'channelId' | 'sourceChannelId' | 'sourceOnly'>,
  thisChannelId?: string,
): ChatOrigin {
  const source = m.sourceChannelId;
  if (source === undefined || source === '') return 'own';
  if (m.sourceOnly === true) return 'source-only';
  const here = m.channelId ?? thisChannelId;
  return here !== undefined && here !== '' && source === here ? 'own' : 'partner';
}

/** Whether a message of `origin` may enter the open draws. */
export function mayEnter(origin: ChatOrigin, settings: SharedChatSettings): boolean {
  return origin === 'own' || (origin === 'partner' && settings.partnerEntries);
}

/** Whether a message of `origin` may run the command registered as `canonical`. */
export function mayRunCommand(origin: ChatOrigin, canonical: string, settings: SharedChatSettings): boolean {
  if (origin === 'own') return true;
  return origin === 'partner' && settings.partnerEntries && PARTNER_COMMANDS.has(canonical);
}

/**
 * The command registry's gate for the rule: a message may run the command registered as
 * `canonical` (see `mayRunCommand`). `thisChannelId` is read per message (chat learns it when it
 * joins).
 */
export function commandGate(
  settings: SharedChatSettings,
  thisChannelId: () => string | undefined,
): (msg: ChatMessage, canonical: string) => boolean {
  return (msg, canonical) => mayRunCommand(chatOrigin(msg, thisChannelId()), canonical, settings);
}
