/**
 * `npm run setup`: checks the live configuration for real before the first stream and registers
 * the shop's webhook. Per item it prints `ok` or what to fix:
 * - Fourthwall credentials: GET /shops/current;
 * - Twitch chat, over the transport in force (`chat.transport`): IRC, a real login to
 *   TWITCH_IRC_URL, join of TWITCH_CHANNEL, disconnect (and whether the bot is a moderator there);
 *   EventSub, the token's scopes for it and a real subscription to the channel's chat
 *   (setup-eventsub-chat.ts); the scopes each transport needs come from twitch/scopes.ts;
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
import { FourthwallApiError, FourthwallClient, type FourthwallClientOptions } from '../fourthwall/index.js';
import { createLogger, makeScrubber, silentLogger, type Logger } from '../logging/index.js';
import { TwitchAuthError, TwitchChat } from '../twitch/index.js';
import { clientAuth } from '../fourthwall/auth.js';
import { BOT_WEBHOOK_TYPES } from '../app/bot.js';
import { DELIVERY_WEBHOOK_TYPES } from '../delivery/tracker.js';
import { basicOnlyNotice } from '../events/catch-up.js';
import { webhookTypesFor } from '../shop/webhook-types.js';
import { checkTwitchApi, claimPageItem } from './setup-twitch-api.js';
import { checkEventSubChat } from './setup-eventsub-chat.js';
import { chatScopesOf } from '../twitch/scopes.js';
import { ensureWebhook, webhookProblem } from '../events/webhook-registration.js';
import { checkFourthwall, checkWebhookSecret } from '../setup/checks.js';
import { LoginStore } from '../twitch/login-store.js';
import { TwitchLogins } from '../twitch/logins.js';
import { TwitchAuthClient } from '../twitch/auth.js';
import { systemClock } from '../shared/clock.js';
import { describeClientKeys } from '../http/surfaces.js';
import type { SetupItem } from '../setup/setup-item.js';
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

/** What is missing for live mode (names of settings), for a config that fell back to sandbox. */
export function missingForLive(config: Config): string[] {
  const missing: string[] = [];
  if (!config.twitch.channel) missing.push('TWITCH_CHANNEL');
  if (!config.twitch.username) missing.push('TWITCH_USERNAME');
  if (!config.twitch.token && !config.twitch.savedLogin)
    missing.push("TWITCH_TOKEN (or the bot's login on the setup page)");
  if (config.fourthwall.auth.kind === 'none')
    missing.push("FOURTHWALL_USERNAME and FOURTHWALL_PASSWORD (the shop's API user)");
  if (!config.fourthwall.webhookSecret && !config.fourthwall.appHmacKey) missing.push('FOURTHWALL_WEBHOOK_SECRET');
  if (!config.publicUrl) missing.push("GIFTDROP_PUBLIC_URL (your HTTPS tunnel's address)");
  return missing;
}

async function checkTwitch(config: Config, logger: Logger, timeoutMs: number): Promise<SetupItem[]> {
  if (config.settings.chat.transport === 'eventsub') return checkEventSubChat(config, logger, timeoutMs);
  const name = 'Twitch chat login';
  const { channel, username, token, ircUrl } = config.twitch;
  if (!channel || !username || !token) {
    return [
      {
        name,
        status: 'fail',
        detail: 'TWITCH_CHANNEL, TWITCH_USERNAME and TWITCH_TOKEN are all needed',
        required: true,
      },
    ];
  }
  const chat = new TwitchChat({
    url: ircUrl,
    channel,
    username,
    token,
    logger,
    connectTimeoutMs: timeoutMs,
    reconnect: { intervalMs: 60_000 },
  });
  try {
    await chat.connect();
    const mod = chat.isMod();
    const items: SetupItem[] = [
      { name, status: 'ok', detail: `logged in as ${username} and joined #${channel}`, required: true },
      mod
        ? {
            name: 'Bot is a moderator',
            status: 'ok',
            detail: `${username} is a moderator of #${channel}`,
            required: false,
          }
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
          detail: `TWITCH_TOKEN rejected for TWITCH_USERNAME=${username}: it must be a user access token of that account with the scopes ${chatScopesOf('irc').join(' and ')} (chat over IRC, the settings' chat.transport; see README "Set up and go live").`,
          required: true,
        },
      ];
    }
    return [
      {
        name,
        status: 'fail',
        detail: `could not log in to TWITCH_IRC_URL (${ircUrl}): ${(err as Error).message}`,
        required: true,
      },
    ];
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
  return {
    name: 'Client addresses',
    status: detail.includes('set GIFTDROP_TRUST_PROXY=') ? 'warn' : 'ok',
    detail,
    required: false,
  };
}

async function registerWebhook(config: Config, client: FourthwallClient): Promise<SetupItem[]> {
  const name = 'Webhook';
  if (!config.publicUrl) {
    return [
      {
        name,
        status: 'fail',
        detail: `GIFTDROP_PUBLIC_URL is not set: start an HTTPS tunnel to the bot (e.g. cloudflared tunnel --url http://127.0.0.1:${config.http.port}) and set GIFTDROP_PUBLIC_URL to its https:// address`,
        required: true,
      },
    ];
  }
  // The giveaway types plus what the enabled shop features need (settings file), and no more.
  const needed = webhookTypesFor([...BOT_WEBHOOK_TYPES, ...DELIVERY_WEBHOOK_TYPES], config.settings);
  try {
    const o = await ensureWebhook({ client, publicUrl: config.publicUrl, types: needed, dataDir: config.dataDir });
    const items: SetupItem[] = [];
    if (o.action === 'created')
      items.push({
        name,
        status: 'ok',
        detail: `registered ${o.url} for ${needed.join(', ')} (${o.id})`,
        required: true,
      });
    else if (o.action === 'unchanged')
      items.push({
        name,
        status: 'ok',
        detail: `${o.url} already registered for ${needed.join(', ')} (${o.id}); nothing changed`,
        required: true,
      });
    else {
      const change = [
        o.previousUrl ? `moved from ${o.previousUrl}` : '',
        o.added.length ? `now also receives ${o.added.join(', ')}` : '',
        o.removed.length ? `no longer receives ${o.removed.join(', ')} (no enabled feature uses them)` : '',
      ]
        .filter(Boolean)
        .join('; ');
      items.push({ name, status: 'ok', detail: `${o.url} updated: ${change} (${o.id})`, required: true });
    }
    if (o.duplicates.length) {
      items.push({
        name: 'Duplicate webhooks',
        status: 'warn',
        detail: `${o.duplicates.length + 1} configurations point at ${o.url} (${[o.id, ...o.duplicates].join(', ')}): delete the extra ones in the dashboard (the bot ignores repeated events, but each is delivered once per configuration)`,
        required: false,
      });
    }
    if (o.stale.length) {
      items.push({
        name: 'Old webhooks',
        status: 'warn',
        detail: `also registered: ${o.stale.join(', ')} (an old tunnel address?): delete them in the dashboard if that bot is gone`,
        required: false,
      });
    }
    return items;
  } catch (err) {
    return [{ name, status: 'fail', detail: webhookProblem(err, config.publicUrl), required: true }];
  }
}

async function checkGifting(client: FourthwallClient): Promise<SetupItem> {
  const name = 'Gifting configuration';
  try {
    const g = await client.getGiftingConfig();
    const platform = g.platform ?? 'NOT_SELECTED';
    if (g.enabled === false) {
      return {
        name,
        status: 'warn',
        detail: 'gifting is disabled in the shop: enable it in the dashboard so supporters can gift merch',
        required: false,
      };
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

/**
 * The config with the setup page's saved bot login as its token and client id (the token renewed
 * and saved first when it is due, as the bot does), so the chat and Twitch API checks run on it.
 */
async function withSavedLogin(config: Config): Promise<Config> {
  const store = await LoginStore.open(config.dataDir);
  const auth = new TwitchAuthClient({ authUrl: config.twitch.authUrl ?? 'https://id.twitch.tv/oauth2' });
  try {
    const logins = new TwitchLogins({
      auth,
      store,
      logger: silentLogger(),
      clock: systemClock,
      registerSecret: () => undefined,
      confidential: {
        ...(config.twitch.clientId ? { clientId: config.twitch.clientId } : {}),
        ...(config.twitch.clientSecret ? { clientSecret: config.twitch.clientSecret } : {}),
      },
    });
    const bot = logins.keeper('bot');
    if (!bot) return config;
    await bot.check().catch(() => undefined); // a refusal is reported by the chat check below
    logins.stop();
    return {
      ...config,
      twitch: {
        ...config.twitch,
        token: bot.current(),
        username: logins.source('bot')!.login,
        clientId: logins.clientId('bot') ?? config.twitch.clientId,
      },
    };
  } finally {
    await auth.close();
    await store.close();
  }
}

/** Runs every check, prints one line per item, and resolves with the exit code and the items. */
export async function runSetup(o: SetupOptions): Promise<SetupResult> {
  // A bot login saved by the setup page is checked as TWITCH_TOKEN would be (renewed first when due).
  const config = o.config.mode === 'live' && o.config.twitch.savedLogin ? await withSavedLogin(o.config) : o.config;
  const scrub = makeScrubber(secretValues(config));
  const print = (line: string): void => {
    o.out.write(`${scrub(line)}\n`);
  };
  const logger = o.logger ?? silentLogger();

  if (config.mode !== 'live') {
    const missing = missingForLive(config);
    print('giftdrop setup checks the live configuration, but this one runs in sandbox mode.');
    if (missing.length) {
      print(
        `Missing: start the bot and fill in its setup page, run setup on a terminal to answer its questions, or set them in .env (${settingsGuide(thisInvocation())}):`,
      );
      for (const m of missing) print(`  - ${m}`);
    } else {
      print('GIFTDROP_MODE=sandbox is set: remove it (or set GIFTDROP_MODE=live) to check the live configuration.');
    }
    return { exitCode: 1, items: [] };
  }

  print(
    `giftdrop setup: checking the live configuration (Fourthwall ${config.fourthwall.apiUrl}, chat ${config.twitch.ircUrl})`,
  );
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
    report([
      {
        name: 'Basic-only operations',
        status: basicOnly ? 'warn' : 'ok',
        detail: basicOnly ?? 'Basic credentials are set',
        required: false,
      },
    ]);
    if (fw.status === 'ok') {
      report(await registerWebhook(config, client));
      report([await checkGifting(client)]);
    } else {
      // A missing public URL is worth knowing now, whatever the credentials say.
      report(
        config.publicUrl
          ? [
              {
                name: 'Webhook',
                status: 'skip',
                detail: 'needs working Fourthwall credentials (see above)',
                required: true,
              },
            ]
          : await registerWebhook(config, client),
      );
      report([
        {
          name: 'Gifting configuration',
          status: 'skip',
          detail: 'needs working Fourthwall credentials',
          required: false,
        },
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
  print(
    `${toFix.length} item(s) to fix: ${toFix.map((i) => i.name).join(', ')}. Fix them in .env and run ${giftdropCommand('setup')} again.`,
  );
  return { exitCode: 1, items };
}

async function main(): Promise<void> {
  let config = loadConfigOrExit();
  const logger = config.logLevelExplicit
    ? createLogger({ level: config.logLevel, destination: process.stderr, secrets: secretValues(config) })
    : silentLogger();
  // Nothing set up yet, on a terminal: the setup page's questions, here (a headless machine).
  let asked = false;
  if (
    config.mode === 'sandbox' &&
    !config.savedSetup?.live &&
    process.stdin.isTTY === true &&
    process.stdout.isTTY === true
  ) {
    const { askSetup } = await import('./setup-ask.js');
    if (!(await askSetup({ config, logger, input: process.stdin, output: process.stdout }))) {
      process.exitCode = 1;
      return;
    }
    config = loadConfigOrExit();
    asked = true; // the questions took the data folder's lock
  }
  // Setup registers the bot's webhook: never beside a running bot on the same data.
  if (config.mode === 'live' && !asked) {
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
