/**
 * The zod schemas of giftdrop's configuration: environment variables (secrets, endpoints) and
 * the optional JSON settings file (commands, messages, timings, eligibility). Pure data: the
 * only reader of `process.env` is ./index.ts.
 */
import { z } from 'zod';
import { defaultGiveawaySettings as D } from '../giveaway/settings.js';
import { alertsSchema, merchSchema, merchTrainSchema, promoSchema } from './shop.js';
import { RATE_LIMIT_SPEC } from './rate-limit-spec.js';
import { bitsSchema, channelPointsSchema } from './twitch-entries.js';

const optionalString = z
  .string()
  .trim()
  .transform((s) => (s === '' ? undefined : s))
  .optional();

/** A TCP port, 0-65535 (0: chosen by the OS). */
const portNumber = z
  .string()
  .trim()
  .optional()
  .transform((s) => (s === undefined || s === '' ? undefined : s))
  .pipe(
    z
      .string()
      .regex(/^\d+$/, 'must be a port number (0-65535)')
      .transform(Number)
      .refine((n) => n <= 65535, 'must be a port number (0-65535)')
      .optional(),
  );

const url = (what: string) =>
  z
    .string()
    .trim()
    .refine((s) => {
      try {
        new URL(s);
        return true;
      } catch {
        return false;
      }
    }, `must be a valid URL (${what})`);

export const envSchema = z.object({
  GIFTDROP_MODE: z
    .string()
    .trim()
    .toLowerCase()
    .transform((s) => (s === '' ? undefined : s))
    .pipe(z.enum(['sandbox', 'live'], { error: 'must be "sandbox" or "live"' }).optional())
    .optional(),
  GIFTDROP_CONFIG: optionalString,
  DATA_DIR: optionalString,
  HTTP_HOST: optionalString,
  HTTP_PORT: portNumber,
  LOG_LEVEL: z
    .string()
    .trim()
    .toLowerCase()
    .optional()
    .transform((s) => (s === undefined || s === '' ? undefined : s))
    .pipe(
      z
        .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
          error: 'must be one of fatal, error, warn, info, debug, trace, silent',
        })
        .optional(),
    ),
  /** Also append the JSON log lines to this file (they always go to stderr). */
  LOG_FILE: optionalString,
  TWITCH_CHANNEL: optionalString,
  TWITCH_USERNAME: optionalString,
  TWITCH_TOKEN: optionalString,
  TWITCH_IRC_URL: optionalString.pipe(url('ws:// or wss://').optional()),
  TWITCH_AUTH_URL: optionalString.pipe(url('Twitch OAuth root, e.g. https://id.twitch.tv/oauth2').optional()),
  TWITCH_API_URL: optionalString.pipe(url('Twitch Helix root, e.g. https://api.twitch.tv/helix').optional()),
  TWITCH_REFRESH_TOKEN: optionalString,
  TWITCH_CLIENT_ID: optionalString,
  TWITCH_CLIENT_SECRET: optionalString,
  /** The broadcaster's user token (channel points, bits) and its refresh token; the setup page's login when unset. */
  TWITCH_BROADCASTER_TOKEN: optionalString,
  TWITCH_BROADCASTER_REFRESH_TOKEN: optionalString,
  TWITCH_EVENTSUB_URL: optionalString.pipe(url('EventSub WebSocket, e.g. wss://eventsub.wss.twitch.tv/ws').optional()),
  TWITCH_OUTBOX_MAX: optionalString.pipe(
    z
      .string()
      .regex(/^\d+$/, 'must be a whole number of chat lines (e.g. 100)')
      .transform(Number)
      .refine((n) => n >= 1, 'must be at least 1')
      .optional(),
  ),
  FOURTHWALL_API_URL: optionalString.pipe(url('http(s) API root').optional()),
  FOURTHWALL_USERNAME: optionalString,
  FOURTHWALL_PASSWORD: optionalString,
  FOURTHWALL_ACCESS_TOKEN: optionalString,
  FOURTHWALL_REFRESH_TOKEN: optionalString,
  FOURTHWALL_CLIENT_ID: optionalString,
  FOURTHWALL_CLIENT_SECRET: optionalString,
  FOURTHWALL_TOKEN_URL: optionalString.pipe(url('OAuth token endpoint').optional()),
  FOURTHWALL_WEBHOOK_SECRET: optionalString,
  FOURTHWALL_APP_HMAC_KEY: optionalString,
  FOURTHWALL_RATE_LIMIT: optionalString.pipe(
    z.string().regex(RATE_LIMIT_SPEC, 'must look like 100/10s (requests per window)').optional(),
  ),
  FOURTHWALL_SHOP_URL: optionalString.pipe(url("the shop's public site").optional()),
  FOURTHWALL_EVENT_POLL_SECONDS: optionalString.pipe(
    z
      .string()
      .regex(/^\s*\d+(\.\d+)?\s*$/, 'must be a number of seconds (0 turns the catch-up poll off)')
      .transform(Number)
      .refine((n) => n <= 3600, 'must be at most 3600 seconds')
      .optional(),
  ),
  GIFTDROP_BEACON_URL: optionalString.pipe(url('a drand HTTP relay, e.g. https://api.drand.sh').optional()),
  GIFTDROP_PUBLIC_URL: optionalString.pipe(
    url('the public HTTPS address of your tunnel, e.g. https://abc.example.com').optional(),
  ),
  GIFTDROP_DASHBOARD_TOKEN: optionalString.pipe(
    z
      .string()
      .regex(/^[\x21-\x7e]{16,200}$/, 'must be 16 to 200 printable characters without spaces')
      .optional(),
  ),
  GIFTDROP_LOCAL_HOSTS: optionalString.pipe(
    z
      .string()
      .regex(
        /^\s*[A-Za-z0-9.[\]:-]+(\s*,\s*[A-Za-z0-9.[\]:-]+)*\s*$/,
        'must be host names separated by commas, e.g. streampc.lan,192.168.1.20',
      )
      .optional(),
  ),
  GIFTDROP_LOCAL_PORT: portNumber,
  GIFTDROP_LOCAL_BIND: optionalString,
  GIFTDROP_TRUST_PROXY: optionalString.pipe(
    z
      .string()
      .toLowerCase()
      .regex(
        /^(none|cloudflare|ngrok|last-hop|[1-5])$/,
        'must be none, cloudflare, ngrok, last-hop or a number of proxies 1-5 (what is in front of HTTP_PORT)',
      )
      .optional(),
  ),
  GIFTDROP_OVERLAY_KEY: optionalString.pipe(
    z
      .string()
      .regex(/^[A-Za-z0-9_-]{16,200}$/, 'must be 16 to 200 letters, digits, "-" or "_" (it goes in the overlay URL)')
      .optional(),
  ),
});

const commandName = z
  .string()
  .trim()
  .regex(/^[^\s!]{1,32}$/u, 'must be one word without "!" (max 32 chars)');

/** The JSON settings file. Strict: an unknown key is reported (catches typos). */
export const fileSchema = z.strictObject({
  $schema: z.string().optional(),
  commands: z
    .strictObject({
      prefix: z.string().trim().min(1).max(3).default('!'),
      names: z
        .strictObject({
          enter: commandName.optional(),
          giveaway: commandName.optional(),
          claim: commandName.optional(),
          stream: commandName.optional(),
        })
        .prefault({}),
      aliases: z
        .strictObject({
          enter: z.array(commandName).optional(),
          giveaway: z.array(commandName).optional(),
          claim: z.array(commandName).optional(),
          stream: z.array(commandName).optional(),
        })
        .prefault({}),
      statusCooldownSeconds: z.number().min(0).max(3600).default(15),
    })
    .prefault({}),
  gifting: z
    .strictObject({
      flow: z.enum(['draw', 'purchase']).default(D.giftFlow),
      entrySeconds: z.number().int().min(20).max(180).default(D.purchaseEntrySeconds),
    })
    .prefault({}),
  links: z.strictObject({ publicInChat: z.boolean().default(D.links.publicInChat) }).prefault({}),
  linkGiveaway: z
    .strictObject({
      defaultWinners: z.number().int().min(1).max(100).default(D.links.defaultWinners),
      defaultSeconds: z.number().int().min(5).max(3600).default(D.links.defaultSeconds),
      maxSeconds: z.number().int().min(5).max(86400).default(D.links.maxSeconds),
      maxWinners: z.number().int().min(1).max(1000).default(D.links.maxWinners),
    })
    .prefault({}),
  claim: z
    .strictObject({
      seconds: z.number().int().min(0).max(3600).default(D.claim.seconds),
      maxRerolls: z.number().int().min(0).max(100).default(D.claim.maxRerolls),
    })
    .prefault({}),
  eligibility: z
    .strictObject({
      excludeModerators: z.boolean().default(D.eligibility.excludeModerators),
      subscribersOnly: z.boolean().default(D.eligibility.subscribersOnly),
      minSubMonths: z.number().int().min(0).max(1000).default(D.eligibility.minSubMonths),
      excludeLogins: z.array(z.string().trim().toLowerCase()).default(() => [...D.eligibility.excludeLogins]),
      winnerCooldownHours: z
        .number()
        .min(0)
        .max(24 * 365)
        .default(D.eligibility.winnerCooldownHours),
      excludeFirstTimeChatters: z.boolean().default(D.eligibility.excludeFirstTimeChatters),
      /** Checked with the Twitch API for the picks (needs TWITCH_CLIENT_ID; src/giveaway/account-rules.ts). */
      followersOnly: z.boolean().default(false),
      minFollowDays: z.number().min(0).max(3650).default(0),
      minAccountDays: z.number().min(0).max(3650).default(0),
      /** Picks the Twitch API could not check: let them in or set them aside. */
      uncheckable: z.enum(['allow', 'exclude']).default('allow'),
      /** Look entrants up in the background during the entry window while Helix budget is spare (src/twitch/warm-up.ts). */
      warmUp: z.boolean().default(false),
    })
    .prefault({}),
  luck: z
    .strictObject({
      subscriberMultiplier: z.number().int().min(1).max(100).default(D.luck.subscriberMultiplier),
      tiers: z
        .array(z.strictObject({ minMonths: z.number().int().min(0), weight: z.number().int().min(1).max(1000) }))
        .default(() => []),
    })
    .prefault({}),
  reminders: z
    .strictObject({
      halfTime: z.boolean().default(D.reminders.halfTime),
      nearEndSeconds: z.number().int().min(0).max(600).default(D.reminders.nearEndSeconds),
      ackEverySeconds: z.number().int().min(0).max(600).default(D.reminders.ackEverySeconds),
    })
    .prefault({}),
  streaming: z
    .strictObject({
      autoStart: z.boolean().default(false),
      /** Follow the broadcaster's real stream with the Twitch API (needs TWITCH_CLIENT_ID; src/twitch/stream-watch.ts). */
      auto: z.boolean().default(false),
      pollSeconds: z.number().min(5).max(600).default(30),
      offlineGraceSeconds: z.number().min(0).max(3600).default(120),
    })
    .prefault({}),
  /** The OBS overlay (GET /overlay) and the winners' chat catch (src/web). */
  overlay: z
    .strictObject({
      /** A small idle badge, e.g. "giveaways by giftdrop"; none when unset. */
      badge: z.string().trim().max(60).optional(),
      /** How long the winners stay on the overlay after a draw. */
      winnersSeconds: z.number().int().min(5).max(3600).default(60),
      /** At most this many results (winners, cancelled) beside the open draws, newest first. */
      maxResults: z.number().int().min(0).max(10).default(3),
      /** Show what the winners type after the draw on the overlay too (always on the dashboard). */
      winnerChat: z.boolean().default(false),
      /** How long winners' lines are caught when no claim window is configured. */
      winnerChatSeconds: z.number().int().min(10).max(3600).default(60),
      /** How long the newest result is shown big, in its card, before it joins the results band. */
      revealSeconds: z.number().int().min(3).max(600).default(12),
      /** Supporter alerts on the overlay (the same safe view as chat's), and how long each stays. */
      alerts: z.boolean().default(true),
      alertSeconds: z.number().int().min(3).max(60).default(8),
      /** The overlay's wording, key by key over the English defaults (src/web/operator/overlay-view.ts OVERLAY_TEXT). */
      text: z.record(z.string(), z.string().max(120)).default(() => ({})),
    })
    .prefault({}),
  /** Getting the prize to the winner (src/delivery): whispers, the redemption poll, reminders. */
  delivery: z
    .strictObject({
      /** Whisper each winner the claim page (or the link) when TWITCH_TOKEN has user:manage:whispers. */
      whispers: z.boolean().default(true),
      /** Ask Fourthwall whether waiting prizes were redeemed every N seconds (0: only the ORDER_PLACED webhook). */
      pollSeconds: z.number().int().min(0).max(86_400).default(60),
      reminders: z
        .strictObject({
          whisper: z.boolean().default(true),
          chat: z.boolean().default(true),
          atStreamStart: z.boolean().default(true),
          afterHours: z
            .number()
            .min(0)
            .max(24 * 30)
            .default(0),
        })
        .prefault({}),
    })
    .prefault({}),
  /** Public randomness beacon for the draws (see src/fairness/procedure.ts, version 2). */
  fairness: z
    .strictObject({
      beacon: z.enum(['drand', 'off']).default('drand'),
      beaconWaitSeconds: z.number().int().min(1).max(120).default(10),
    })
    .prefault({}),
  /**
   * How the bot reads and writes Twitch chat: `irc` (tmi.js, the default) or `eventsub` (reads
   * channel.chat.message over EventSub, sends with Helix Send Chat Message; needs TWITCH_CLIENT_ID
   * and a token with user:read:chat user:write:chat). `botBadge`: with TWITCH_CLIENT_SECRET, send
   * with an app access token so the bot's lines carry the Chat Bot badge (src/twitch/eventsub-chat.ts).
   */
  chat: z
    .strictObject({
      transport: z.enum(['irc', 'eventsub']).default('irc'),
      botBadge: z.boolean().default(true),
    })
    .prefault({}),
  /** Twitch Shared Chat (src/giveaway/shared-chat.ts): partner channels' viewers enter only when this is on. */
  sharedChat: z.strictObject({ partnerEntries: z.boolean().default(false) }).prefault({}),
  messages: z.record(z.string(), z.string().max(450)).default(() => ({})),
  /** The shop on stream (./shop.ts): supporter alerts, merch train, !merch, !promo. */
  alerts: alertsSchema,
  merchTrain: merchTrainSchema,
  merch: merchSchema,
  promo: promoSchema,
  /** Entries from Twitch beyond chat (./twitch-entries.ts): channel points and bits. */
  channelPoints: channelPointsSchema,
  bits: bitsSchema,
  /** Sandbox-mode demo pacing (no effect in live mode). */
  demo: z
    .strictObject({
      drawSeconds: z.number().int().min(1).max(300).default(15),
      linkSeconds: z.number().int().min(1).max(300).default(10),
      /** Delay between scripted steps/viewer lines, ms. */
      paceMs: z.number().int().min(0).max(10_000).default(400),
    })
    .prefault({}),
});

export type FileSettings = z.infer<typeof fileSchema>;
export type EnvSettings = z.infer<typeof envSchema>;
