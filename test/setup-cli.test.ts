/**
 * `npm run setup` against a real local Fourthwall sandbox and chat server: the spawned script
 * registers exactly one webhook configuration however often it runs, and a wrong password or a
 * wrong Twitch token give a clear message and a non-zero exit. runSetup (the same logic, in
 * process) for the cases that need the sandbox in a particular state, and the chat check of the
 * transport in force: with `chat.transport: "eventsub"` the token is checked for EventSub's scopes
 * and the channel's chat is really subscribed over the sandbox EventSub server (no IRC login).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileSchema } from '../src/config/schema.js';
import { loadConfig } from '../src/config/index.js';
import { FourthwallClient } from '../src/fourthwall/index.js';
import { startChatServer, type ChatServer } from '../src/sandbox/chat/index.js';
import { startFourthwallSandbox, type FourthwallSandbox } from '../src/sandbox/fourthwall/index.js';
import { BOT_WEBHOOK_TYPES } from '../src/local/local-stack.js';
import { runSetup } from '../src/cli/setup.js';
import { webhookTypesFor } from '../src/shop/webhook-types.js';
import { runProcess, setupEnv } from './support/sandbox-mode-spawn.js';
import { startLocalChat } from '../src/local/local-stack.js';
import { silentLogger } from '../src/logging/index.js';

const PUBLIC_URL = 'http://127.0.0.1:45678';
const HOOK_URL = `${PUBLIC_URL}/webhooks/fourthwall`;

let fw: FourthwallSandbox;
let chat: ChatServer;
let dir: string;
let client: FourthwallClient;

beforeEach(async () => {
  fw = await startFourthwallSandbox();
  chat = await startChatServer();
  dir = mkdtempSync(join(tmpdir(), 'giftdrop-setup-'));
  client = new FourthwallClient({
    apiUrl: fw.apiUrl,
    auth: { basic: { username: fw.username, password: fw.password } },
  });
});

afterEach(async () => {
  await client.close();
  await chat.close();
  await fw.close();
  rmSync(dir, { recursive: true, force: true });
});

function configFor(env: Record<string, string>) {
  return loadConfig({ env, dotenv: false, cwd: dir });
}

function capture() {
  let text = '';
  return { out: { write: (t: string) => (text += t) }, text: () => text };
}

describe('npm run setup (spawned)', () => {
  it('registers one webhook with the bot types; a second run changes nothing', async () => {
    const env = setupEnv(fw, chat, join(dir, 'data'), PUBLIC_URL);
    const first = await runProcess('npm', ['run', '--silent', 'setup'], env);
    expect(first.stdout).toMatch(/ok\s+Fourthwall API user: shop "Giftdrop Demo Shop"/);
    expect(first.stdout).toMatch(/ok\s+Twitch chat login: logged in as giftdrop_bot and joined #giftdrop_demo/);
    expect(first.stdout).toMatch(new RegExp(`ok\\s+Webhook: registered ${HOOK_URL}`));
    expect(first.stdout).toMatch(/ok\s+Gifting configuration: gifting enabled, platform OPEN_API/);
    expect(first.stdout).toContain('All required checks passed');
    expect(first.code).toBe(0);

    const second = await runProcess('npm', ['run', '--silent', 'setup'], env);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/already registered .*nothing changed/);

    const hooks = (await client.listWebhooks()).results;
    expect(hooks).toHaveLength(1);
    expect(hooks[0]!.url).toBe(HOOK_URL);
    // The giveaway types plus what the default settings' shop features need (order and donation alerts).
    expect([...hooks[0]!.allowedTypes].sort()).toEqual(webhookTypesFor(BOT_WEBHOOK_TYPES, fileSchema.parse({})).sort());
    for (const secret of [fw.password, chat.token, fw.webhookSecret]) {
      expect(first.stdout + first.stderr + second.stdout + second.stderr).not.toContain(secret);
    }
  }, 60_000);

  it('a wrong Fourthwall password: a clear message, non-zero exit, no webhook created', async () => {
    const env = { ...setupEnv(fw, chat, join(dir, 'data'), PUBLIC_URL), FOURTHWALL_PASSWORD: 'not-the-password' };
    const r = await runProcess('npm', ['run', '--silent', 'setup'], env);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toMatch(
      /FIX\s+Fourthwall API user: FOURTHWALL_USERNAME\/FOURTHWALL_PASSWORD rejected: Fourthwall answered 401/,
    );
    expect(r.stdout).toMatch(/skip\s+Webhook: needs working Fourthwall credentials/);
    expect(r.stdout).not.toContain('not-the-password');
    expect((await client.listWebhooks()).results).toHaveLength(0);
  }, 60_000);

  it('a wrong Twitch token: a clear message and a non-zero exit', async () => {
    const env = { ...setupEnv(fw, chat, join(dir, 'data'), PUBLIC_URL), TWITCH_TOKEN: 'oauth:wrongtoken123456' };
    const r = await runProcess('npm', ['run', '--silent', 'setup'], env);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toMatch(
      /FIX\s+Twitch chat login: TWITCH_TOKEN rejected for TWITCH_USERNAME=giftdrop_bot: .*chat:read and chat:edit/,
    );
    expect(r.stdout).toMatch(/ok\s+Fourthwall API user/);
    expect(r.stdout).not.toContain('wrongtoken123456');
  }, 60_000);
});

describe('runSetup', () => {
  it('counts only failed checks as items to fix, and names a missing public URL even when Fourthwall fails', async () => {
    const env: Record<string, string> = {
      ...setupEnv(fw, chat, join(dir, 'data'), PUBLIC_URL),
      FOURTHWALL_PASSWORD: 'not-the-password',
    };
    delete env.GIFTDROP_PUBLIC_URL;
    const io = capture();
    const res = await runSetup({ config: configFor(env), out: io.out });
    expect(res.exitCode).toBe(1);
    expect(io.text()).toMatch(/FIX\s+Webhook: GIFTDROP_PUBLIC_URL is not set/);
    expect(io.text()).toMatch(/skip\s+Gifting configuration/);
    expect(io.text()).toContain('2 item(s) to fix: Fourthwall API user, Webhook.');

    const withUrl = capture();
    const again = await runSetup({ config: configFor({ ...env, GIFTDROP_PUBLIC_URL: PUBLIC_URL }), out: withUrl.out });
    expect(again.exitCode).toBe(1);
    expect(withUrl.text()).toMatch(/skip\s+Webhook: needs working Fourthwall credentials/);
    expect(withUrl.text()).toContain('1 item(s) to fix: Fourthwall API user.');
  }, 60_000);

  it('updates an existing configuration with the same URL that lacks types, without a duplicate', async () => {
    const pre = await client.createWebhook({ url: HOOK_URL, allowedTypes: ['GIFT_PURCHASE', 'ORDER_PLACED'] });
    const io = capture();
    const res = await runSetup({ config: configFor(setupEnv(fw, chat, join(dir, 'data'), PUBLIC_URL)), out: io.out });
    expect(res.exitCode).toBe(0);
    expect(io.text()).toMatch(/updated: now also receives GIFT_DRAW_STARTED, GIFT_DRAW_ENDED/);
    const hooks = (await client.listWebhooks()).results;
    expect(hooks.map((h) => h.id)).toEqual([pre.id]);
    // The default settings announce orders and donations, so those are subscribed too.
    expect([...hooks[0]!.allowedTypes].sort()).toEqual([
      'DONATION',
      'GIFT_DRAW_ENDED',
      'GIFT_DRAW_STARTED',
      'GIFT_PURCHASE',
      'ORDER_PLACED',
    ]);
  });

  it('subscribes only the types the enabled features need: turning the shop alerts off drops their types (ORDER_PLACED stays: it tells the bot a prize was redeemed)', async () => {
    const pre = await client.createWebhook({
      url: HOOK_URL,
      allowedTypes: [
        'GIFT_DRAW_STARTED',
        'GIFT_DRAW_ENDED',
        'GIFT_PURCHASE',
        'ORDER_PLACED',
        'DONATION',
        'PRODUCT_UPDATED',
      ],
    });
    const config = configFor(setupEnv(fw, chat, join(dir, 'data'), PUBLIC_URL));
    const settings = fileSchema.parse({
      alerts: { order: { enabled: false }, donation: { enabled: false }, giftPurchase: { enabled: false } },
      promo: { autoAnnounce: true },
    });
    const io = capture();
    const res = await runSetup({ config: { ...config, settings }, out: io.out });
    expect(res.exitCode).toBe(0);
    expect(io.text()).toMatch(
      /now also receives PROMOTION_STATUS_CHANGED; no longer receives DONATION, PRODUCT_UPDATED/,
    );
    const hooks = (await client.listWebhooks()).results;
    expect(hooks.map((h) => h.id)).toEqual([pre.id]);
    expect([...hooks[0]!.allowedTypes].sort()).toEqual([
      'GIFT_DRAW_ENDED',
      'GIFT_DRAW_STARTED',
      'GIFT_PURCHASE',
      'ORDER_PLACED',
      'PROMOTION_STATUS_CHANGED',
    ]);
  });

  it('warns when another integration owns the gifting slot, and still passes', async () => {
    const put = await fetch(`${fw.apiUrl}/gifting/config`, {
      method: 'PUT',
      headers: {
        authorization: `Basic ${Buffer.from(`${fw.username}:${fw.password}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ platform: 'STREAMELEMENTS' }),
    });
    expect(put.status).toBe(200);
    const io = capture();
    const res = await runSetup({ config: configFor(setupEnv(fw, chat, join(dir, 'data'), PUBLIC_URL)), out: io.out });
    expect(res.exitCode).toBe(0);
    const gifting = res.items.find((i) => i.name === 'Gifting configuration');
    expect(gifting?.status).toBe('warn');
    expect(gifting?.detail).toMatch(/owned by STREAMELEMENTS/);
  });

  it('reports a bot that is not a moderator as a warning with the /mod command', async () => {
    const io = capture();
    const res = await runSetup({ config: configFor(setupEnv(fw, chat, join(dir, 'data'), PUBLIC_URL)), out: io.out });
    expect(res.exitCode).toBe(0);
    expect(io.text()).toMatch(
      /warn\s+Bot is a moderator: giftdrop_bot is not a moderator of #giftdrop_demo: type "\/mod giftdrop_bot"/,
    );
  });

  it('without GIFTDROP_PUBLIC_URL: the webhook item says how to set it, exit 1', async () => {
    const env = setupEnv(fw, chat, join(dir, 'data'), PUBLIC_URL);
    delete (env as Record<string, string | undefined>).GIFTDROP_PUBLIC_URL;
    const io = capture();
    const res = await runSetup({ config: configFor(env), out: io.out });
    expect(res.exitCode).toBe(1);
    expect(io.text()).toMatch(/FIX\s+Webhook: GIFTDROP_PUBLIC_URL is not set: start an HTTPS tunnel/);
    expect((await client.listWebhooks()).results).toHaveLength(0);
  });

  it('a config in sandbox mode (no credentials): says what is missing, exit 1', async () => {
    const io = capture();
    const res = await runSetup({ config: configFor({ DATA_DIR: join(dir, 'data') }), out: io.out });
    expect(res.exitCode).toBe(1);
    for (const name of [
      'TWITCH_CHANNEL',
      'TWITCH_USERNAME',
      'TWITCH_TOKEN',
      'FOURTHWALL_USERNAME',
      'FOURTHWALL_WEBHOOK_SECRET',
      'GIFTDROP_PUBLIC_URL',
    ]) {
      expect(io.text()).toContain(name);
    }
  });

  it('OAuth credentials only: reports that the Basic-only operations may be refused', async () => {
    const env = setupEnv(fw, chat, join(dir, 'data'), PUBLIC_URL);
    delete (env as Record<string, string | undefined>).FOURTHWALL_USERNAME;
    delete (env as Record<string, string | undefined>).FOURTHWALL_PASSWORD;
    const io = capture();
    await runSetup({ config: configFor({ ...env, FOURTHWALL_ACCESS_TOKEN: 'not-a-real-token' }), out: io.out });
    expect(io.text()).toMatch(
      /warn\s+Basic-only operations: .*PUT \/gifting\/draw\/\{id\}\/finish.*FOURTHWALL_USERNAME/,
    );
    expect(io.text()).not.toContain('not-a-real-token');
    const basicIo = capture();
    await runSetup({ config: configFor(setupEnv(fw, chat, join(dir, 'data'), PUBLIC_URL)), out: basicIo.out });
    expect(basicIo.text()).toMatch(/ok\s+Basic-only operations: Basic credentials are set/);
  });
});

describe('runSetup with chat over EventSub (chat.transport "eventsub")', () => {
  /** The chat sandbox with its Helix and EventSub server; the bot's token has `scopes`. */
  async function eventSubWorld(scopes: string[]) {
    const local = await startLocalChat({ logger: silentLogger(), chat: { botIsMod: true, scopes } });
    const env = {
      ...setupEnv(fw, local.chatServer, join(dir, 'data'), PUBLIC_URL),
      TWITCH_CLIENT_ID: local.chatServer.clientId,
      TWITCH_EVENTSUB_URL: local.twitch.eventSub.url,
    };
    const config = configFor(env);
    let ircConnections = 0;
    local.chatServer.on('connection', () => ircConnections++);
    return {
      local,
      ircConnections: () => ircConnections,
      config: { ...config, settings: fileSchema.parse({ chat: { transport: 'eventsub' } }) },
      async close() {
        await local.twitch.close();
        await local.chatServer.close();
      },
    };
  }

  it("checks EventSub's scopes, not IRC's: a token with only chat:read chat:edit is refused with what it lacks", async () => {
    const w = await eventSubWorld(['chat:read', 'chat:edit']);
    try {
      const io = capture();
      const res = await runSetup({ config: w.config, out: io.out });
      expect(res.exitCode).toBe(1);
      expect(io.text()).toMatch(
        /FIX\s+Twitch chat login: the bot's token lacks user:read:chat user:write:chat, which chat over EventSub needs \(it has IRC's chat:read chat:edit: "transport": "irc" would work with it\)/,
      );
      expect(w.ircConnections()).toBe(0); // no IRC login was tried
      expect(io.text()).not.toContain(w.local.chatServer.token);
    } finally {
      await w.close();
    }
  }, 60_000);

  it("a token with EventSub's scopes only: the channel's chat is subscribed over EventSub for real, and every check passes", async () => {
    const w = await eventSubWorld(['user:read:chat', 'user:write:chat']);
    try {
      const io = capture();
      const res = await runSetup({ config: w.config, out: io.out, chatTimeoutMs: 10_000 });
      expect(io.text()).toMatch(
        /ok\s+Twitch chat login: giftdrop_bot's token has user:read:chat user:write:chat, and Twitch delivers #giftdrop_demo's chat to it over EventSub/,
      );
      expect(res.exitCode).toBe(0);
      expect(w.local.twitch.eventSub.connections).toBe(1);
      expect(w.ircConnections()).toBe(0);
    } finally {
      await w.close();
    }
  }, 60_000);
});
