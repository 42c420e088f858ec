/**
 * The sandbox Helix's EventSub subscription routes (registered on SandboxHelix), over the
 * sessions of the sandbox EventSub server (./server.ts), with Twitch's rules for the WebSocket
 * transport:
 * - `POST /eventsub/subscriptions` `{ type, version, condition, transport: { method: 'websocket',
 *   session_id } }` -> 202 `{ data: [subscription], total, total_cost, max_total_cost: 10 }`;
 *   a user token only; the session must be live (subscribing after the keepalive window finds it
 *   closed: 400 "websocket transport session does not exist or has already disconnected"); a
 *   session holds one user's subscriptions (another user: 400); the caller must be the user the
 *   condition names and hold the type's scope (403); the same type, version and condition twice
 *   for the same user: 409; a fourth session of the same client id and user with enabled
 *   subscriptions: 429 "number of websocket transports limit exceeded"; more than 300 enabled on
 *   one session: 429; a total cost above 10: 429;
 * - `GET /eventsub/subscriptions[?status&type]` -> the caller's subscriptions with `total`,
 *   `total_cost`, `max_total_cost` (disconnected ones listed with their status);
 * - `DELETE /eventsub/subscriptions?id=` -> 204, or 404.
 * The types it knows: channel points redemptions, bits used, chat messages, Shared Chat sessions.
 */
import { randomUUID } from 'node:crypto';
import type { HelixCaller, HelixRouteCall, SandboxHelix } from '../helix/index.js';
import type { EventSubSandbox, SimSubscription } from './server.js';

interface TypeRule {
  version: string;
  /** Any one of these scopes (none: no authorization needed, like Shared Chat's session events). */
  scopes: readonly string[];
  /** Condition fields that must be present. */
  required: readonly string[];
  /** The condition field that must be the caller's user id (none: anyone may subscribe, at cost 1 unless it is them). */
  self?: string;
}

const SANDBOX_EVENTSUB_TYPES: Readonly<Record<string, TypeRule>> = {
  'channel.channel_points_custom_reward_redemption.add': {
    version: '1',
    scopes: ['channel:read:redemptions', 'channel:manage:redemptions'],
    required: ['broadcaster_user_id'],
    self: 'broadcaster_user_id',
  },
  'channel.bits.use': {
    version: '1',
    scopes: ['bits:read'],
    required: ['broadcaster_user_id'],
    self: 'broadcaster_user_id',
  },
  'channel.chat.message': {
    version: '1',
    scopes: ['user:read:chat'],
    required: ['broadcaster_user_id', 'user_id'],
    self: 'user_id',
  },
  // Shared Chat's session events need no authorization (sandbox/chat/eventsub-events.ts publishes them).
  'channel.shared_chat.begin': { version: '1', scopes: [], required: ['broadcaster_user_id'] },
  'channel.shared_chat.update': { version: '1', scopes: [], required: ['broadcaster_user_id'] },
  'channel.shared_chat.end': { version: '1', scopes: [], required: ['broadcaster_user_id'] },
};

const MAX_TOTAL_COST = 10;
const MAX_PER_SESSION = 300;
const MAX_TRANSPORTS = 3;

function shape(sub: SimSubscription, es: EventSubSandbox): Record<string, unknown> {
  const s = es.sessions.get(sub.sessionId);
  return {
    id: sub.id,
    status: sub.status,
    type: sub.type,
    version: sub.version,
    condition: sub.condition,
    created_at: sub.createdAt,
    transport: { method: 'websocket', session_id: sub.sessionId, connected_at: s?.connectedAt },
    cost: sub.cost,
  };
}

function mine(es: EventSubSandbox, caller: HelixCaller): SimSubscription[] {
  return es.subscriptions().filter((x) => x.userId === caller.userId && x.clientId === caller.clientId);
}

function totals(
  es: EventSubSandbox,
  caller: HelixCaller,
): { total: number; total_cost: number; max_total_cost: number } {
  const enabled = mine(es, caller).filter((x) => x.status === 'enabled');
  return { total: enabled.length, total_cost: enabled.reduce((a, x) => a + x.cost, 0), max_total_cost: MAX_TOTAL_COST };
}

async function create(call: HelixRouteCall, es: EventSubSandbox): Promise<void> {
  const { caller } = call;
  const body = (await call.body()) as
    | { type?: unknown; version?: unknown; condition?: unknown; transport?: { method?: unknown; session_id?: unknown } }
    | undefined;
  if (
    !body ||
    typeof body.type !== 'string' ||
    typeof body.version !== 'string' ||
    typeof body.condition !== 'object' ||
    !body.condition
  )
    return call.fail(400, 'Bad Request', 'The body must have type, version and condition');
  const rule = SANDBOX_EVENTSUB_TYPES[body.type];
  if (!rule || rule.version !== body.version)
    return call.fail(400, 'Bad Request', 'The combination of values in the type and version fields is not valid');
  if (body.transport?.method !== 'websocket')
    return call.fail(400, 'Bad Request', "The sandbox takes the 'websocket' transport only");
  if (!caller.userId) return call.fail(401, 'Unauthorized', 'WebSocket subscriptions need a user access token');
  const condition: Record<string, string> = {};
  for (const [k, v] of Object.entries(body.condition as Record<string, unknown>))
    if (typeof v === 'string' && v) condition[k] = v;
  for (const field of rule.required)
    if (!condition[field]) return call.fail(400, 'Bad Request', `The condition must have ${field}`);
  const sessionId = typeof body.transport.session_id === 'string' ? body.transport.session_id : '';
  const s = es.sessions.get(sessionId);
  if (!s || s.ended)
    return call.fail(400, 'Bad Request', 'websocket transport session does not exist or has already disconnected');
  if (s.userId && s.userId !== caller.userId)
    return call.fail(400, 'Bad Request', "the websocket transport session holds another user's subscriptions");
  if (
    (rule.self && condition[rule.self] !== caller.userId) ||
    (rule.scopes.length > 0 && !rule.scopes.some((x) => caller.scopes.includes(x)))
  )
    return call.fail(403, 'Forbidden', 'subscription missing proper authorization');
  const all = mine(es, caller);
  const key = JSON.stringify(Object.entries(condition).sort());
  if (
    all.some(
      (x) =>
        x.status === 'enabled' &&
        x.type === body.type &&
        x.version === body.version &&
        JSON.stringify(Object.entries(x.condition).sort()) === key,
    )
  )
    return call.fail(409, 'Conflict', 'subscription already exists');
  const enabledHere = s.subscriptions.filter((x) => x.status === 'enabled').length;
  const otherTransports = new Set(
    all.filter((x) => x.status === 'enabled' && x.sessionId !== s.id).map((x) => x.sessionId),
  );
  if (enabledHere === 0 && otherTransports.size >= MAX_TRANSPORTS)
    return call.fail(429, 'Too Many Requests', 'number of websocket transports limit exceeded');
  if (enabledHere >= MAX_PER_SESSION)
    return call.fail(429, 'Too Many Requests', 'websocket transport subscriptions limit exceeded');
  // The condition's user authorized it (the caller is that user): cost 0, as Twitch counts it; a
  // type anyone may subscribe to costs 1 unless it is about the caller.
  const cost = rule.self || condition.broadcaster_user_id === caller.userId ? 0 : 1;
  if (totals(es, caller).total_cost + cost > MAX_TOTAL_COST)
    return call.fail(429, 'Too Many Requests', 'websocket transport subscriptions total cost exceeded');
  const sub: SimSubscription = {
    id: randomUUID(),
    type: body.type,
    version: body.version,
    condition,
    status: 'enabled',
    sessionId: s.id,
    clientId: caller.clientId,
    userId: caller.userId,
    cost,
    createdAt: new Date(es.clock.now()).toISOString(),
  };
  s.userId = caller.userId;
  s.subscriptions.push(sub);
  es.subscribed(s);
  call.reply(202, { data: [shape(sub, es)], ...totals(es, caller) });
}

/** Registers the routes on the Helix sandbox. */
export function registerEventSubRoutes(helix: SandboxHelix, es: EventSubSandbox): void {
  helix.route((call) => {
    if (call.path !== '/eventsub/subscriptions') return false;
    if (call.method === 'POST') {
      void create(call, es);
      return true;
    }
    if (call.method === 'GET') {
      const status = call.query.get('status');
      const type = call.query.get('type');
      const list = mine(es, call.caller).filter((x) => (!status || x.status === status) && (!type || x.type === type));
      call.reply(200, { data: list.map((x) => shape(x, es)), ...totals(es, call.caller), pagination: {} });
      return true;
    }
    if (call.method === 'DELETE') {
      const id = call.query.get('id');
      if (!id) return (call.fail(400, 'Bad Request', 'Missing required parameter "id"'), true);
      const sub = mine(es, call.caller).find((x) => x.id === id && x.status === 'enabled');
      if (!sub) return (call.fail(404, 'Not Found', 'subscription not found'), true);
      const s = es.sessions.get(sub.sessionId);
      if (s) s.subscriptions = s.subscriptions.filter((x) => x !== sub);
      call.reply(204);
      return true;
    }
    return false;
  });
}
