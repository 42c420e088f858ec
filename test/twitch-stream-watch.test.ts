/**
 * Auto streaming (issue 13) through the local Helix API (mounted on the sandbox chat server) and
 * the Fourthwall sandbox, over real sockets: the real HelixClient with the real ChatToken, the
 * real FourthwallShop, and StreamWatch on a ManualClock (no sleeps: each poll is one clock step,
 * awaited with `idle()`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { FourthwallShop } from '../src/shop/shop-port.js';
import { FourthwallClient } from '../src/fourthwall/index.js';
import { silentLogger } from '../src/logging/index.js';
import { startChatServer, type ChatServer } from '../src/sandbox/chat/index.js';
import { startFourthwallSandbox, type FourthwallSandbox } from '../src/sandbox/fourthwall/index.js';
import { SandboxHelix } from '../src/sandbox/helix/index.js';
import { ManualClock } from '../src/shared/clock.js';
import { TwitchAuthClient } from '../src/twitch/auth.js';
import { HelixClient } from '../src/twitch/helix.js';
import { StreamWatch } from '../src/twitch/stream-watch.js';
import { StreamingService } from '../src/streaming/service.js';
import { streamCommand } from '../src/commands/stream.js';
import type { ChatPort } from '../src/giveaway/ports.js';
import type { ChatMessage } from '../src/shared/chat.js';
import { NO_RETRY } from '../src/shared/retry.js';
import type { ChatToken } from '../src/twitch/token.js';
import { sandboxChatToken } from './support/twitch-e2e.js';

const POLL = 30_000;
const GRACE = 120_000;
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

interface Rig {
  clock: ManualClock;
  chat: ChatServer;
  helix: SandboxHelix;
  fw: FourthwallSandbox;
  shop: FourthwallShop;
  warnings: string[];
  tokens: ChatToken;
  api: HelixClient;
  watch(): StreamWatch;
  starts(): number;
  ends(): number;
  streaming(): Promise<{ status: string; broadcasterId?: string; broadcasterLogin?: string; thumbnailUrl?: string }>;
}

async function rig(opts: { tokenLifetimeSeconds?: number; fourthwallAttempts?: number } = {}): Promise<Rig> {
  const clock = new ManualClock(Date.now());
  const logger = silentLogger();
  const chat = await startChatServer({
    clock,
    scopes: ['chat:read', 'chat:edit', 'moderator:read:followers'],
    refreshToken: 'sandbox-refresh',
    clientSecret: 'sandbox-secret',
    ...(opts.tokenLifetimeSeconds ? { tokenLifetimeSeconds: opts.tokenLifetimeSeconds } : {}),
  });
  closers.push(() => chat.close());
  const helix = new SandboxHelix({ auth: chat.tokens, clock });
  chat.mount((req, res) => helix.handle(req, res));
  const fw = await startFourthwallSandbox({ logger });
  closers.push(() => fw.close());
  // One attempt per call unless a test asks for the client's retries (1 ms backoff on the system clock).
  const retry = { maxAttempts: opts.fourthwallAttempts ?? 1, baseDelayMs: 1, maxDelayMs: 1 };
  const client = new FourthwallClient({
    apiUrl: fw.apiUrl,
    auth: { basic: { username: fw.username, password: fw.password } },
    logger,
    retry,
  });
  closers.push(() => client.close());
  const shop = new FourthwallShop(client, { logger });
  const auth = new TwitchAuthClient({ authUrl: chat.authUrl });
  closers.push(() => auth.close());
  const tokens = sandboxChatToken(chat, auth, { logger, clock });
  closers.push(async () => tokens.stop());
  const api = new HelixClient({
    apiUrl: chat.authUrl.replace(/\/oauth2$/, '/helix'),
    clientId: chat.clientId,
    token: tokens,
    dispatcher: auth.dispatcher,
    clock,
    logger,
    retry: NO_RETRY,
  });
  const warnings: string[] = [];
  const watch = () => {
    const w = new StreamWatch(
      {
        stream: (id) => api.stream(id),
        start: (info) => shop.streamingStart(info),
        end: () => shop.streamingEnd(),
        status: () => shop.streamingStatus(),
        warn: (t) => void warnings.push(t),
      },
      { broadcaster: { id: chat.channelId, login: chat.channel }, clock, logger, pollMs: POLL, graceMs: GRACE },
    );
    closers.push(async () => w.stop());
    return w;
  };
  const count = (op: string) => fw.control.requests.filter((r) => r.operation === op).length;
  return {
    clock,
    chat,
    helix,
    fw,
    shop,
    warnings,
    tokens,
    api,
    watch,
    starts: () => count('startStreaming'),
    ends: () => count('endStreaming'),
    async streaming() {
      const res = await request(`${fw.apiUrl}/streaming`, {
        headers: { authorization: `Basic ${Buffer.from(`${fw.username}:${fw.password}`).toString('base64')}` },
      });
      const body = (await res.body.json()) as {
        services: Array<{ status: string; broadcasterId?: string; broadcasterLogin?: string; thumbnailUrl?: string }>;
      };
      return body.services[0]!;
    },
  };
}

/** One poll interval on the manual clock, then the poll it started. */
async function step(r: Rig, w: StreamWatch, ms = POLL): Promise<void> {
  r.clock.advance(ms);
  await w.idle();
}

describe('auto streaming follows the stream', () => {
  it('live -> one start with the real thumbnail; offline shorter than the grace -> no end; longer -> one end', async () => {
    const r = await rig();
    const w = r.watch();
    await w.start();
    expect(r.starts()).toBe(0); // offline: nothing to do

    r.helix.goLive(r.chat.channelId, r.chat.channel);
    await step(r, w);
    expect(r.starts()).toBe(1);
    const s = await r.streaming();
    expect(s).toMatchObject({ status: 'ONLINE', broadcasterId: r.chat.channelId, broadcasterLogin: r.chat.channel });
    expect(s.thumbnailUrl).toBe(`https://static-cdn.jtvnw.net/previews-ttv/live_user_${r.chat.channel}-1280x720.jpg`);
    await step(r, w);
    await step(r, w);
    expect(r.starts()).toBe(1); // still live: no second call

    // A short drop (one poll offline, back within the grace): no end call.
    r.helix.goOffline(r.chat.channelId);
    await step(r, w);
    await step(r, w);
    expect(r.ends()).toBe(0);
    r.helix.goLive(r.chat.channelId, r.chat.channel);
    await step(r, w);
    expect(r.ends()).toBe(0);
    expect(r.starts()).toBe(1);

    // Offline for longer than the grace: exactly one end call.
    r.helix.goOffline(r.chat.channelId);
    for (let i = 0; i < 8; i++) await step(r, w);
    expect(r.ends()).toBe(1);
    expect((await r.streaming()).status).toBe('OFFLINE');
    expect(r.warnings).toEqual([]);
  });

  it('a bot (re)started mid-stream sets it at once, and a restart does not send start again', async () => {
    const r = await rig();
    r.helix.goLive(r.chat.channelId, r.chat.channel);
    const first = r.watch();
    await first.start(); // the first poll, no clock step: started mid-stream
    expect(r.starts()).toBe(1);
    first.stop();

    const second = r.watch(); // the restarted bot
    await second.start();
    await step(r, second);
    expect(r.starts()).toBe(1);
    expect((await r.streaming()).status).toBe('ONLINE');
  });

  it('Helix down -> the streaming status stays as it is, with one clear warning; back up -> it resumes', async () => {
    const r = await rig();
    r.helix.goLive(r.chat.channelId, r.chat.channel);
    const w = r.watch();
    await w.start();
    expect(r.starts()).toBe(1);

    r.helix.setDown(true);
    r.helix.goOffline(r.chat.channelId);
    for (let i = 0; i < 8; i++) await step(r, w); // far longer than the grace
    expect(r.ends()).toBe(0);
    expect((await r.streaming()).status).toBe('ONLINE');
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(/Cannot reach the Twitch API: the shop's streaming status stays as it is/);
    expect(w.nextStep()).toMatch(/cannot reach Twitch/);

    r.helix.setDown(false);
    for (let i = 0; i < 6; i++) await step(r, w);
    expect(r.ends()).toBe(1);
  });

  it('a failed start is retried on the next polls with one warning, and sent once it succeeds', async () => {
    const r = await rig();
    r.fw.control.faults.fail('startStreaming', 3, 503);
    r.helix.goLive(r.chat.channelId, r.chat.channel);
    const w = r.watch();
    await w.start();
    await step(r, w);
    await step(r, w);
    expect((await r.streaming()).status).toBe('OFFLINE');
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(/Could not tell Fourthwall the stream is live/);
    await step(r, w);
    expect((await r.streaming()).status).toBe('ONLINE');
    expect(r.fw.control.requests.filter((q) => q.operation === 'startStreaming').map((q) => q.status)).toEqual([
      503, 503, 503, 200,
    ]);
    await step(r, w);
    expect(r.starts()).toBe(4); // no further call once it worked
    expect(r.warnings).toHaveLength(1);
  });

  it('a failing start is retried by the Fourthwall client alone: one poll makes at most its attempts, never a multiple', async () => {
    const r = await rig({ fourthwallAttempts: 3 });
    r.fw.control.faults.fail('startStreaming', 5, 503);
    r.helix.goLive(r.chat.channelId, r.chat.channel);
    const w = r.watch();
    await w.start(); // one poll: the client's 3 attempts, then a warning; the watch adds none
    expect(r.fw.control.requests.filter((q) => q.operation === 'startStreaming').map((q) => q.status)).toEqual([
      503, 503, 503,
    ]);
    expect(r.warnings).toHaveLength(1);
    expect(w.sent.start).toBe(1);
    await step(r, w); // the next poll: 2 more failures, then it works
    expect(r.fw.control.requests.filter((q) => q.operation === 'startStreaming').map((q) => q.status)).toEqual([
      503, 503, 503, 503, 503, 200,
    ]);
    expect(w.sent.start).toBe(2);
    expect((await r.streaming()).status).toBe('ONLINE');
    expect(r.warnings).toHaveLength(1);
  });

  it('!stream by hand holds until the real stream changes, and says what auto mode does next', async () => {
    const r = await rig();
    r.helix.goLive(r.chat.channelId, r.chat.channel);
    const w = r.watch();
    await w.start();
    expect(r.starts()).toBe(1);
    // A mod sets it offline by hand while the stream is live: auto mode does not undo it.
    await r.shop.streamingEnd();
    w.override('offline');
    expect(w.nextStep()).toMatch(/keeps your choice while this stream lasts/);
    await step(r, w);
    await step(r, w);
    expect(r.starts()).toBe(1);
    // The stream really ends and comes back: auto mode takes over again.
    r.helix.goOffline(r.chat.channelId);
    await step(r, w);
    r.helix.goLive(r.chat.channelId, r.chat.channel);
    await step(r, w);
    expect(r.starts()).toBe(2);
  });

  it("!stream offline while a poll is starting the stream: the mod's call is the last Fourthwall gets", async () => {
    const r = await rig();
    r.helix.goLive(r.chat.channelId, r.chat.channel);
    const w = r.watch();
    // The first poll's PUT /streaming/start is on its way (the sandbox holds it 300 ms) ...
    r.fw.control.faults.delay('startStreaming', 300, 1);
    const polling = w.start();
    while (w.sent.start === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    // ... when a mod types !stream offline.
    const streaming = new StreamingService({ shop: r.shop, chat: {} as ChatPort, logger: silentLogger() });
    const replies: string[] = [];
    const command = streamCommand(streaming, 'stream', [], () => w);
    await command.execute({
      msg: {} as ChatMessage,
      invokedAs: 'stream',
      args: ['offline'],
      argText: 'offline',
      reply: (text) => void replies.push(text),
    });
    await polling;
    expect(replies.join()).toMatch(/now shows the stream as offline/);
    expect((await r.streaming()).status).toBe('OFFLINE');
    const order = r.fw.control.requests
      .filter((q) => q.operation === 'startStreaming' || q.operation === 'endStreaming')
      .map((q) => q.operation);
    expect(order).toEqual(['startStreaming', 'endStreaming']);
    // and auto mode keeps the mod's choice on the next polls
    await step(r, w);
    expect((await r.streaming()).status).toBe('OFFLINE');
  });

  it('refreshes the token after a 401 from Helix and before it expires', async () => {
    const r = await rig({ tokenLifetimeSeconds: 3600 });
    r.helix.goLive(r.chat.channelId, r.chat.channel);
    await r.tokens.check(); // schedules the refresh before expiry
    const refreshes: string[] = [];
    r.chat.on('oauth', (e) => void (e.endpoint === 'token' && refreshes.push(String(e.status))));

    // After a 401: the token expired early; the next Helix call refreshes it once and succeeds.
    r.chat.expireToken();
    expect(await r.api.stream(r.chat.channelId)).toMatchObject({ login: r.chat.channel });
    expect(refreshes).toEqual(['200']);
    expect(r.helix.calls.filter((c) => c.status === 401)).toHaveLength(1);

    // Before expiry: the scheduled refresh fires on the clock (lifetime 3600 s -> at 3300 s).
    const refreshed = new Promise((resolve) => r.tokens.once('refreshed', resolve));
    r.clock.advance(3300_000);
    await refreshed;
    expect(refreshes).toEqual(['200', '200']);
    expect(await r.api.stream(r.chat.channelId)).toMatchObject({ login: r.chat.channel });
    expect(r.helix.calls.filter((c) => c.status === 401)).toHaveLength(1);
  });
});
