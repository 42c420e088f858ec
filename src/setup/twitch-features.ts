/**
 * What the broadcaster's Twitch login turns on (channel points, bits, the bot's Chat Bot badge),
 * each as one setup-page row in plain words: what it needs (an Affiliate or Partner channel, the
 * settings switch, the login's scopes in the page's words, the badge's own application with a
 * secret) and whether it is on or off now, and why (the settings, the saved login's scopes, what
 * the running bot reports). The wording of scopes comes from scopes.ts, which scope each feature
 * needs from twitch/scopes.ts, Twitch's channel-point rule from channel-points/api.ts.
 *
 * Contract: `twitchFeatureRows` is pure: the facts in, the rows out, in the page's order (channel
 * points, bits, badge); a row is `ok` only when the bot runs it now (or, before the bot runs it,
 * when nothing it needs is missing), `pending` while the running bot is still setting it up, `off`
 * otherwise with each missing piece named. Never contains a token.
 */
import type { Config } from '../config/index.js';
import { roleRulesOf } from '../giveaway/tickets.js';
import { AFFILIATE_ONLY } from '../twitch/channel-points/api.js';
import { ViewerRoles } from '../twitch/channel-points/roles.js';
import { BADGE_SCOPES, BROADCASTER_FEATURE_SCOPES } from '../twitch/scopes.js';
import { scopeWords } from './scopes.js';

export interface TwitchFeatureFacts {
  settings: Pick<Config['settings'], 'channelPoints' | 'bits' | 'chat' | 'eligibility'>;
  /** The broadcaster's login (the page's, or TWITCH_BROADCASTER_TOKEN's: scopes unknown until the bot validates it). */
  broadcaster?: { login: string; scopes?: readonly string[] };
  /** The bot's login: its scopes and application, when known (the page's login). */
  bot?: { login: string; scopes?: readonly string[]; clientId?: string };
  /** TWITCH_CLIENT_ID, and whether TWITCH_CLIENT_SECRET is set with it (the badge's app token). */
  app: { clientId?: string; secret: boolean };
  /** What the running bot reports, when one runs: each started feature's state, and why one did not start. */
  running?: {
    channelPoints?: FeatureHealth;
    bits?: FeatureHealth;
    notStarted?: Partial<Record<'channelPoints' | 'bits', string>>;
  };
}

/** A started feature's state (channel-points/entries.ts, bits.ts `health()`). */
interface FeatureHealth {
  state: string;
  problem?: string;
}

export interface TwitchFeatureRow {
  id: 'channel-points' | 'bits' | 'bot-badge';
  title: string;
  status: 'ok' | 'off' | 'pending';
  detail: string;
}

const SETTINGS_FILE = 'the settings file (config/giftdrop.json)';

const capitalized = (s: string) => `${s.charAt(0).toUpperCase()}${s.slice(1)}`;

/** `scope` named with its words: "create and fulfil ... (channel:manage:redemptions)". */
const named = (scope: string) => `${scopeWords(scope)} (${scope})`;

/** What is missing of the broadcaster's login for `scope`, or undefined. */
function loginGap(f: TwitchFeatureFacts, scope: string): string | undefined {
  if (!f.broadcaster) return "log the broadcaster in (the row above), with the channel's own account";
  if (f.broadcaster.scopes && !f.broadcaster.scopes.includes(scope))
    return `log the broadcaster in again: that login lacks ${scope}`;
  return undefined;
}

/**
 * One feature's row from its needs and what is missing now. `bot`: undefined while no bot runs;
 * else the feature's state (`health`, when it started) or why it did not start (`notStarted`).
 */
function featureRow(
  id: TwitchFeatureRow['id'],
  title: string,
  needs: string,
  missing: (string | undefined)[],
  bot: { health?: FeatureHealth; notStarted?: string } | undefined,
  on: string,
): TwitchFeatureRow {
  const gaps = missing.filter((m): m is string => m !== undefined);
  if (gaps.length) return { id, title, status: 'off', detail: `off. ${needs} To turn it on: ${gaps.join('; ')}.` };
  if (!bot)
    return {
      id,
      title,
      status: 'ok',
      detail: `ready: nothing is missing here; it turns on when the bot goes live with it. ${needs}`,
    };
  const h = bot.health;
  if (!h)
    return {
      id,
      title,
      status: 'off',
      detail: `off: ${bot.notStarted ?? 'the running bot does not use it yet: apply to restart it'} (${needs})`,
    };
  if (h.state === 'refused' || h.state === 'stopped')
    return { id, title, status: 'off', detail: `off: ${h.problem ?? 'the bot turned it off'} (${needs})` };
  if (h.state === 'starting')
    return { id, title, status: 'pending', detail: `starting: the bot is setting it up. ${needs}` };
  return { id, title, status: 'ok', detail: `on: ${on}` };
}

/** The running bot's view of one feature, when a bot runs. */
function botView(
  f: TwitchFeatureFacts,
  feature: 'channelPoints' | 'bits',
): { health?: FeatureHealth; notStarted?: string } | undefined {
  if (!f.running) return undefined;
  const health = f.running[feature];
  const notStarted = f.running.notStarted?.[feature];
  return { ...(health ? { health } : {}), ...(notStarted ? { notStarted } : {}) };
}

/**
 * The role rules in force for a viewer who redeems without chatting: what the broadcaster's login
 * lets the bot check, and what it refunds for instead (tickets.ts, channel-points/roles.ts).
 */
function roleNote(f: TwitchFeatureFacts): string {
  const rules = roleRulesOf(f.settings.eligibility);
  if (!rules.length || !f.broadcaster?.scopes) return '';
  const unchecked = ViewerRoles.unchecked(rules, f.broadcaster.scopes);
  const fixable = unchecked.filter((u) => u.scope);
  const months = unchecked.some((u) => u.rule === 'minSubMonths');
  return (
    ` A viewer who has not typed !enter has the roles Twitch's API tells the bot (${rules.join(', ')} in force).` +
    (fixable.length
      ? ` The broadcaster's login lacks ${fixable.map((u) => u.scope).join(' ')}, so such a viewer is refunded for ${fixable.map((u) => u.rule).join(', ')} until they type !enter: log the broadcaster in again.`
      : '') +
    (months
      ? ' Months subscribed show only in chat: with minSubMonths such a viewer is refunded until they type !enter.'
      : '')
  );
}

export function twitchFeatureRows(f: TwitchFeatureFacts): TwitchFeatureRow[] {
  const cp = f.settings.channelPoints;
  const bits = f.settings.bits;
  const rows: TwitchFeatureRow[] = [];
  rows.push(
    featureRow(
      'channel-points',
      'Entries with channel points',
      `Viewers redeem the bot's own reward "${cp.title}" (${cp.cost} points) to enter, refunded when they cannot. ${capitalized(AFFILIATE_ONLY)} (Twitch refuses the reward otherwise); it also needs the broadcaster's login allowing giftdrop to ${named(BROADCASTER_FEATURE_SCOPES.channelPoints)}, and "channelPoints": { "enabled": true } in ${SETTINGS_FILE}.`,
      [
        cp.enabled ? undefined : `set "channelPoints": { "enabled": true } in ${SETTINGS_FILE}, then apply`,
        loginGap(f, BROADCASTER_FEATURE_SCOPES.channelPoints),
      ],
      botView(f, 'channelPoints'),
      `viewers redeem "${cp.title}" (${cp.cost} points) while a draw is open; redemptions when none is open are refunded.${roleNote(f)}`,
    ),
  );
  rows.push(
    featureRow(
      'bits',
      'Tickets from bits',
      `Bits used during a draw add tickets (one per ${bits.bitsPerTicket} bits, at most ${bits.maxTickets} a viewer). It needs a channel that can receive bits (Affiliate or Partner), the broadcaster's login allowing giftdrop to ${named(BROADCASTER_FEATURE_SCOPES.bits)}, and "bits": { "enabled": true } in ${SETTINGS_FILE}.`,
      [
        bits.enabled ? undefined : `set "bits": { "enabled": true } in ${SETTINGS_FILE}, then apply`,
        loginGap(f, BROADCASTER_FEATURE_SCOPES.bits),
      ],
      botView(f, 'bits'),
      `bits used during a draw add tickets (one per ${bits.bitsPerTicket} bits, at most ${bits.maxTickets} a viewer).`,
    ),
  );
  rows.push(badgeRow(f));
  return rows;
}

/**
 * The Chat Bot badge: chat over EventSub, an app access token (so the streamer's own application
 * with its client secret: a Public application such as giftdrop's built-in one has none, and the page
 * keeps no secret), the bot's login with user:bot and the broadcaster's with channel:bot (or the bot a
 * moderator) on that same application. Twitch decides the last part at the bot's first line.
 */
function badgeRow(f: TwitchFeatureFacts): TwitchFeatureRow {
  const chat = f.settings.chat;
  const needs =
    `The robot badge next to the bot's name in chat. It needs chat over EventSub ("chat": { "transport": "eventsub", "botBadge": true } in ${SETTINGS_FILE}), ` +
    'your own Twitch application with its client secret (TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET in .env: a Public application such as the one built into giftdrop has no secret), ' +
    `the bot logged in with that application allowing giftdrop to ${named(BADGE_SCOPES.bot)}, and the broadcaster's login with it allowing giftdrop to ${named(BADGE_SCOPES.broadcaster)} (or the bot a moderator: /mod ${f.bot?.login ?? '<bot>'}).`;
  const gaps: (string | undefined)[] = [
    chat.transport === 'eventsub' && chat.botBadge
      ? undefined
      : `set "chat": { "transport": "eventsub", "botBadge": true } in ${SETTINGS_FILE}`,
    f.app.clientId && f.app.secret
      ? undefined
      : 'set TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET of your own application in .env',
    f.bot?.clientId && f.app.clientId && f.bot.clientId !== f.app.clientId
      ? "log the bot in again with that application (its login here is another application's)"
      : undefined,
    f.bot?.scopes && !f.bot.scopes.includes(BADGE_SCOPES.bot)
      ? `log the bot in again: that login lacks ${BADGE_SCOPES.bot}`
      : undefined,
  ];
  const broadcasterOk = f.broadcaster?.scopes?.includes(BADGE_SCOPES.broadcaster);
  return featureRow(
    'bot-badge',
    'The Chat Bot badge',
    needs,
    gaps,
    // Twitch grants or refuses the badge line by line: a running bot with everything set asks for it.
    f.running ? { health: { state: 'ready' } } : undefined,
    `the bot asks Twitch for the badge with each line${broadcasterOk ? '' : ` (without the broadcaster's ${BADGE_SCOPES.broadcaster}, only while the bot is a moderator)`}; when Twitch refuses it, the log says why and the lines go out without it.`,
  );
}
