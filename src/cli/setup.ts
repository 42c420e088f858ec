/**
 * `npm run setup`: checks the live configuration for real before the first stream and registers
 * the shop's webhook. Per item it prints `ok` or what to fix:
 * - Fourthwall credentials: GET /shops/current;
 * - Twitch chat: a real login to TWITCH_IRC_URL, join of TWITCH_CHANNEL, disconnect (and whether
 *   the bot is a moderator there);
 * - Twitch API (optional, setup-twitch-api.ts): TWITCH_CLIENT_ID, the token's scopes per enabled feature;
 * - webhook secret: present (Fourthwall has no API to compare it);
 * - client addresses: which GIFTDROP_TRUST_PROXY is in force (a warning naming the setting when the
 *   public URL is a cloudflared or ngrok address and no header is trusted);
 * - webhook: `<GIFTDROP_PUBLIC_URL>/webhooks/fourthwall` with the event types the bot needs, through
 *   list/create/update webhook: a second run changes nothing and never creates a duplicate; a
 *   configuration with that URL but missing types is updated;
 * - gifting configuration (GET /gifting/config, newer APIs): warns when another integration owns
 *   the gifting slot; a 404 means the API version has no such endpoint.
 *
 * The logic is runSetup (testable; resolves with the exit code: 0 only when every required item
 * passes, 1 otherwise). Output passes through the secret scrubber: no credential is ever printed.
 * Does not: start the bot, open a tunnel, or change anything but webhook configurations.
 */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { loadConfigOrExit, secretValues, type Config } from '../config/index.js';
import { fourthwallCredentialNames } from '../app/credential-problems.js';
import {
  FourthwallApiError,
  FourthwallAuthError,
  FourthwallClient,
  FourthwallNetworkError,
  FourthwallTimeoutError,
  FourthwallTokenError,
  type FourthwallClientOptions,
} from '../fourthwall/index.js';
import { createLogger, makeScrubber, silentLogger, type Logger } from '../logging/index.js';
import { TwitchAuthError, TwitchChat } from '../twitch/index.js';
import { clientAuth } from '../fourthwall/auth.js';
import { BOT_WEBHOOK_TYPES } from '../app/bot.js';
import { DELIVERY_WEBHOOK_TYPES } from '../delivery/tracker.js';
import { basicOnlyNotice } from '../events/catch-up.js';
import { webhookTypesFor } from '../shop/webhook-types.js';
import { checkTwitchApi, claimPageItem } from './setup-twitch-api.js';
import { describeClientKeys } from '../http/surfaces.js';
import type { SetupItem } from './setup-item.js';
import { giftdropCommand, settingsGuide, thisInvocation } from '../platform/invocation.js';

export interface SetupOptions {
  config: Config;
  out: { write(text: string): unknown };
  logger?: Logger;
  /** Extra Fourthwall client options (tests shorten timeouts and retries). */
  client?: Partial<FourthwallClientOptions>;
  /** Longest wait for the chat login (default 15 000 ms). */
  chatTimeoutMs?: number;
}

export interface SetupResult {
  exitCode: number;
  items: SetupItem[];
}

/** The path the bot serves Fourthwall webhooks on. */
export const WEBHOOK_PATH = '/webhooks/fourthwall';

const URI_PROBLEMS: Record<string, string> = {
  WEBHOOK_URI_IP_NOT_ALLOWED: 'Fourthwall refuses webhook URLs on IP addresses: use the https:// host name of your tunnel',
  WEBHOOK_URI_PORT_NOT_ALLOWED: 'Fourthwall refuses webhook URLs on unusual ports: use the tunnel\'s https:// address without a port',
  WEBHOOK_URI_UNALLOWED_DOMAIN: 'Fourthwall refuses webhook URLs on this domain: use the https:// address of an HTTPS tunnel (cloudflared, ngrok)',
};

/** What is missing for live mode (names of settings), for a config that fell back to sandbox. */
export function missingForLive(config: Config): string[] {
  const missing: string[] = [];
  if (!config.twitch.channel) missing.push('TWITCH_CHANNEL');
  if (!config.twitch.username) missing.push('TWITCH_USERNAME');
  if (!config.twitch.token) missing.push('TWITCH_TOKEN');
  if (config.fourthwall.auth.kind === 'none') missing.push('FOURTHWALL_USERNAME and FOURTHWALL_PASSWORD (the shop\'s API user)');
  if (!config.fourthwall.webhookSecret && !config.fourthwall.appHmacKey) missing.push('FOURTHWALL_WEBHOOK_SECRET');
  if (!config.publicUrl) missing.push('GIFTDROP_PUBLIC_URL (your HTTPS tunnel\'s address)');
  return missing;
}

function unreachable(err: unknown, what: string, url: string): string | undefined {
  if (err instanceof FourthwallNetworkError || err instanceof FourthwallTimeoutError) {
    return `could not reach ${what} (${url}): ${err.message}`;
  }
  return undefined;
}

async function checkFourthwall(config: Config, client: FourthwallClient): Promise<SetupItem> {
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
      return { name, status: 'fail', detail: `GET /shops/current failed: Fourthwall answered ${err.status} ${err.code}`, required: true };
    }
    return { name, status: 'fail', detail: `GET /shops/current failed: ${(err as Error).message}`, required: true };
  }
}

async function checkTwitch(config: Config, logger: Logger, timeoutMs: number): Promise<SetupItem[]> {
  const name = 'Twitch chat login';
  const { channel, username, token, ircUrl } = config.twitch;
  if (!channel || !username || !token) {
    return [{ name, status: 'fail', detail: 'TWITCH_CHANNEL, TWITCH_USERNAME and TWITCH_TOKEN are all needed', required: true }];
  }
  const chat = new TwitchChat({ url: ircUrl, channel, username, token, logger, connectTimeoutMs: timeoutMs, reconnect: { intervalMs: 60_000 } });
  try {
    await chat.connect();
    const mod = chat.isMod();
    const items: SetupItem[] = [
      { name, status: 'ok', detail: `logged in as ${username} and joined #${channel}`, required: true },
      mod
        ? { name: 'Bot is a moderator', status: 'ok', detail: `${username} is a moderator of #${channel}`, required: false }
        : {
            name: 'Bot is a moderator',
            status: 'warn',
            detail: `${username} is not a moderator of #${channel}: type "/mod ${username}" in your chat (mods may send more lines per second; announcements stay timely)`,
            required: false,
          },
    ];
    return items;
  } catch (err) {
    if (err instanceof TwitchAuthError) {
      return [
        {
          name,
          status: 'fail',
          detail:
            `TWITCH_TOKEN rejected for TWITCH_USERNAME=${username}: it must be a user access token of that account with the scopes chat:read and chat:edit (see README "Set up and go live").`,
          required: true,
        },
      ];
    }
    return [{ name, status: 'fail', detail: `could not log in to TWITCH_IRC_URL (${ircUrl}): ${(err as Error).message}`, required: true }];
  } finally {
    await chat.disconnect().catch(() => undefined);
  }
}

/**
 * Which client addresses the per-client limits use (GIFTDROP_TRUST_PROXY): a warning while no
 * header is trusted and the public URL names a tunnel that writes one the bot could trust.
 */
function clientAddressItem(config: Config): SetupItem {
  const detail = describeClientKeys(config.http.trustProxy, config.publicUrl);
  return { name: 'Client addresses', status: detail.includes('set GIFTDROP_TRUST_PROXY=') ? 'warn' : 'ok', detail, required: false };
}

function checkWebhookSecret(config: Config): SetupItem {
  const name = 'Webhook secret';
  if (config.fourthwall.webhookSecret) {
    return {
      name,
      status: 'ok',
      detail: 'FOURTHWALL_WEBHOOK_SECRET is set (Fourthwall has no API to compare it: if the bot logs "signature not verified", copy it again from the shop dashboard)',
      required: true,
    };
  }
  if (config.fourthwall.appHmacKey) return { name, status: 'ok', detail: 'FOURTHWALL_APP_HMAC_KEY is set (platform app)', required: true };
  return { name, status: 'fail', detail: 'set FOURTHWALL_WEBHOOK_SECRET (shown in the shop dashboard with the webhooks)', required: true };
}

async function registerWebhook(config: Config, client: FourthwallClient): Promise<SetupItem[]> {
  const name = 'Webhook';
  if (!config.publicUrl) {
    return [
      {
        name,
        status: 'fail',
        detail:
          `GIFTDROP_PUBLIC_URL is not set: start an HTTPS tunnel to the bot (e.g. cloudflared tunnel --url http://127.0.0.1:${config.http.port}) and set GIFTDROP_PUBLIC_URL to its https:// address`,
        required: true,
      },
    ];
  }
  const url = `${config.publicUrl}${WEBHOOK_PATH}`;
  // The giveaway types plus what the enabled shop features need (settings file), and no more.
  const needed = webhookTypesFor([...BOT_WEBHOOK_TYPES, ...DELIVERY_WEBHOOK_TYPES], config.settings);
  try {
    const existing = (await client.listWebhooks()).results;
    const same = existing.filter((w) => w.url === url);
    const items: SetupItem[] = [];
    const first = same[0];
    if (!first) {
      const created = await client.createWebhook({ url, allowedTypes: needed });
      items.push({ name, status: 'ok', detail: `registered ${url} for ${needed.join(', ')} (${created.id})`, required: true });
    } else {
      const missing = needed.filter((t) => !first.allowedTypes.includes(t));
      const extra = first.allowedTypes.filter((t) => !needed.includes(t));
      if (missing.length || extra.length) {
        await client.updateWebhook(first.id, { url, allowedTypes: needed });
        const change = [missing.length ? `now also receives ${missing.join(', ')}` : '', extra.length ? `no longer receives ${extra.join(', ')} (no enabled feature uses them)` : ''].filter(Boolean).join('; ');
        items.push({ name, status: 'ok', detail: `${url} updated: ${change} (${first.id})`, required: true });
      } else {
        items.push({ name, status: 'ok', detail: `${url} already registered for ${needed.join(', ')} (${first.id}); nothing changed`, required: true });
      }
      if (same.length > 1) {
        items.push({
          name: 'Duplicate webhooks',
          status: 'warn',
          detail: `${same.length} configurations point at ${url} (${same.map((w) => w.id).join(', ')}): delete the extra ones in the dashboard (the bot ignores repeated events, but each is delivered once per configuration)`,
          required: false,
        });
      }
    }
    const stale = existing.filter((w) => w.url !== url && w.url.endsWith(WEBHOOK_PATH));
    if (stale.length) {
      items.push({
        name: 'Old webhooks',
        status: 'warn',
        detail: `also registered: ${stale.map((w) => w.url).join(', ')} (an old tunnel address?): delete them in the dashboard if that bot is gone`,
        required: false,
      });
    }
    return items;
  } catch (err) {
    if (err instanceof FourthwallApiError && err.apiCode && URI_PROBLEMS[err.apiCode]) {
      return [{ name, status: 'fail', detail: `${URI_PROBLEMS[err.apiCode]} (GIFTDROP_PUBLIC_URL=${config.publicUrl}, ${err.apiCode})`, required: true }];
    }
    if (err instanceof FourthwallAuthError) {
      return [{ name, status: 'fail', detail: `Fourthwall answered ${err.status} for the webhook configurations: the API user needs webhook read/write permissions`, required: true }];
    }
    return [{ name, status: 'fail', detail: `could not register ${url}: ${(err as Error).message}`, required: true }];
  }
}

async function checkGifting(client: FourthwallClient): Promise<SetupItem> {
  const name = 'Gifting configuration';
  try {
    const g = await client.getGiftingConfig();
    const platform = g.platform ?? 'NOT_SELECTED';
    if (g.enabled === false) {
      return { name, status: 'warn', detail: 'gifting is disabled in the shop: enable it in the dashboard so supporters can gift merch', required: false };
    }
    if (platform !== 'OPEN_API' && platform !== 'NOT_SELECTED') {
      return {
        name,
        status: 'warn',
        detail: `the gifting slot is owned by ${platform}: another integration runs gifted draws in this shop; switch the shop's gifting integration to the Open API (Fourthwall dashboard) for giftdrop to receive gift draws`,
        required: false,
      };
    }
    const window = g.entryTimeLimitSeconds ? `, entry window ${g.entryTimeLimitSeconds}s` : '';
    return { name, status: 'ok', detail: `gifting enabled, platform ${platform}${window}`, required: false };
  } catch (err) {
    if (err instanceof FourthwallApiError && err.status === 404) {
      return { name, status: 'ok', detail: 'not available on this API version (nothing to check)', required: false };
    }
    return { name, status: 'warn', detail: `could not read it: ${(err as Error).message}`, required: false };
  }
}

const LABEL: Record<SetupItem['status'], string> = { ok: 'ok  ', fail: 'FIX ', warn: 'warn', skip: 'skip' };

/** Runs every check, prints one line per item, and resolves with the exit code and the items. */
export async function runSetup(o: SetupOptions): Promise<SetupResult> {
  const { config } = o;
  const scrub = makeScrubber(secretValues(config));
  const print = (line: string): void => {
    o.out.write(`${scrub(line)}\n`);
  };
  const logger = o.logger ?? silentLogger();

  if (config.mode !== 'live') {
    const missing = missingForLive(config);
    print('giftdrop setup checks the live configuration, but this one runs in sandbox mode.');
    if (missing.length) {
      print(`Missing (set them in .env; ${settingsGuide(thisInvocation())}):`);
      for (const m of missing) print(`  - ${m}`);
    } else {
      print('GIFTDROP_MODE=sandbox is set: remove it (or set GIFTDROP_MODE=live) to check the live configuration.');
    }
    return { exitCode: 1, items: [] };
  }

  print(`giftdrop setup: checking the live configuration (Fourthwall ${config.fourthwall.apiUrl}, chat ${config.twitch.ircUrl})`);
  const items: SetupItem[] = [];
  const report = (list: SetupItem[]): void => {
    for (const item of list) {
      items.push(item);
      print(`  ${LABEL[item.status]}  ${item.name}: ${item.detail}`);
    }
  };

  const client = new FourthwallClient({
    apiUrl: config.fourthwall.apiUrl,
    auth: clientAuth(config),
    rateLimit: config.fourthwall.rateLimit,
    logger,
    retry: { maxAttempts: 2 },
    deadlineMs: 20_000,
    ...o.client,
  });
  try {
    const fw = await checkFourthwall(config, client);
    report([fw]);
    report(await checkTwitch(config, logger, o.chatTimeoutMs ?? 15_000));
    report(await checkTwitchApi(config, logger));
    report([claimPageItem(config)]);
    report([clientAddressItem(config)]);
    report([checkWebhookSecret(config)]);
    const basicOnly = basicOnlyNotice(config);
    report([{ name: 'Basic-only operations', status: basicOnly ? 'warn' : 'ok', detail: basicOnly ?? 'Basic credentials are set', required: false }]);
    if (fw.status === 'ok') {
      report(await registerWebhook(config, client));
      report([await checkGifting(client)]);
    } else {
      // A missing public URL is worth knowing now, whatever the credentials say.
      report(
        config.publicUrl
          ? [{ name: 'Webhook', status: 'skip', detail: 'needs working Fourthwall credentials (see above)', required: true }]
          : await registerWebhook(config, client),
      );
      report([
        { name: 'Gifting configuration', status: 'skip', detail: 'needs working Fourthwall credentials', required: false },
      ]);
    }
  } finally {
    await client.close().catch(() => undefined);
  }

  // A skipped check is not an item to fix: it waits on one that failed (and is named there).
  const toFix = items.filter((i) => i.required && i.status === 'fail');
  if (toFix.length === 0) {
    print(`All required checks passed. Start the bot with: ${giftdropCommand('start')}`);
    return { exitCode: 0, items };
  }
  print(`${toFix.length} item(s) to fix: ${toFix.map((i) => i.name).join(', ')}. Fix them in .env and run ${giftdropCommand('setup')} again.`);
  return { exitCode: 1, items };
}

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = config.logLevelExplicit
    ? createLogger({ level: config.logLevel, destination: process.stderr, secrets: secretValues(config) })
    : silentLogger();
  // Setup registers the bot's webhook: never beside a running bot on the same data.
  if (config.mode === 'live') {
    const { lockDataDirOrExit } = await import('../app/data-lock.js');
    await lockDataDirOrExit(config.dataDir, (message) => process.stderr.write(`giftdrop setup: warning: ${message}\n`));
  }
  const { exitCode } = await runSetup({ config, out: process.stdout, logger });
  process.exitCode = exitCode;
}

function isEntry(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}

/** `npm run setup` (and `giftdrop setup`): checks every setting, prints what to fix, sets the exit code; a failure it did not expect is one line and exit 1. */
export function setupCommand(): Promise<void> {
  return main().catch((err: unknown) => {
    process.stderr.write(`giftdrop setup failed: ${(err as Error).message}\n`);
    process.exit(1);
  });
}

if (isEntry()) void setupCommand();
