/**
 * A pre-check of eligibility over an entrant table's columns, so the close-time freeze reads a
 * row's strings (user id, login) only when the rules could exclude that row.
 *
 * Contract: `surelyEligible(row)` is true only when `excluder` (../eligibility.ts) would certainly
 * return undefined for that row: no role flag or subscription rule that excludes, a login that
 * is ASCII and, lower-cased, equals none of the logins the rules name (the channel, the bot, the
 * excluded logins; compared byte by byte, ASCII lower-casing keeps the length), and a user id whose digit key
 * shares no first-8-digits key with the channel id or a recent winner. False means "ask
 * `excluder`", never "excluded". Does not: decide exclusions or count them.
 */
import { noRoles } from '../../shared/chat.js';
import { digitKey } from '../../fairness/index.js';
import { LOGIN_NON_ASCII, LOGIN_STRING_ONLY, packRoles, type EntrantTable } from './entrant-table.js';
import type { ChannelIdentity } from '../eligibility.js';
import type { GiveawaySettings } from '../settings.js';

/** Whether the ASCII login at `bytes[at..]`, lower-cased, equals one of `named` (same length). */
function matchesAny(bytes: Buffer, at: number, named: readonly Buffer[]): boolean {
  for (const want of named) {
    let i = 0;
    for (; i < want.length; i++) {
      const b = bytes[at + i]!;
      if ((b >= 65 && b <= 90 ? b + 32 : b) !== want[i]) break;
    }
    if (i === want.length) return true;
  }
  return false;
}

export function surelyEligibleRows(
  table: EntrantTable,
  rules: GiveawaySettings['eligibility'],
  id: ChannelIdentity,
  recentWinners: ReadonlySet<string>,
): (row: number) => boolean {
  const c = table.columns();
  const roleMask = packRoles({
    ...noRoles,
    broadcaster: true,
    moderator: rules.excludeModerators,
    firstMessage: rules.excludeFirstTimeChatters,
  });
  const subscriberBit = packRoles({ ...noRoles, subscriber: true });
  const needsSubscriber = rules.subscribersOnly || rules.minSubMonths > 0;
  const minMonths = rules.minSubMonths;
  // Lengths of the logins the rules compare with (lower-cased, as excluder does).
  const named = [
    id.channelLogin.toLowerCase(),
    id.botLogin.toLowerCase(),
    ...rules.excludeLogins.map((l) => l.toLowerCase().replace(/^@/, '')),
  ];
  // ASCII named logins by length (a non-ASCII one cannot equal a lower-cased ASCII login).
  const byLength = new Array<Buffer[] | undefined>(256);
  for (const login of named) {
    if (login.length >= 256 || !/^[\x00-\x7f]*$/.test(login)) continue;
    (byLength[login.length] ??= []).push(Buffer.from(login, 'latin1'));
  }
  // First-8-digit keys of the ids the rules compare with (0 for a non-decimal one).
  const ids = [...recentWinners, ...(id.channelId !== undefined ? [id.channelId] : [])];
  const hi = new Uint32Array(1);
  const lo = new Uint32Array(1);
  const idHi = new Set<number>();
  for (const x of ids) {
    digitKey(x, hi, lo, 0);
    idHi.add(hi[0]!);
  }
  const checkIds = idHi.size > 0;
  const { roleBits, months, loginFlags, loginLen, loginStart, loginBytes, keyHi } = c;
  return (row) => {
    const bits = roleBits[row]!;
    if ((bits & roleMask) !== 0) return false;
    if (needsSubscriber && ((bits & subscriberBit) === 0 || months[row]! < minMonths)) return false;
    if ((loginFlags[row]! & (LOGIN_NON_ASCII | LOGIN_STRING_ONLY)) !== 0) return false;
    const same = byLength[loginLen[row]!];
    if (same !== undefined && matchesAny(loginBytes, loginStart[row]!, same)) return false;
    // A non-decimal id has key 0, and so has any non-decimal id the rules name: such rows ask.
    if (checkIds && idHi.has(keyHi[row]!)) return false;
    return true;
  };
}
