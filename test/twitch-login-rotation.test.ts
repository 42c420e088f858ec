/**
 * A saved Twitch login renews itself and a power cut at any point of that never loses it.
 *
 * The bot logs in by device code against the Twitch sandbox (a Public application: its refresh
 * tokens are single use). Its login is saved by the login store on a simulated disk that records
 * every operation (test/support/power-cut-fs.ts), then renewed six times through the token port
 * over real HTTP (the journal compacted on the way). For EVERY prefix of the recorded operations,
 * each disk a power cut there could leave is rebuilt and the store reopened on it:
 *   - the bot's login is always there and whole (never lost, never corrupt, never a mix);
 *   - it is never OLDER than the newest renewal whose save had completed (its fdatasync ran);
 *   - what stands between Twitch's answer and that durable point is exactly one write and one
 *     fdatasync of the journal (no create, rename or directory sync in the window);
 *   - after the last renewal, the reopened login is Twitch's current one (the sandbox accepts it).
 * A second test ends the login at Twitch (the user disconnects the application) and checks the
 * port says so once and never asks Twitch again (no retry storm).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../src/sandbox/chat/index.js';
import { Disk } from '../src/storage/disk.js';
import { systemClock } from '../src/shared/clock.js';
import { silentLogger } from '../src/logging/index.js';
import { TwitchAuthClient } from '../src/twitch/auth.js';
import { startDeviceLogin } from '../src/twitch/device-login.js';
import { LoginStore, type SavedLogin } from '../src/twitch/login-store.js';
import { TwitchLogins } from '../src/twitch/logins.js';
import { emptyImage, PowerCutFs, type DiskImage } from './support/power-cut-fs.js';

const DIR = '/data';
const PUBLIC = 'pubapp1';

let chat: ChatServer;
let auth: TwitchAuthClient;

beforeEach(async () => {
  chat = await startChatServer({ publicClientId: PUBLIC, deviceIntervalSeconds: 1 });
  auth = new TwitchAuthClient({ authUrl: chat.authUrl });
});
afterEach(async () => {
  await auth.close();
  await chat.close();
});

/** The bot logs in by device code (the user's answer given through the sandbox's page logic). */
async function deviceLoginOfBot(): Promise<SavedLogin> {
  const login = await startDeviceLogin({
    auth,
    clock: systemClock,
    clientId: PUBLIC,
    scopes: ['chat:read', 'chat:edit'],
  });
  expect(chat.deviceLogin.answer(login.userCode, chat.botLogin, 'authorize')).toBe(true);
  const r = await login.wait(AbortSignal.timeout(20_000));
  return {
    login: r.info.login,
    userId: r.info.userId,
    clientId: r.clientId,
    scopes: r.info.scopes,
    accessToken: r.tokens.accessToken,
    refreshToken: r.tokens.refreshToken,
    expiresAt: r.expiresAt,
    savedAt: new Date().toISOString(),
  };
}

/** A disk holding `login` durably, as the setup page leaves it. */
async function imageWith(login: SavedLogin): Promise<DiskImage> {
  const fs = new PowerCutFs(emptyImage([DIR]));
  const store = await LoginStore.open(DIR, { disk: new Disk(fs) });
  await store.save('bot', login);
  await store.close();
  const [image] = fs.imagesAfter(fs.ops.length);
  return image!;
}

function ports(store: LoginStore, onRevoked?: (line: string) => void): TwitchLogins {
  return new TwitchLogins({
    auth,
    logger: silentLogger(),
    clock: systemClock,
    registerSecret: () => undefined,
    store,
    ...(onRevoked ? { onRevoked: (_r, l) => onRevoked(l) } : {}),
  });
}

describe('saved Twitch login: renewal and power cuts', () => {
  it('a power cut anywhere in six renewals never loses the login nor rolls it back past a completed save; the window is one write + one fdatasync', async () => {
    const first = await deviceLoginOfBot();
    const fs = new PowerCutFs(await imageWith(first));
    const store = await LoginStore.open(DIR, { disk: new Disk(fs), compactAfter: 3 });
    const logins = ports(store);
    const bot = logins.keeper('bot')!;

    // Refresh tokens in the order Twitch issued them, with the op count when Twitch answered.
    const issued: string[] = [first.refreshToken];
    const answeredAt: number[] = [];
    chat.on('oauth', (e) => {
      if (e.endpoint === 'token' && e.status === 200) answeredAt.push(fs.ops.length);
    });
    for (let i = 0; i < 6; i++) {
      await bot.refresh('test renewal');
      issued.push(chat.refreshToken);
    }
    expect(answeredAt).toHaveLength(6);
    expect(new Set(issued).size).toBe(7);
    expect(logins.current('bot')).toBe(chat.token);

    // The durable point of each renewal: the first fdatasync after Twitch answered. Before it, one write.
    const durableAt = answeredAt.map((at) => {
      expect(fs.ops[at]).toMatchObject({ t: 'write' });
      expect(fs.ops[at + 1]).toMatchObject({ t: 'sync', ino: (fs.ops[at] as { ino: number }).ino });
      return at + 2; // a cut after this many operations keeps the renewal
    });

    let states = 0;
    for (let cut = 0; cut <= fs.ops.length; cut++) {
      const mustHave = durableAt.filter((d) => cut >= d).length; // renewals whose save completed
      for (const image of fs.imagesAfter(cut)) {
        states++;
        const reopened = await LoginStore.open(DIR, { disk: new Disk(new PowerCutFs(image)) });
        const got = reopened.get('bot');
        expect(got, `cut ${cut}: the login is gone`).toBeDefined();
        const index = issued.indexOf(got!.refreshToken);
        expect(index, `cut ${cut}: a refresh token Twitch never issued`).toBeGreaterThanOrEqual(0);
        expect(index, `cut ${cut}: rolled back past a completed save`).toBeGreaterThanOrEqual(mustHave);
        expect(got!.login).toBe(chat.botLogin);
      }
    }
    expect(states).toBeGreaterThan(fs.ops.length);

    // After the last renewal, a restart finds Twitch's current login and it works.
    const [last] = fs.imagesAfter(fs.ops.length);
    const restarted = await LoginStore.open(DIR, { disk: new Disk(new PowerCutFs(last!)) });
    expect(restarted.get('bot')!.refreshToken).toBe(chat.refreshToken);
    const again = ports(restarted).keeper('bot')!;
    await expect(again.check()).resolves.toMatchObject({ login: chat.botLogin, clientId: PUBLIC });
  }, 60_000);

  it('a login Twitch ended is said once and never asked again (no retry storm)', async () => {
    const first = await deviceLoginOfBot();
    const store = await LoginStore.open(DIR, { disk: new Disk(new PowerCutFs(await imageWith(first))) });
    const lines: string[] = [];
    const logins = ports(store, (l) => lines.push(l));
    let tokenCalls = 0;
    chat.on('oauth', (e) => {
      if (e.endpoint === 'token') tokenCalls++;
    });
    chat.revokeLogin(chat.botLogin);
    expect(await logins.refused('bot', 'refused by chat')).toBe(false);
    expect(tokenCalls).toBe(1);
    for (let i = 0; i < 20; i++) expect(await logins.refused('bot', 'refused again')).toBe(false);
    await expect(logins.keeper('bot')!.refresh('scheduled')).rejects.toThrow(/Invalid refresh token/);
    expect(tokenCalls).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^Twitch ended the bot's Twitch login \(giftdrop_bot\): log in again with the bot account on the setup page/,
    );
    expect(logins.has('bot')).toBe(false);
    expect(logins.current('bot')).toBeUndefined();
  }, 30_000);
});
