/**
 * The checks `setup` (terminal, src/cli/setup.ts) and the setup page (setup-service.ts) share, so
 * both say the same thing: the Fourthwall API user (a real `GET /shops/current`) and the webhook
 * secret (present: Fourthwall has no API to compare it; the first signed webhook confirms it).
 * Each returns one SetupItem: ok, or what to fix. Never prints or returns a secret.
 */
import type { Config } from '../config/index.js';
import { fourthwallCredentialNames } from '../app/credential-problems.js';
import {
  FourthwallApiError,
  FourthwallAuthError,
  FourthwallClient,
  FourthwallNetworkError,
  FourthwallTimeoutError,
  FourthwallTokenError,
} from '../fourthwall/index.js';
import type { SetupItem } from './setup-item.js';

function unreachable(err: unknown, what: string, url: string): string | undefined {
  if (err instanceof FourthwallNetworkError || err instanceof FourthwallTimeoutError) {
    return `could not reach ${what} (${url}): ${err.message}`;
  }
  return undefined;
}

/** `GET /shops/current` with the configured credentials. */
export async function checkFourthwall(config: Config, client: FourthwallClient): Promise<SetupItem> {
  const name = 'Fourthwall API user';
  try {
    const shop = await client.getCurrentShop();
    return { name, status: 'ok', detail: `shop "${shop.name}" (${shop.publicDomain ?? shop.domain})`, required: true };
  } catch (err) {
    const creds = fourthwallCredentialNames(config.fourthwall.auth);
    if (err instanceof FourthwallAuthError || err instanceof FourthwallTokenError) {
      const status = err instanceof FourthwallAuthError ? err.status : err.status;
      return {
        name,
        status: 'fail',
        detail:
          `${creds} rejected: Fourthwall answered ${status ?? 'an error'}${err instanceof FourthwallAuthError ? ` ${err.code}` : ''}. ` +
          'Create the API user in the shop dashboard (Settings > For developers > Open API, as SUPER ADMIN) and copy its username and password again.',
        required: true,
      };
    }
    const down = unreachable(err, 'FOURTHWALL_API_URL', config.fourthwall.apiUrl);
    if (down) return { name, status: 'fail', detail: down, required: true };
    if (err instanceof FourthwallApiError) {
      return {
        name,
        status: 'fail',
        detail: `GET /shops/current failed: Fourthwall answered ${err.status} ${err.code}`,
        required: true,
      };
    }
    return { name, status: 'fail', detail: `GET /shops/current failed: ${(err as Error).message}`, required: true };
  }
}

/** The webhook secret (or platform app key) is set. */
export function checkWebhookSecret(config: Config): SetupItem {
  const name = 'Webhook secret';
  if (config.fourthwall.webhookSecret) {
    return {
      name,
      status: 'ok',
      detail:
        'FOURTHWALL_WEBHOOK_SECRET is set (Fourthwall has no API to compare it: if the bot logs "signature not verified", copy it again from the shop dashboard)',
      required: true,
    };
  }
  if (config.fourthwall.appHmacKey)
    return { name, status: 'ok', detail: 'FOURTHWALL_APP_HMAC_KEY is set (platform app)', required: true };
  return {
    name,
    status: 'fail',
    detail: 'set FOURTHWALL_WEBHOOK_SECRET (shown in the shop dashboard with the webhooks)',
    required: true,
  };
}
