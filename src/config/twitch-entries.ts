/**
 * The settings-file sections of the entries that come from Twitch beyond chat (part of the one
 * config module; ./schema.ts includes them): `channelPoints` (the bot's own custom reward, each
 * redemption an entry or its points refunded) and `bits` (extra tickets for bits used during an
 * open draw). Pure data and defaults, no I/O. Both need TWITCH_CLIENT_ID and the broadcaster's
 * token (TWITCH_BROADCASTER_TOKEN, or the setup page's broadcaster login).
 *
 * Twitch's own limits are the bounds: a reward title of at most 45 characters, a prompt of at most
 * 200, a cost of at least 1 channel point.
 */
import { z } from 'zod';

export const channelPointsSchema = z
  .strictObject({
    /** Create the reward and take redemptions as entries (Affiliate or Partner channels only). */
    enabled: z.boolean().default(false),
    /** The reward's title on Twitch (unique among the channel's rewards). */
    title: z.string().trim().min(1).max(45).default('Enter the giveaway'),
    /** Its cost in channel points. */
    cost: z.number().int().min(1).max(1_000_000_000).default(1000),
    /** What viewers read under the title. */
    prompt: z
      .string()
      .trim()
      .max(200)
      .default('Enters you in the giveaway that is open now. Refunded when none is open.'),
    /** Tickets each redemption adds to the viewer's entry. */
    ticketsPerRedemption: z.number().int().min(1).max(1000).default(1),
    /** Redemptions a viewer may make per draw; the next ones are refunded. */
    maxPerViewer: z.number().int().min(1).max(1000).default(1),
  })
  .prefault({});

export const bitsSchema = z
  .strictObject({
    /** Bits used during an open draw add tickets (needs the broadcaster's token with bits:read). */
    enabled: z.boolean().default(false),
    /** Bits for one ticket. */
    bitsPerTicket: z.number().int().min(1).max(1_000_000).default(100),
    /** Tickets from bits a viewer may get per draw. */
    maxTickets: z.number().int().min(1).max(1000).default(10),
  })
  .prefault({});
