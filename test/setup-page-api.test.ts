/**
 * The setup page's API over real HTTP, against the Fourthwall and Twitch sandboxes: it answers 401
 * without the dashboard token (and to a wrong one), refuses a POST that is not JSON from its own
 * origin, checks before it saves (a wrong Fourthwall password saves nothing), never shows a saved
 * secret again, saves owner-only, refuses "Go live" while a required row is missing, and shows the
 * values `.env` / the environment set as winning over the page. Then the configuration: a finished
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
import { SetupService } from '../src/setup/setup-service.js';
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
    env: { DATA_DIR: temp.dir, GIFTDROP_DASHBOARD_TOKEN: TOKEN, FOURTHWALL_API_URL: servers.fourthwall.apiUrl, TWITCH_IRC_URL: servers.chat.url },
    dotenv: false,
    cwd: temp.dir,
  });
  expect(config.mode).toBe('sandbox');
  service = new SetupService({ config, logger: silentLogger(), clock: systemClock, lockHeld: false });
  const route = setupRoute(service, { dataDir: join(temp.dir, 'sandbox'), dashboardToken: TOKEN, liveDataDir: temp.dir });
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
    headers: { ...(o.token ? { authorization: `Bearer ${o.token}` } : {}), ...(o.body === undefined ? {} : { 'content-type': 'application/json' }), ...o.headers },
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
    const form = await fetch(`${base}/setup/api/channel`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-www-form-urlencoded' }, body: 'channel=evil' });
    expect(form.status).toBe(403);
    const cross = await call('channel', { token: TOKEN, body: { channel: 'evil' }, headers: { origin: 'https://evil.example' } });
    expect(cross.status).toBe(403);
  });

  it('checks before saving, never shows a saved secret, saves owner-only, and refuses to go live while rows are missing', async () => {
    const fw = servers.fourthwall;
    const wrong = (await (await call('fourthwall', { token: TOKEN, body: { username: fw.username, password: 'not-the-password' } })).json()) as { status: string; detail: string };
    expect(wrong.status).toBe('error');
    expect(wrong.detail).toMatch(/rejected: Fourthwall answered 401/);
    await expect(stat(join(temp.dir, 'setup.json'))).rejects.toThrow();

    const good = (await (await call('fourthwall', { token: TOKEN, body: { username: fw.username, password: fw.password } })).json()) as { status: string };
    expect(good.status).toBe('ok');
    expect(((await (await call('secret', { token: TOKEN, body: { secret: fw.webhookSecret } })).json()) as { status: string }).status).toBe('ok');
    expect((await stat(join(temp.dir, 'setup.json'))).mode & 0o777).toBe(0o600);
    const state = await (await call('state', { token: TOKEN })).text();
    expect(state).not.toContain(fw.password);
    expect(state).not.toContain(fw.webhookSecret);

    const apply = (await (await call('apply', { token: TOKEN, body: {} })).json()) as { ok: boolean; missing: string[] };
    expect(apply).toEqual({ ok: false, missing: ['Twitch: the bot account', 'Your channel', 'Public address (your tunnel)'] });
    const saved = JSON.parse(await readFile(join(temp.dir, 'setup.json'), 'utf8')) as { live: boolean };
    expect(saved.live).toBe(false);
  });

  it('a public address that does not reach this bot is refused with the fix', async () => {
    const row = (await (await call('public-url', { token: TOKEN, body: { url: `${servers.fourthwall.apiUrl}` } })).json()) as { status: string; detail: string };
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
      env: { TWITCH_CHANNEL: 'mychannel', TWITCH_USERNAME: 'mybot', FOURTHWALL_USERNAME: 'api-user', FOURTHWALL_PASSWORD: 'pw-from-page', FOURTHWALL_WEBHOOK_SECRET: 'secret-from-page', GIFTDROP_PUBLIC_URL: 'https://my.tunnel.example' },
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
