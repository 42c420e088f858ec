/**
 * A new tunnel address costs nothing: a live bot started with GIFTDROP_PUBLIC_URL brings Fourthwall's
 * ONE webhook configuration to that address itself, without `setup`.
 *
 * Real parts over real sockets: the Fourthwall sandbox (its URI rules), the Twitch chat sandbox,
 * the bot in live mode, and two TCP forwarders standing for two tunnel addresses (an old one and a
 * new one) in front of the bot's HTTP port. Start 1 registers the webhook at tunnel A; the bot is
 * stopped; start 2 with tunnel B leaves exactly one configuration, the same one, at B (updated, not
 * duplicated), and a real gift purchase then reaches the bot THROUGH tunnel B (the draw opens). A
 * third start with an address Fourthwall refuses (a bare IP, as the real one refuses it) changes
 * nothing and is one /healthz problem naming the fix.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../src/config/index.js';
import { loadConfig } from '../src/config/index.js';
import { fileSchema } from '../src/config/schema.js';
import { startBot, type Bot } from '../src/app/bot.js';
import { configForLocal } from '../src/local/local-stack.js';
import { silentLogger } from '../src/logging/index.js';
import {
  freePort,
  makeTempDir,
  setShopLive,
  startLocalServers,
  waitUntil,
  type LocalServers,
} from './support/e2e-stack.js';
import { startTcpForwarder, type TcpForwarder } from './support/tcp-forwarder.js';

let servers: LocalServers;
let temp: { dir: string; cleanup: () => Promise<void> };
let port: number;
let tunnelA: TcpForwarder;
let tunnelB: TcpForwarder;

beforeAll(async () => {
  servers = await startLocalServers({ fourthwall: { drawDurationSeconds: 30 } });
  temp = await makeTempDir('giftdrop-webhook-address-');
  port = await freePort();
  tunnelA = await startTcpForwarder(port);
  tunnelB = await startTcpForwarder(port);
});
afterAll(async () => {
  await tunnelA?.close();
  await tunnelB?.close();
  await servers?.close();
  await temp?.cleanup();
});

function liveConfig(publicUrl: string): Config {
  const base = loadConfig({
    env: { DATA_DIR: temp.dir, HTTP_PORT: String(port), GIFTDROP_LOCAL_PORT: '0' },
    dotenv: false,
    cwd: temp.dir,
  });
  const local = configForLocal({ ...base, settings: fileSchema.parse({}) }, servers.fourthwall, servers.chat);
  return { ...local, mode: 'live', dataDir: temp.dir, publicUrl };
}

async function configurations(): Promise<{ id: string; url: string }[]> {
  const fw = servers.fourthwall;
  const res = await fetch(`${fw.apiUrl}/webhooks`, {
    headers: { authorization: `Basic ${Buffer.from(`${fw.username}:${fw.password}`).toString('base64')}` },
  });
  return ((await res.json()) as { results: { id: string; url: string }[] }).results;
}

async function run(
  publicUrl: string,
  during?: (bot: Bot) => Promise<void>,
): Promise<Awaited<Bot['webhookRegistered']>> {
  const bot = await startBot({
    config: liveConfig(publicUrl),
    logger: silentLogger(),
    operator: { notify: () => undefined },
    events: { pollIntervalMs: 0 },
  });
  try {
    const outcome = await bot.webhookRegistered;
    await during?.(bot);
    return outcome;
  } finally {
    await bot.stop('test');
  }
}

describe('a new GIFTDROP_PUBLIC_URL at start', () => {
  it('updates the one webhook configuration to the new address (no duplicate, no setup), and events arrive through it', async () => {
    const a = `http://127.0.0.1:${tunnelA.port}`;
    const b = `http://localhost:${tunnelB.port}`;
    expect(await configurations()).toEqual([]);

    const first = await run(a);
    expect(first).toMatchObject({ action: 'created', url: `${a}/webhooks/fourthwall` });
    expect((await configurations()).map((w) => w.url)).toEqual([`${a}/webhooks/fourthwall`]);

    const second = await run(b, async (bot) => {
      // A real purchase: Fourthwall delivers GIFT_DRAW_STARTED to the configured address, tunnel B.
      setShopLive(servers);
      const { draw } = servers.fourthwall.control.simulateGiftPurchase({ quantity: 1 });
      await waitUntil(
        () => bot.engine.openDrawCount() === 1,
        15_000,
        'the draw opened by the webhook that came through tunnel B',
      );
      const delivered = servers.fourthwall.control.deliveries.filter((d) => d.url.startsWith(b));
      expect(delivered.length).toBeGreaterThan(0);
      expect(String(draw['id'])).toMatch(/^gdr_/);
    });
    expect(second).toMatchObject({
      action: 'updated',
      id: first!.id,
      previousUrl: `${a}/webhooks/fourthwall`,
      url: `${b}/webhooks/fourthwall`,
    });
    const after = await configurations();
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ id: first!.id, url: `${b}/webhooks/fourthwall` });

    // The same address again: nothing changes.
    expect(await run(b)).toMatchObject({ action: 'unchanged', id: first!.id });
    expect(await configurations()).toHaveLength(1);
  }, 90_000);

  it('an address Fourthwall refuses changes nothing and is one /healthz problem with the fix', async () => {
    const before = await configurations();
    let problems: string[] | undefined;
    const outcome = await run('https://203.0.113.7', async (bot) => {
      problems = bot.health().problems;
    });
    expect(outcome).toBeUndefined();
    expect(problems).toEqual([
      expect.stringMatching(
        /^Fourthwall refuses webhook URLs on IP addresses: use the https:\/\/ host name of your tunnel \(GIFTDROP_PUBLIC_URL=https:\/\/203\.0\.113\.7, WEBHOOK_URI_IP_NOT_ALLOWED\)$/,
      ),
    ]);
    expect(await configurations()).toEqual(before);
  }, 60_000);
});
