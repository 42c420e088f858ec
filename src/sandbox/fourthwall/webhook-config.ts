/**
 * Webhook configuration rules of the Fourthwall sandbox: Fourthwall's URI rules for a webhook URL
 * and the validation of a create / update body `{url, allowedTypes}`.
 *
 * Contract: pure checks, no state. A bad URL or body throws the documented 400s
 * (`INVALID_REQUEST` naming the field, `WEBHOOK_URI_IP_NOT_ALLOWED`,
 * `WEBHOOK_URI_PORT_NOT_ALLOWED`, `WEBHOOK_URI_UNALLOWED_DOMAIN`); loopback hosts on any port are
 * allowed when `allowLoopback` is set (the default, so tests can receive on 127.0.0.1).
 *
 * Deliberately not here: storing configurations and delivering events (webhooks.ts,
 * webhook-delivery.ts).
 */
import { isIP } from 'node:net';
import { ApiError, invalid } from './http.js';
import { WEBHOOK_EVENT_TYPES } from './types.js';

export interface UriRules {
  /** Allow loopback hosts (127.0.0.0/8, ::1, localhost) on any port (default true). */
  allowLoopback: boolean;
}

const LOOPBACK_NAMES = new Set(['localhost', 'localhost.']);

function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  if (LOOPBACK_NAMES.has(h.toLowerCase())) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return h === '::1';
}

/** Applies Fourthwall's creation rules to a webhook URL; throws the documented 400s. */
function checkWebhookUrl(raw: string, rules: UriRules): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('url', 'must be an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('url', 'must be http or https');
  const host = url.hostname;
  if (rules.allowLoopback && isLoopback(host)) return;
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) throw new ApiError(400, 'WEBHOOK_URI_IP_NOT_ALLOWED');
  if (url.port !== '' && url.port !== '443' && url.port !== '80')
    throw new ApiError(400, 'WEBHOOK_URI_PORT_NOT_ALLOWED');
  if (
    LOOPBACK_NAMES.has(host.toLowerCase()) ||
    !host.includes('.') ||
    host.endsWith('.local') ||
    host.endsWith('.internal')
  ) {
    throw new ApiError(400, 'WEBHOOK_URI_UNALLOWED_DOMAIN');
  }
}

/** Validates a create/update body `{url, allowedTypes}` (a field named `types` is ignored). */
export function parseWebhookBody(
  body: Record<string, unknown>,
  rules: UriRules,
): { url: string; allowedTypes: string[] } {
  const url = body['url'];
  if (typeof url !== 'string' || url === '') throw invalid('url', 'is required');
  const types = body['allowedTypes'];
  if (!Array.isArray(types)) throw invalid('allowedTypes', 'is required and must be an array');
  types.forEach((t, i) => {
    if (typeof t !== 'string' || !WEBHOOK_EVENT_TYPES.includes(t)) {
      throw invalid(`allowedTypes[${i}]`, `must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
    }
  });
  checkWebhookUrl(url, rules);
  return { url, allowedTypes: [...new Set(types as string[])] };
}
