/**
 * One journal line of an entrant (journal.ts), built without the generic JSON serialiser on the
 * `!enter` hot path. The output is exactly `JSON.stringify(entrant)` for an Entrant with the
 * standard fields in the standard order (userId, login, displayName, weight, roles{broadcaster,
 * moderator, vip, subscriber, subMonths, firstMessage}, enteredAt); anything else (extra fields,
 * non-finite numbers) goes through JSON.stringify. Readers parse it with entrantSchema as before.
 */
import type { Entrant } from '../giveaway/ports.js';

const ENTRANT_KEYS = ['userId', 'login', 'displayName', 'weight', 'roles', 'enteredAt'] as const;
const ROLE_KEYS = ['broadcaster', 'moderator', 'vip', 'subscriber', 'subMonths', 'firstMessage'] as const;
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function quote(s: string): string {
  return PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
}

/** The object's own enumerable keys are exactly `keys`, in that order (nothing allocated). */
function keysAre(o: object, keys: readonly string[]): boolean {
  let i = 0;
  for (const k in o) {
    if (!Object.hasOwn(o, k) || k !== keys[i]) return false;
    i++;
  }
  return i === keys.length;
}

function standard(e: Entrant): boolean {
  return (
    typeof e.userId === 'string' &&
    typeof e.login === 'string' &&
    typeof e.displayName === 'string' &&
    Number.isFinite(e.weight) &&
    Number.isFinite(e.enteredAt) &&
    typeof e.roles === 'object' &&
    e.roles !== null &&
    typeof e.roles.broadcaster === 'boolean' &&
    typeof e.roles.moderator === 'boolean' &&
    typeof e.roles.vip === 'boolean' &&
    typeof e.roles.subscriber === 'boolean' &&
    typeof e.roles.firstMessage === 'boolean' &&
    Number.isFinite(e.roles.subMonths) &&
    keysAre(e, ENTRANT_KEYS) &&
    keysAre(e.roles, ROLE_KEYS)
  );
}

/** `JSON.stringify(entrant)`, fast for the standard shape. */
export function entrantLine(e: Entrant): string {
  if (!standard(e)) return JSON.stringify(e);
  const r = e.roles;
  return (
    `{"userId":${quote(e.userId)},"login":${quote(e.login)},"displayName":${quote(e.displayName)},"weight":${e.weight},` +
    `"roles":{"broadcaster":${r.broadcaster},"moderator":${r.moderator},"vip":${r.vip},` +
    `"subscriber":${r.subscriber},"subMonths":${r.subMonths},"firstMessage":${r.firstMessage}},` +
    `"enteredAt":${e.enteredAt}}`
  );
}
