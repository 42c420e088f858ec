/**
 * A live bot whose Twitch login came from the setup page (device code, saved in DATA_DIR) and
 * that Twitch then ends (the user disconnects the application): the bot renews it once, is
 * refused, and says so ONCE (one error line in the log, one /healthz and dashboard problem naming
 * the setup page) while it keeps running; chat reconnect attempts do not turn into refresh calls
 * (no retry storm). Real parts: the Twitch chat sandbox (its device code flow and revocation), the
 * Fourthwall sandbox, the bot in live mode over real sockets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config/index.js';
import { fileSchema } from '../src/config/schema.js';
import { startBot } from '../src/app/bot.js';
import { configForLocal } from '../src/local/local-stack.js';
import { createLogger } from '../src/logging/index.js';
import { LoginStore } from '../src/twitch/login-store.js';
import { saveDeviceLogin } from './support/device-login.js';
import { LogCapture } from './support/log-capture.js';
import { makeTempDir, startLocalServers, waitUntil, type LocalServers } from './support/e2e-stack.js';

const PUBLIC = 'revokedpublicapp';
let servers: LocalServers;
let temp: { dir: string; cleanup: () => Promise<void> };

beforeAll(async () => {
  servers = await startLocalServers({ chat: { botIsMod: true, publicClientId: PUBLIC, deviceIntervalSeconds: 1 } });
  temp = await makeTempDir('giftdrop-revoked-');
});
afterAll(async () => {
  await servers?.close();
  await temp?.cleanup();
});

describe('a saved Twitch login that Twitch ends', () => {
  it('is one log line and one /healthz problem, the bot stays up, and chat reconnects never become refresh calls', async () => {
    const { chat } = servers;
    // The setup page's device login, saved where the bot reads it.
    const store = await LoginStore.open(temp.dir);
    const r = await saveDeviceLogin(chat, store, {
      role: 'bot',
      login: chat.botLogin,
      clientId: PUBLIC,
      scopes: ['chat:read', 'chat:edit'],
    });

    const base = loadConfig({
      env: { DATA_DIR: temp.dir, HTTP_PORT: '0', GIFTDROP_LOCAL_PORT: '0' },
      dotenv: false,
      cwd: temp.dir,
    });
    const local = configForLocal({ ...base, settings: fileSchema.parse({}) }, servers.fourthwall, chat);
    const config: Config = {
      ...local,
      mode: 'live',
      dataDir: temp.dir,
      twitch: {
        ...local.twitch,
        token: undefined,
        refreshToken: undefined,
        clientSecret: undefined,
        username: undefined,
        clientId: PUBLIC,
        savedLogin: true,
      },
    };
    const logs = new LogCapture();
    const bot = await startBot({
      config,
      logger: createLogger({ level: 'info', destination: logs }),
      loginStore: store,
      operator: { notify: () => undefined },
      events: { pollIntervalMs: 0 },
    });
    try {
      expect(bot.health()).toMatchObject({ chat: 'connected' });
      let tokenCalls = 0;
      chat.on('oauth', (e) => {
        if (e.endpoint === 'token') tokenCalls++;
      });
      chat.revokeLogin(chat.botLogin);
      chat.dropConnections();
      await waitUntil(() => (bot.health().problems ?? []).length > 0, 30_000, 'the problem on /healthz');
      // Chat keeps failing to log in for a while: still one refresh call, one line, one problem.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(tokenCalls).toBe(1);
      const problems = bot.health().problems!;
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(
        /^Twitch ended the bot's Twitch login \(giftdrop_bot\): log in again with the bot account on the setup page/,
      );
      const entries = logs.lines.map((l) => JSON.parse(l) as { level: number; msg: string });
      const refusals = entries.filter((l) => l.level >= 50 && /refused to refresh/i.test(l.msg));
      expect(refusals).toHaveLength(1);
      expect(logs.lines.join('\n')).not.toContain(r.tokens.refreshToken);
      // Still serving: the webhooks and the pages answer.
      const health = await fetch(`${bot.http.url}/healthz`);
      expect(health.status).toBe(200);
      expect(((await health.json()) as { problems?: string[] }).problems).toEqual(problems);
    } finally {
      await bot.stop('test');
      await store.close();
    }
  }, 90_000);
});
