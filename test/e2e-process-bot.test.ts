/**
 * The REAL bot process (`node --import tsx src/main.ts`, live mode, clean environment) against
 * the local Fourthwall sandbox and chat server, one process for the whole file: its startup line
 * and /healthz, the streaming commands and their permissions, a gift draw whose finish outcome is
 * unknown (connection dropped after Fourthwall processed it) reconciled with GET draw, `npm run
 * verify` on that draw (and on a tampered copy), a clean SIGTERM with a draw left open, and finally
 * the captured stdout/stderr (no terminal): no secret and no gift link, the console points to them.
 */
import { cp } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { thumbnailUrl } from '../src/streaming/service.js';
import { tamperHistory } from './support/storage-helpers.js';
import {
  callsOf,
  enterAll,
  finishCalls,
  journaledEntrants,
  logins,
  makeTempDir,
  parseWebhookUrl,
  readDraw,
  runNpmScript,
  sandboxDraw,
  setShopLive,
  spawnBot,
  startLocalServers,
  waitForDrawStatus,
  waitUntil,
  writeSettingsFile,
  type BotProcess,
  type LocalServers,
} from './support/e2e-stack.js';

/** The `!stream` command's per-channel cooldown (src/commands/stream.ts), applied to mods too. */
const STREAM_COOLDOWN_MS = 3000;

let servers: LocalServers;
let bot: BotProcess;
let dataDir: string;
let cleanups: (() => Promise<void>)[] = [];
let finishedDrawId: string | undefined;

beforeAll(async () => {
  servers = await startLocalServers({ fourthwall: { drawDurationSeconds: 2 } });
  const temp = await makeTempDir();
  dataDir = temp.dir;
  cleanups.push(temp.cleanup);
  bot = await spawnBot(servers, { dataDir, configFile: await writeSettingsFile(dataDir, {}) });
});
afterAll(async () => {
  await bot?.kill('SIGKILL');
  await servers?.close();
  for (const c of cleanups) await c();
  cleanups = [];
});

function botSaid(pred: (m: string) => boolean, what: string): Promise<void> {
  return servers.chat.waitFor(() => servers.chat.botMessages().some(pred), 5000, what);
}

/** Waits out the command's cooldown, measured from when its last reply reached the channel. */
async function cooldownFrom(replyAt: number): Promise<void> {
  await waitUntil(() => Date.now() >= replyAt + STREAM_COOLDOWN_MS + 100, STREAM_COOLDOWN_MS + 1000, 'stream cooldown');
}

describe('parseWebhookUrl', () => {
  it('reads the startup line in JSON and text form, and nothing else', () => {
    expect(parseWebhookUrl('{"level":30,"webhooks":"http://127.0.0.1:4000/webhooks/fourthwall","msg":"x"}')).toBe(
      'http://127.0.0.1:4000/webhooks/fourthwall',
    );
    expect(parseWebhookUrl('INFO giftdrop live ... webhooks: http://127.0.0.1:5/webhooks/fourthwall, 0 open')).toBe(
      'http://127.0.0.1:5/webhooks/fourthwall',
    );
    expect(parseWebhookUrl('    webhooks: "http://[::1]:77/webhooks/fourthwall"')).toBe(
      'http://[::1]:77/webhooks/fourthwall',
    );
    expect(parseWebhookUrl('giftdrop live: webhooks at http://127.0.0.1:9/webhooks/fourthwall')).toBe(
      'http://127.0.0.1:9/webhooks/fourthwall',
    );
    expect(parseWebhookUrl('{"level":30,"msg":"joined channel"}')).toBeUndefined();
    expect(parseWebhookUrl('webhooks are great')).toBeUndefined();
  });
});

describe('the real bot process', () => {
  it('logs one startup line with the webhook URL and serves /healthz in live mode', async () => {
    // log lines go to stderr; stdout is the operator console
    expect(bot.stdout.filter((l) => parseWebhookUrl(l) !== undefined)).toEqual([]);
    const lines = bot.stderr.filter((l) => parseWebhookUrl(l) !== undefined);
    expect(lines).toHaveLength(1);
    const start = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(start).toMatchObject({ mode: 'live', channel: servers.chat.channel, openDraws: 0, dataDir });
    expect(start['fourthwall']).toBe(servers.fourthwall.apiUrl);
    expect(bot.webhookUrl).toBe(`http://127.0.0.1:${bot.port}/webhooks/fourthwall`);
    const { status, body } = await bot.health();
    expect(status).toBe(200);
    expect(body).toEqual({ status: 'ok', mode: 'live', chat: 'connected', chatTransport: 'irc', openDraws: 0 });
  });

  it('!stream live / offline / status work for the broadcaster and mods; a normal viewer gets nothing', async () => {
    const { chat, fourthwall: fw } = servers;
    const mod = chat.viewer('trusty_mod', { mod: true });
    const viewer = chat.viewer('plain_viewer');
    const sub = chat.viewer('loyal_sub', { subscriber: true, subMonths: 12, vip: true });
    expect(fw.state.streaming.status).toBe('OFFLINE');
    // attempts without permission come first; the bot handles chat in order, so once the
    // broadcaster's reply is in, theirs have been handled (and ignored)
    chat.inject(viewer, '!stream live');
    chat.inject(sub, '!stream live');
    chat.inject(viewer, '!stream');
    chat.inject(chat.broadcaster, '!stream live');
    await botSaid((m) => m.includes('as LIVE'), 'live reply');
    let replyAt = Date.now();
    expect(callsOf(fw, 'startStreaming')).toHaveLength(1);
    expect(callsOf(fw, 'getStreamingStatus')).toHaveLength(0);
    expect(fw.state.streaming).toEqual({
      type: 'TWITCH',
      status: 'ONLINE',
      broadcasterId: chat.channelId,
      broadcasterLogin: chat.channel,
      thumbnailUrl: thumbnailUrl(chat.channel),
    });
    expect(fw.state.streaming.thumbnailUrl).toBe(
      `https://static-cdn.jtvnw.net/previews-ttv/live_user_${chat.channel}-1280x720.jpg`,
    );
    expect(
      servers.chat
        .botMessages()
        .filter((m) => m.startsWith(`@${viewer.displayName}`) || m.startsWith(`@${sub.displayName}`)),
    ).toEqual([]);

    await cooldownFrom(replyAt);
    chat.inject(viewer, '!stream offline');
    chat.inject(mod, '!stream offline');
    await botSaid((m) => m.includes('as offline'), 'offline reply');
    replyAt = Date.now();
    expect(callsOf(fw, 'endStreaming')).toHaveLength(1);
    expect(fw.state.streaming.status).toBe('OFFLINE');

    await cooldownFrom(replyAt);
    chat.inject(viewer, '!stream');
    chat.inject(mod, '!stream');
    await botSaid((m) => m.startsWith(`@${mod.displayName} Fourthwall streaming status: OFFLINE`), 'status reply');
    expect(callsOf(fw, 'getStreamingStatus')).toHaveLength(1);
    expect(callsOf(fw, 'startStreaming')).toHaveLength(1);
    expect(callsOf(fw, 'endStreaming')).toHaveLength(1);
  });

  it('finish outcome unknown (dropped after Fourthwall processed it): the bot GETs the draw and reconciles, one finish processed', async () => {
    const { chat, fourthwall: fw } = servers;
    setShopLive(servers);
    fw.control.faults.dropAfterProcessing('finishDraw');
    const { draw } = fw.control.simulateGiftPurchase({ quantity: 2, username: 'unknown_outcome' });
    const drawId = draw['id'] as string;
    await botSaid((m) => m.startsWith('🎁 unknown_outcome gifted'), 'draw announced');
    const gets = callsOf(fw, 'getDraw').length;
    const viewers = enterAll(chat, logins('uo', 4));
    await waitUntil(() => journaledEntrants(dataDir, drawId).length === 4, 5000, 'entries journaled');

    const rec = await waitForDrawStatus(dataDir, drawId, ['finished', 'failed']);
    expect(rec.status).toBe('finished');
    expect(rec.failure).toBeUndefined();
    const calls = finishCalls(fw, drawId);
    expect(calls.map((c) => c.status)).toEqual(['dropped']);
    expect(callsOf(fw, 'getDraw').length).toBeGreaterThan(gets);
    const theirs = sandboxDraw(fw, drawId);
    expect(theirs.status).toBe('FINISHED');
    expect(rec.winners.map((w) => w.userId).sort()).toEqual(theirs.winners.map((w) => w.userId).sort());
    for (const w of rec.winners) {
      expect(viewers.some((v) => v.userId === w.userId)).toBe(true);
      expect(w.redeemUrl).toBe(theirs.winners.find((x) => x.userId === w.userId)!.redeemUri);
    }
    // no GIFTDROP_PUBLIC_URL: the closing line says what a viewer can do (no command, no local address)
    await botSaid(
      (m) => m.endsWith(`Anyone can check draw ${drawId}: ask the streamer for its verify page`),
      'the fairness line',
    );
    expect(chat.botMessages().join('\n')).not.toMatch(/npm run|draw\.html|127\.0\.0\.1/);
    expect(chat.botMessages().filter((m) => m.includes('congratulations'))).toHaveLength(1);
    expect(chat.botMessages().some((m) => m.startsWith('⚠️'))).toBe(false);
    // Every line the bot said was confirmed by Twitch's answer on this Node's WebSocket (the
    // console prints a bot line once confirmed), and no connection was found half-open.
    const confirmed = () => bot.stdout.filter((l) => l.startsWith('[chat] bot> ')).length;
    await waitUntil(() => confirmed() === chat.botMessages().length, 5000, 'every bot line confirmed');
    expect(bot.stderr.filter((l) => /half-open|has not confirmed a chat line|cannot be confirmed/.test(l))).toEqual([]);
    // stdout is not a terminal: the streamer's console names each winner and where the link is
    for (const w of rec.winners)
      await bot.waitForLine(
        (l) =>
          l.startsWith('[giftdrop]') && l.includes(`@${w.login}`) && l.includes(`npm run history -- --draw ${drawId}`),
        5000,
        'link pointer on console',
      );
    finishedDrawId = drawId;
  });

  it('npm run verify -- <id> exits 0 on the finished draw, non-zero once its seed is tampered with', async () => {
    expect(finishedDrawId).toBeDefined();
    const id = finishedDrawId!;
    const ok = await runNpmScript('verify', [id], { dataDir });
    expect(ok.stderr).not.toContain('does NOT verify');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`draw ${id} verifies`);

    // tamper a copy (the running bot owns the original)
    const copy = await makeTempDir('giftdrop-e2e-tampered-');
    cleanups.push(copy.cleanup);
    await cp(dataDir, copy.dir, { recursive: true });
    await tamperHistory(copy.dir, id, (stored) => {
      const seed = stored.fairness.seed!;
      stored.fairness.seed = (seed[0] === '0' ? '1' : '0') + seed.slice(1);
    });
    const bad = await runNpmScript('verify', [id], { dataDir: copy.dir });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain(`draw ${id} does NOT verify: seed does not match commitment`);
  });

  it('SIGTERM shuts down cleanly (exit 0) and an open draw stays journaled for the next start', async () => {
    const { fourthwall: fw } = servers;
    const { draw } = fw.control.simulateGiftPurchase({ quantity: 1, durationSeconds: 60, username: 'left_open' });
    const drawId = draw['id'] as string;
    await botSaid((m) => m.startsWith('🎁 left_open gifted'), 'draw announced');
    enterAll(servers.chat, logins('stay', 2));
    await waitUntil(() => journaledEntrants(dataDir, drawId).length === 2, 5000, 'entries journaled');
    expect((await bot.health()).body.openDraws).toBe(1);

    const exit = await bot.kill('SIGTERM');
    expect(exit).toEqual({ code: 0, signal: null });
    expect(bot.output()).toContain('"msg":"stopped"');
    const rec = (await readDraw(dataDir, drawId))!;
    expect(rec.status).toBe('open');
    expect(
      journaledEntrants(dataDir, drawId)
        .map((e) => e.login)
        .sort(),
    ).toEqual(['stay0', 'stay1']);
    expect(finishCalls(fw, drawId)).toHaveLength(0);
  });

  it('its captured stdout/stderr (no terminal) holds no secret and no gift link', () => {
    const { fourthwall: fw, chat } = servers;
    const all = [...bot.stdout, ...bot.stderr];
    expect(all.length).toBeGreaterThan(10);
    const text = all.join('\n');
    for (const secret of [fw.password, fw.webhookSecret, chat.token]) {
      expect(secret.length).toBeGreaterThan(8);
      expect(text).not.toContain(secret);
    }
    const json = bot.stderr.filter((l) => l.trimStart().startsWith('{'));
    expect(json.length).toBeGreaterThan(5);
    // stdout is not a terminal, so not even the operator console shows a link
    expect(all.filter((l) => /\/gifts\//.test(l))).toEqual([]);
    expect(
      all.filter((l) => l.startsWith('[giftdrop] ') && l.includes('links are not printed')).length,
    ).toBeGreaterThanOrEqual(2);
    // and links never reached chat (links.publicInChat is off)
    expect(chat.botMessages().some((m) => /\/gifts\/gft_/.test(m))).toBe(false);
  });
});
