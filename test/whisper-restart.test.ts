/**
 * The whisper queue and Twitch's daily whisper budget survive a restart (issue 39): against the
 * local chat server's Helix (which keeps Twitch's whisper limits and answers 429 past them), 45
 * winners are whispered, 40 go out (40 new recipients a day) and 5 wait; the bot stops and a new
 * TwitchWhispers opens the same DATA_DIR. It neither forgets the 5 nor the 40 recipients of the
 * day: nothing goes out until the day is over (a fresh budget would send the 5 at once), a whisper
 * to someone already whispered still passes, and a day later the 5 go out without anyone asking
 * again. The file is DATA_DIR/whispers.json, written by the storage's atomic write.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/shared/clock.js';
import { startChatServer, type ChatServer } from '../src/sandbox/chat/index.js';
import { SandboxHelix } from '../src/sandbox/helix/index.js';
import { TwitchWhispers } from '../src/twitch/whispers.js';
import { WHISPER_FILE, whisperFile } from '../src/delivery/whisper-file.js';
import { silentLogger } from '../src/logging/index.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function whispersOn(chat: ChatServer, clock: ManualClock, dataDir: string): TwitchWhispers {
  const w = new TwitchWhispers({
    apiUrl: chat.authUrl.replace(/\/oauth2$/, '/helix'),
    clientId: chat.clientId,
    token: { current: () => chat.token, canRefresh: () => false, refresh: async () => undefined },
    identity: () => ({ userId: chat.botUserId, scopes: chat.tokens.scopes }),
    clock,
    logger: silentLogger(),
    store: whisperFile(dataDir),
  });
  cleanups.push(async () => (w.stop(), await w.idle()));
  return w;
}

/** Moves the clock in steps while no whisper is in flight, until `done` holds (real sockets answer in between). */
async function driveUntil(
  clock: ManualClock,
  w: TwitchWhispers,
  done: () => boolean,
  stepMs: number,
  maxSteps = 20_000,
): Promise<void> {
  for (let i = 0; i < maxSteps && !done(); i++) {
    await new Promise((r) => setImmediate(r));
    await w.idle();
    if (!done()) clock.advance(stepMs);
  }
  expect(done()).toBe(true);
}

describe('whisper queue across a restart', () => {
  it('keeps the queued whispers and the spent daily budget', { timeout: 60_000 }, async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const dataDir = await mkdtemp(join(tmpdir(), 'gd-whispers-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const chat = await startChatServer({
      clock,
      scopes: ['chat:read', 'chat:edit', 'user:manage:whispers'],
      tokenLifetimeSeconds: 30 * 86_400,
    });
    cleanups.push(() => chat.close());
    const helix = new SandboxHelix({ auth: chat.tokens, clock });
    chat.mount((req, res) => helix.handle(req, res));
    const to = (i: number) => String(1000 + i);

    // First run: 45 winners, 40 whispered (the day's new recipients), 5 waiting.
    const first = whispersOn(chat, clock, dataDir);
    const outcomes: boolean[] = [];
    for (let i = 0; i < 45; i++) void first.send(to(i), `you won #${i}`).then((ok) => outcomes.push(ok));
    await driveUntil(clock, first, () => outcomes.length === 40 && first.waiting() === 5, 250);
    expect(helix.whispers).toHaveLength(40);
    first.stop();
    await first.idle();
    const saved = JSON.parse(await readFile(join(dataDir, WHISPER_FILE), 'utf8')) as {
      queued: { to: string }[];
      budget: { recipients: unknown[] };
    };
    expect(saved.queued.map((q) => q.to)).toEqual([40, 41, 42, 43, 44].map(to));
    expect(saved.budget.recipients).toHaveLength(40);

    // Restart: the 5 are queued again, and the day's budget is still spent.
    const second = whispersOn(chat, clock, dataDir);
    await second.idle();
    expect(second.waiting()).toBe(5);
    clock.advance(3_600_000); // an hour later: still nothing (a fresh budget would have sent them)
    await second.idle();
    expect(helix.whispers).toHaveLength(40);
    // A viewer whispered earlier today costs no new-recipient slot: that one goes at once.
    expect(await second.send(to(3), 'a reminder')).toBe(true);
    expect(helix.whispers).toHaveLength(41);
    expect(helix.calls.filter((c) => c.path === '/whispers' && c.status === 429)).toEqual([]);

    // A day after the first whispers, the 5 go out on their own, in order, none refused.
    clock.advance(86_400_000);
    await driveUntil(clock, second, () => helix.whispers.length === 46, 1000);
    expect(helix.whispers.slice(41).map((w) => w.to)).toEqual([40, 41, 42, 43, 44].map(to));
    expect(second.waiting()).toBe(0);
    expect(helix.calls.filter((c) => c.path === '/whispers' && c.status !== 204)).toEqual([]);
    await second.idle();
    const after = JSON.parse(await readFile(join(dataDir, WHISPER_FILE), 'utf8')) as { queued: unknown[] };
    expect(after.queued).toEqual([]);
  });
});
