/**
 * The EventSub WebSocket messages as Twitch sends them (checked with zod at the edge), and the
 * close codes its server uses. Only the fields the client reads are required; the rest passes.
 *
 * Messages: `session_welcome` (session id, keepalive_timeout_seconds), `session_keepalive`,
 * `notification` (subscription + event), `session_reconnect` (reconnect_url), `revocation`
 * (subscription with its status: authorization_revoked, user_removed, version_removed, ...).
 * Every message has `metadata.message_id` (the same on a redelivery) and `message_type`.
 */
import { z } from 'zod';

const metadata = z.looseObject({
  message_id: z.string().min(1),
  message_type: z.string(),
  message_timestamp: z.string().optional(),
  subscription_type: z.string().optional(),
  subscription_version: z.string().optional(),
});

const session = z.looseObject({
  id: z.string().min(1),
  status: z.string().optional(),
  keepalive_timeout_seconds: z.number().int().nullable().optional(),
  reconnect_url: z.string().nullable().optional(),
});

const subscription = z.looseObject({
  id: z.string(),
  status: z.string().optional(),
  type: z.string(),
  version: z.string(),
  condition: z.record(z.string(), z.unknown()).optional(),
});

const welcome = z.object({ metadata, payload: z.looseObject({ session }) });
const notification = z.object({ metadata, payload: z.looseObject({ subscription, event: z.unknown() }) });
const revocation = z.object({ metadata, payload: z.looseObject({ subscription }) });

export type EventSubMessage =
  | { kind: 'welcome'; id: string; sessionId: string; keepaliveSeconds: number | undefined }
  | { kind: 'keepalive'; id: string }
  | { kind: 'reconnect'; id: string; url: string }
  | {
      kind: 'notification';
      id: string;
      type: string;
      version: string;
      condition: Record<string, unknown>;
      event: unknown;
      at?: string;
    }
  | {
      kind: 'revocation';
      id: string;
      type: string;
      version: string;
      condition: Record<string, unknown>;
      status: string;
    }
  | { kind: 'other'; id: string; type: string };

/** One text frame as a message, or undefined when it is not one Twitch would send (logged by the caller). */
export function parseMessage(text: string): EventSubMessage | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  const head = z.object({ metadata }).safeParse(raw);
  if (!head.success) return undefined;
  const { message_id: id, message_type: type } = head.data.metadata;
  switch (type) {
    case 'session_welcome': {
      const m = welcome.safeParse(raw);
      if (!m.success) return undefined;
      return {
        kind: 'welcome',
        id,
        sessionId: m.data.payload.session.id,
        keepaliveSeconds: m.data.payload.session.keepalive_timeout_seconds ?? undefined,
      };
    }
    case 'session_keepalive':
      return { kind: 'keepalive', id };
    case 'session_reconnect': {
      const m = welcome.safeParse(raw);
      const url = m.success ? m.data.payload.session.reconnect_url : undefined;
      return url ? { kind: 'reconnect', id, url } : undefined;
    }
    case 'notification': {
      const m = notification.safeParse(raw);
      if (!m.success) return undefined;
      const s = m.data.payload.subscription;
      return {
        kind: 'notification',
        id,
        type: s.type,
        version: s.version,
        condition: s.condition ?? {},
        event: m.data.payload.event,
        ...(m.data.metadata.message_timestamp ? { at: m.data.metadata.message_timestamp } : {}),
      };
    }
    case 'revocation': {
      const m = revocation.safeParse(raw);
      if (!m.success) return undefined;
      const s = m.data.payload.subscription;
      return {
        kind: 'revocation',
        id,
        type: s.type,
        version: s.version,
        condition: s.condition ?? {},
        status: s.status ?? 'revoked',
      };
    }
    default:
      return { kind: 'other', id, type };
  }
}

/** What Twitch's close codes mean (its EventSub WebSocket reference). */
const CLOSE_REASONS: Readonly<Record<number, string>> = {
  4000: 'internal server error',
  4001: 'the client sent inbound traffic',
  4002: 'the client failed ping-pong',
  4003: 'connection unused (no subscription within the keepalive window)',
  4004: 'reconnect grace time expired',
  4005: 'network timeout',
  4006: 'network error',
  4007: 'invalid reconnect',
};

/** One line for a close code: "4003 connection unused (...)". */
export function closeReason(code: number, reason?: string): string {
  const known = CLOSE_REASONS[code];
  return `${code}${known ? ` ${known}` : ''}${reason && reason !== known ? ` (${reason})` : ''}`;
}
