/**
 * Maps the validated JSON settings file (config/) onto the giveaway engine's settings and the
 * command registry's names. Pure: no I/O.
 */
import type { CommandNames } from '../commands/wire.js';
import type { FileSettings } from '../config/index.js';
import { mergeGiveawaySettings, type GiveawaySettings } from '../giveaway/settings.js';
import { defaultGiveawaySettings } from '../giveaway/settings.js';
import { GiftdropError } from '../shared/errors.js';

export function commandNamesFrom(file: FileSettings): CommandNames {
  const c = file.commands;
  return {
    prefix: c.prefix,
    names: {
      enter: c.names.enter ?? 'enter',
      giveaway: c.names.giveaway ?? 'giveaway',
      claim: c.names.claim ?? 'claim',
      stream: c.names.stream ?? 'stream',
    },
    aliases: c.aliases,
    statusCooldownMs: c.statusCooldownSeconds * 1000,
  };
}

export function giveawaySettingsFrom(file: FileSettings): GiveawaySettings {
  const names = commandNamesFrom(file);
  const unknown = Object.keys(file.messages).filter((k) => !(k in defaultGiveawaySettings.messages));
  if (unknown.length)
    throw new GiftdropError(
      'CONFIG_INVALID',
      `Invalid configuration:\n  - messages: unknown message name(s) ${unknown.join(', ')}; known: ${Object.keys(defaultGiveawaySettings.messages).join(', ')}`,
    );
  return mergeGiveawaySettings({
    giftFlow: file.gifting.flow,
    purchaseEntrySeconds: file.gifting.entrySeconds,
    commands: { enter: `${names.prefix}${names.names.enter}`, claim: `${names.prefix}${names.names.claim}` },
    links: {
      publicInChat: file.links.publicInChat,
      defaultWinners: file.linkGiveaway.defaultWinners,
      defaultSeconds: file.linkGiveaway.defaultSeconds,
      maxWinners: file.linkGiveaway.maxWinners,
      maxSeconds: file.linkGiveaway.maxSeconds,
    },
    claim: file.claim,
    eligibility: file.eligibility,
    luck: { subscriberMultiplier: file.luck.subscriberMultiplier, tiers: file.luck.tiers },
    reminders: file.reminders,
    sharedChat: file.sharedChat,
    messages: file.messages,
    ...ticketSettings(file),
  });
}

/** The tickets section: channel points and bits, each only when it is on. */
function ticketSettings(file: FileSettings): Pick<GiveawaySettings, 'tickets'> {
  const cp = file.channelPoints;
  const bits = file.bits;
  if (!cp.enabled && !bits.enabled) return {};
  return {
    tickets: {
      ...(cp.enabled
        ? { channelPoints: { ticketsPerRedemption: cp.ticketsPerRedemption, maxPerViewer: cp.maxPerViewer } }
        : {}),
      ...(bits.enabled ? { bits: { bitsPerTicket: bits.bitsPerTicket, maxTickets: bits.maxTickets } } : {}),
    },
  };
}
