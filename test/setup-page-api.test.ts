/**
 * The setup page's API over real HTTP, against the Fourthwall and Twitch sandboxes: it answers 401
 * without the dashboard token (and to a wrong one), refuses a POST that is not JSON from its own
 * origin, checks before it saves (a wrong Fourthwall password saves nothing), never shows a saved
 * secret again, saves owner-only, refuses "Go live" while a required row is missing, and shows the
 * values `.env` / the environment set as winning over the page. The Twitch rows say what the chat
 * transport in force needs of the bot's login, and what channel points, bits and the Chat Bot badge
 * need and whether each is on, in plain words. Then the configuration: a finished
 * page's values make the next start live, `.env` values win over them value by value, and an
 * unfinished page changes nothing.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { silentLogger } from '../src/logging/index.js';
import { systemClock } from '../src/shared/clock.js';
import { SetupService, type SetupRow } from '../src/setup/setup-service.js';
import { fileSchema } from '../src/config/schema.js';
import { LoginStore, type TwitchRole } from '../src/twitch/login-store.js';
import { setupRoute } from '../src/setup/setup-routes.js';
import { makeTempDir, startLocalServers, type LocalServers } from './support/e2e-stack.js';

let servers: LocalServers;
let temp: { dir: string; cleanup: () => Promise<void> };
let server: Server;
let base: string;
let service: SetupService;
const TOKEN = 'a-dashboard-token-of-at-least-16';

beforeAll(async () => {
  servers = await startLocalServers();
  temp = await makeTempDir('giftdrop-setup-api-');
  const config = loadConfig({
    env: {
      DATA_DIR: temp.dir,
      GIFTDROP_DASHBOARD_TOKEN: TOKEN,
      FOURTHWALL_API_URL: servers.fourthwall.apiUrl,
      TWITCH_IRC_URL: servers.chat.url,
    },
    dotenv: false,
    cwd: temp.dir,
  });
  expect(config.mode).toBe('sandbox');
  service = new SetupService({ config, logger: silentLogger(), clock: systemClock, lockHeld: false });
  const route = setupRoute(service, {
    dataDir: join(temp.dir, 'sandbox'),
    dashboardToken: TOKEN,
    liveDataDir: temp.dir,
  });
  server = createServer((req, res) => {
    if (!route(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await service?.close();
  service?.release();
  await servers?.close();
  await temp?.cleanup();
});

const call = (path: string, o: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
  fetch(`${base}/setup/api/${path}`, {
    method: o.body === undefined ? 'GET' : 'POST',
    headers: {
      ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
      ...(o.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...o.headers,
    },
    ...(o.body === undefined ? {} : { body: JSON.stringify(o.body) }),
  });

describe('the setup page API', () => {
  it('the shell loads without credentials and holds no data; every API call needs the token', async () => {
    const shell = await fetch(`${base}/setup`);
    expect(shell.status).toBe(200);
    const html = await shell.text();
    expect(html).toContain('<script src="/setup/setup.js"></script>');
    expect(html).not.toContain(TOKEN);
    expect(shell.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect((await call('state')).status).toBe(401);
    expect((await call('state', { token: 'wrong-token-wrong-token' })).status).toBe(401);
    expect((await call('fourthwall', { body: { username: 'x', password: 'y' } })).status).toBe(401);
    expect((await call('state', { token: TOKEN })).status).toBe(200);
  });

  it('a POST must be JSON from the page itself', async () => {
    const form = await fetch(`${base}/setup/api/channel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'channel=evil',
    });
    expect(form.status).toBe(403);
    const cross = await call('channel', {
      token: TOKEN,
      body: { channel: 'evil' },
      headers: { origin: 'https://evil.example' },
    });
    expect(cross.status).toBe(403);
  });

  it('checks before saving, never shows a saved secret, saves owner-only, and refuses to go live while rows are missing', async () => {
    const fw = servers.fourthwall;
    const wrong = (await (
      await call('fourthwall', { token: TOKEN, body: { username: fw.username, password: 'not-the-password' } })
    ).json()) as { status: string; detail: string };
    expect(wrong.status).toBe('error');
    expect(wrong.detail).toMatch(/rejected: Fourthwall answered 401/);
    await expect(stat(join(temp.dir, 'setup.json'))).rejects.toThrow();

    const good = (await (
      await call('fourthwall', { token: TOKEN, body: { username: fw.username, password: fw.password } })
    ).json()) as { status: string };
    expect(good.status).toBe('ok');
    expect(
      (
        (await (await call('secret', { token: TOKEN, body: { secret: fw.webhookSecret } })).json()) as {
          status: string;
        }
      ).status,
    ).toBe('ok');
    expect((await stat(join(temp.dir, 'setup.json'))).mode & 0o777).toBe(0o600);
    const state = await (await call('state', { token: TOKEN })).text();
    expect(state).not.toContain(fw.password);
    expect(state).not.toContain(fw.webhookSecret);

    const apply = (await (await call('apply', { token: TOKEN, body: {} })).json()) as {
      ok: boolean;
      missing: string[];
    };
    expect(apply).toEqual({
      ok: false,
      missing: ['Twitch: the bot account', 'Your channel', 'Public address (your tunnel)'],
    });
    const saved = JSON.parse(await readFile(join(temp.dir, 'setup.json'), 'utf8')) as { live: boolean };
    expect(saved.live).toBe(false);
  });

  it('a public address that does not reach this bot is refused with the fix', async () => {
    const row = (await (
      await call('public-url', { token: TOKEN, body: { url: `${servers.fourthwall.apiUrl}` } })
    ).json()) as { status: string; detail: string };
    expect(row.status).toBe('error');
    expect(row.detail).toMatch(/answered, but not as this bot|could not be reached/);
  });
});

describe('the configuration from a finished setup page', () => {
  it('makes the next start live; .env and the environment win value by value; an unfinished page changes nothing', async () => {
    const dir = (await makeTempDir('giftdrop-setup-config-')).dir;
    const data = join(dir, 'data'); // DATA_DIR's default, beside the .env
    await mkdir(data, { mode: 0o700 });
    const page = {
      version: 1,
      live: false,
      botLogin: true,
      savedAt: new Date().toISOString(),
      env: {
        TWITCH_CHANNEL: 'mychannel',
        TWITCH_USERNAME: 'mybot',
        FOURTHWALL_USERNAME: 'api-user',
        FOURTHWALL_PASSWORD: 'pw-from-page',
        FOURTHWALL_WEBHOOK_SECRET: 'secret-from-page',
        GIFTDROP_PUBLIC_URL: 'https://my.tunnel.example',
      },
    };
    await writeFile(join(data, 'setup.json'), JSON.stringify(page), { mode: 0o600 });
    expect(loadConfig({ env: {}, cwd: dir, dotenv: false }).mode).toBe('sandbox');
    await writeFile(join(data, 'setup.json'), JSON.stringify({ ...page, live: true }), { mode: 0o600 });
    const live = loadConfig({ env: {}, cwd: dir, dotenv: false });
    expect(live.mode).toBe('live');
    expect(live.twitch).toMatchObject({ channel: 'mychannel', username: 'mybot', savedLogin: true });
    expect(live.twitch.token).toBeUndefined();
    expect(live.publicUrl).toBe('https://my.tunnel.example');
    expect(live.fourthwall.auth).toEqual({ kind: 'basic', username: 'api-user', password: 'pw-from-page' });
    await writeFile(join(dir, '.env'), 'GIFTDROP_PUBLIC_URL=https://from-dotenv.example\n');
    const mixed = loadConfig({ env: { TWITCH_CHANNEL: 'envchannel' }, cwd: dir });
    expect(mixed.publicUrl).toBe('https://from-dotenv.example');
    expect(mixed.twitch.channel).toBe('envchannel');
    expect(mixed.savedSetup?.overridden.sort()).toEqual(['GIFTDROP_PUBLIC_URL', 'TWITCH_CHANNEL']);
  });
});

describe("the setup page's Twitch rows", () => {
  /** A setup service over its own data folder, with these logins saved (as the page's device logins save them) and these settings. */
  async function serviceWith(
    logins: Partial<Record<TwitchRole, { login: string; scopes: string[]; clientId?: string }>>,
    settings: Record<string, unknown>,
  ) {
    const t = await makeTempDir('giftdrop-setup-rows-');
    const store = await LoginStore.open(t.dir);
    for (const [role, l] of Object.entries(logins) as [
      TwitchRole,
      { login: string; scopes: string[]; clientId?: string },
    ][]) {
      await store.save(role, {
        login: l.login,
        userId: '4242',
        clientId: l.clientId ?? 'publicapp123',
        scopes: l.scopes,
        accessToken: `access-${role}`,
        refreshToken: `refresh-${role}`,
        expiresAt: Date.now() + 3_600_000,
        savedAt: new Date().toISOString(),
      });
    }
    await store.close();
    const config = loadConfig({
      env: { DATA_DIR: t.dir, TWITCH_IRC_URL: servers.chat.url },
      dotenv: false,
      cwd: t.dir,
    });
    const s = new SetupService({
      config: { ...config, settings: fileSchema.parse(settings) },
      logger: silentLogger(),
      clock: systemClock,
      lockHeld: true,
    });
    await s.loginStore();
    return {
      row: (id: SetupRow['id']) => s.state().rows.find((r) => r.id === id)!,
      async close() {
        await s.close();
        await t.cleanup();
      },
    };
  }

  it('with no broadcaster login: channel points, bits and the badge are off, each saying what it needs in plain words', async () => {
    const s = await serviceWith({ bot: { login: 'mybot', scopes: ['chat:read', 'chat:edit'] } }, {});
    try {
      const cp = s.row('channel-points');
      expect(cp.status).toBe('off');
      expect(cp.detail).toContain(
        'Channel points need an Affiliate or Partner channel (Twitch refuses the reward otherwise)',
      );
      expect(cp.detail).toContain(
        "the broadcaster's login allowing giftdrop to create and fulfil a channel point reward for entries (channel:manage:redemptions)",
      );
      expect(cp.detail).toMatch(
        /To turn it on: set "channelPoints": \{ "enabled": true \} in the settings file \(config\/giftdrop\.json\), then apply; log the broadcaster in \(the row above\)/,
      );
      const bits = s.row('bits');
      expect(bits.status).toBe('off');
      expect(bits.detail).toContain('see Bits cheered in the channel (bits:read)');
      const badge = s.row('bot-badge');
      expect(badge.status).toBe('off');
      expect(badge.detail).toContain(
        'your own Twitch application with its client secret (TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET in .env: a Public application such as the one built into giftdrop has no secret)',
      );
      expect(badge.detail).toContain('let the bot appear in your chat with the Chat Bot badge (channel:bot)');
      expect(badge.detail).toContain('/mod mybot');
      // IRC, the default transport: the bot's row says which of its scopes are in use.
      const bot = s.row('bot');
      expect(bot.detail).toContain(
        "The bot uses chat over IRC (the settings' chat.transport), which needs chat:read chat:edit.",
      );
      expect(bot.scopes).toContainEqual({
        scope: 'chat:read',
        words: 'read your chat (to see !enter) (chat over IRC: in use)',
      });
      expect(bot.scopes).toContainEqual({
        scope: 'user:read:chat',
        words: "read your chat through Twitch's API (chat over EventSub: if you switch chat.transport)",
      });
    } finally {
      await s.close();
    }
  });

  it('with the broadcaster logged in and the settings on: ready, except what the login lacks; EventSub chat with a bot login made for IRC is to fix', async () => {
    const s = await serviceWith(
      {
        bot: { login: 'mybot', scopes: ['chat:read', 'chat:edit'] },
        broadcaster: { login: 'mychannel', scopes: ['channel:manage:redemptions', 'channel:read:redemptions'] },
      },
      { channelPoints: { enabled: true }, bits: { enabled: true }, chat: { transport: 'eventsub' } },
    );
    try {
      expect(s.row('channel-points')).toMatchObject({
        status: 'ok',
        detail: expect.stringMatching(/^ready: nothing is missing here/),
      });
      expect(s.row('bits')).toMatchObject({
        status: 'off',
        detail: expect.stringMatching(/To turn it on: log the broadcaster in again: that login lacks bits:read\.$/),
      });
      const bot = s.row('bot');
      expect(bot.status).toBe('error');
      expect(bot.detail).toBe(
        "logged in as mybot, but that login lacks user:read:chat user:write:chat. The bot uses chat over EventSub (the settings' chat.transport), which needs user:read:chat user:write:chat. Log in again.",
      );
      expect(s.row('bot-badge').detail).toMatch(
        /To turn it on: set TWITCH_CLIENT_ID and TWITCH_CLIENT_SECRET of your own application in \.env; log the bot in again: that login lacks user:bot\.$/,
      );
    } finally {
      await s.close();
    }
  });
});

describe('Go live from the demo', () => {
  it("answers the page (with the live bot's token) before the restart closes the demo's listener, and the claim row names the address's own redirect URL", async () => {
    const t = await makeTempDir('giftdrop-setup-golive-');
    const config = loadConfig({
      env: { DATA_DIR: t.dir, FOURTHWALL_API_URL: servers.fourthwall.apiUrl, TWITCH_IRC_URL: servers.chat.url },
      dotenv: false,
      cwd: t.dir,
    });
    const s = new SetupService({ config, logger: silentLogger(), clock: systemClock, lockHeld: false });
    const route = setupRoute(s, { dataDir: join(t.dir, 'sandbox'), liveDataDir: t.dir });
    // The demo's listener: the setup page and the public address check on one server.
    const demo = createServer((req, res) => {
      if (!s.publicRoute(req, res) && !route(req, res)) res.writeHead(404).end();
    });
    await new Promise<void>((r) => demo.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(demo.address() as AddressInfo).port}`;
    try {
      await mkdir(join(t.dir, 'sandbox'), { mode: 0o700 });
      expect((await fetch(`${url}/setup`)).status).toBe(200); // the route reads (makes) the demo's token on first use
      const pageToken = (await readFile(join(t.dir, 'sandbox', 'dashboard.token'), 'utf8')).trim();
      const post = (action: string, body: unknown) =>
        fetch(`${url}/setup/api/${action}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${pageToken}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const fw = servers.fourthwall;
      expect(
        ((await (await post('fourthwall', { username: fw.username, password: fw.password })).json()) as SetupRow)
          .status,
      ).toBe('ok');
      expect(((await (await post('secret', { secret: fw.webhookSecret })).json()) as SetupRow).status).toBe('ok');
      expect(((await (await post('channel', { channel: servers.chat.channel })).json()) as SetupRow).status).toBe('ok');
      expect(((await (await post('public-url', { url })).json()) as SetupRow).status).toBe('ok');
      const store = await s.loginStore();
      await store.save('bot', {
        login: servers.chat.botLogin,
        userId: '4242',
        clientId: 'publicapp123',
        scopes: ['chat:read', 'chat:edit', 'user:manage:whispers'],
        accessToken: 'access-bot',
        refreshToken: 'refresh-bot',
        expiresAt: Date.now() + 3_600_000,
        savedAt: new Date().toISOString(),
      });
      const claim = s.state().rows.find((r) => r.id === 'claim-page')!;
      expect(claim.status).toBe('off');
      expect(claim.detail).toContain(`OAuth Redirect URL ${url}/claim/callback`);
      expect(s.state().rows.find((r) => r.id === 'whispers')).toMatchObject({ status: 'ok' });

      // Going live stops the demo at once, closing every connection of its listener (as fast as a stop can be).
      void s.applied().then(() => demo.closeAllConnections());
      const res = await post('apply', {});
      expect(res.status).toBe(200);
      const answer = (await res.json()) as { ok: boolean; token?: string };
      expect(answer.ok).toBe(true);
      expect(answer.token).toBe((await readFile(join(t.dir, 'dashboard.token'), 'utf8')).trim());
    } finally {
      await new Promise((r) => demo.close(r));
      await s.close();
      s.release();
      await t.cleanup().catch(() => undefined); // (a failing run may still be writing the token file)
    }
  });
});
