/**
 * zod schemas of what the storage adapters write to disk (history records, journal lines, frozen
 * entrant files, processed event ids). Parsing on read is how a damaged file is detected and
 * named. Unknown fields are kept so newer versions can add fields without older ones losing them.
 */
import { z } from 'zod';

const rolesSchema = z.looseObject({
  broadcaster: z.boolean(),
  moderator: z.boolean(),
  vip: z.boolean(),
  subscriber: z.boolean(),
  subMonths: z.number(),
  firstMessage: z.boolean(),
});

export const entrantSchema = z.looseObject({
  userId: z.string().min(1),
  login: z.string(),
  displayName: z.string(),
  weight: z.number().int().positive(),
  roles: rolesSchema,
  enteredAt: z.number(),
  /** Shared Chat: the partner channel a partner viewer entered from (absent for this channel's viewers). */
  partnerChannelId: z.string().min(1).optional(),
});

const winnerSchema = z.looseObject({
  userId: z.string(),
  login: z.string(),
  displayName: z.string(),
  giftId: z.string().optional(),
  redeemUrl: z.string().optional(),
  claimed: z.boolean().optional(),
  pick: z.number().int(),
  /** Not stored here (delivery.json); dropped on save. */
  delivery: z.unknown().optional(),
  accountCheck: z.looseObject({ result: z.enum(['checked', 'unchecked']), at: z.string() }).optional(),
});

const setAsideSchema = z.looseObject({
  pick: z.number().int().nonnegative(),
  userId: z.string(),
  login: z.string(),
  reason: z.enum(['not-follower', 'follow-age', 'account-age', 'unchecked']),
  at: z.string(),
});

const rerollSchema = z.looseObject({
  at: z.string(),
  replacedUserId: z.string(),
  replacedLogin: z.string(),
  reason: z.enum(['command', 'unclaimed']),
  byUserId: z.string().optional(),
  newUserId: z.string().optional(),
  pick: z.number().int().optional(),
});

/** A stored draw record: DrawRecord without `frozenEntrants` (kept in their own file). */
export const storedRecordSchema = z.looseObject({
  id: z.string().min(1),
  kind: z.enum(['gift-draw', 'gift-purchase', 'link-giveaway']),
  status: z.enum(['open', 'drawing', 'finished', 'cancelled', 'failed']),
  source: z.looseObject({
    drawId: z.string().optional(),
    giveawayId: z.string().optional(),
    packageId: z.string().optional(),
    eventId: z.string().optional(),
    giftPurchaseId: z.string().optional(),
  }),
  offer: z.looseObject({ id: z.string(), name: z.string() }),
  gifts: z.number(),
  giftIds: z.array(z.string()).optional(),
  supporter: z.looseObject({ username: z.string().optional(), message: z.string().optional() }).optional(),
  openedAt: z.string(),
  closesAt: z.string(),
  closedAt: z.string().optional(),
  entrants: z.number(),
  entrantsByChannel: z
    .array(
      z.looseObject({
        channelId: z.string(),
        login: z.string().optional(),
        entrants: z.number().int().nonnegative(),
        own: z.boolean().optional(),
      }),
    )
    .optional(),
  winners: z.array(winnerSchema),
  fairness: z.looseObject({
    commitment: z.string(),
    seed: z.string().optional(),
    entrantsDigest: z.string().optional(),
    algorithm: z.string(),
  }),
  rules: z.record(z.string(), z.unknown()).optional(),
  rerolls: z.array(rerollSchema).optional(),
  setAside: z.array(setAsideSchema).optional(),
  claim: z.looseObject({ deadline: z.string(), rerollsUsed: z.number() }).optional(),
  failure: z.looseObject({ reason: z.string(), at: z.string() }).optional(),
  finishInFlight: z.boolean().optional(),
  startedBy: z.looseObject({ userId: z.string(), login: z.string() }).optional(),
  pendingSeed: z.string().optional(),
  /** Which mode wrote it; absent in records from before modes were recorded (read as live). */
  mode: z.enum(['live', 'sandbox']).optional(),
});

export const HISTORY_VERSION = 1;

export const historySchema = z.object({
  version: z.literal(HISTORY_VERSION),
  draws: z.array(storedRecordSchema),
});

export type HistoryData = { version: typeof HISTORY_VERSION; draws: z.output<typeof storedRecordSchema>[] };

/** `<dataDir>/draws/<id>.entrants.json`, version 1 (read only now; entrants-file.ts writes version 2): the canonical frozen list as [userId, login, weight] rows. */
export const entrantsFileSchema = z.object({
  version: z.literal(1),
  drawId: z.string(),
  entrants: z.array(z.tuple([z.string(), z.string(), z.number().int().positive()])),
});
