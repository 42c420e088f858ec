/**
 * `npm run setup`'s Twitch API items against the local chat server (OAuth) with the local Helix
 * API mounted on its port; TWITCH_AUTH_URL and TWITCH_API_URL come from the loopback
 * TWITCH_IRC_URL defaults, as in a user's config.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { checkTwitchApi, claimPageItem } from '../src/cli/setup-twitch-api.js';
import { silentLogger } from '../src/logging/index.js';
import { startChatServer, type ChatServer } from '../src/sandbox/chat/index.js';
import { SandboxHelix } from '../src/sandbox/helix/index.js';
import { systemClock } from '../src/shared/clock.js';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function chatWith(scopes: string[]): Promise<ChatServer> {
  const chat = await startChatServer({ scopes });
  const helix = new SandboxHelix({ auth: chat.tokens, clock: systemClock });
  helix.setUser(chat.channelId, chat.channel);
  chat.mount((req, res) => helix.handle(req, res));
  closers.push(() => chat.close());
  return chat;
}

function configFor(chat: ChatServer, settings: Record<string, unknown>, clientId?: string) {
  const dir = mkdtempSync(join(tmpdir(), 'giftdrop-setup-api-'));
  closers.push(async () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'giftdrop.json');
  writeFileSync(file, JSON.stringify(settings));
  return loadConfig({
    env: {
      GIFTDROP_MODE: 'sandbox',
      GIFTDROP_CONFIG: file,
      TWITCH_CHANNEL: chat.channel,
      TWITCH_USERNAME: chat.botLogin,
      TWITCH_TOKEN: `oauth:${chat.token}`,
      TWITCH_IRC_URL: chat.url,
      ...(clientId ? { TWITCH_CLIENT_ID: clientId } : {}),
    },
    dotenv: false,
    cwd: dir,
  });
}

describe('setup: Twitch API', () => {
  it('without a client id: optional, says what it adds; with a feature on: names the variable', async () => {
    const chat = await chatWith(['chat:read', 'chat:edit']);
    const plain = await checkTwitchApi(configFor(chat, {}), silentLogger());
    expect(plain).toEqual([
      expect.objectContaining({
        status: 'skip',
        required: false,
        detail: expect.stringMatching(/TWITCH_CLIENT_ID is not set \(optional\).*follow the stream/),
      }),
    ]);
    const auto = await checkTwitchApi(configFor(chat, { streaming: { auto: true } }), silentLogger());
    expect(auto).toEqual([
      expect.objectContaining({
        status: 'fail',
        required: true,
        detail: expect.stringMatching(/streaming.auto need TWITCH_CLIENT_ID/),
      }),
    ]);
  });

  it('a token without moderator:read:followers: prints the missing scope for the follower rule', async () => {
    const chat = await chatWith(['chat:read', 'chat:edit']);
    const items = await checkTwitchApi(
      configFor(chat, { eligibility: { followersOnly: true } }, chat.clientId),
      silentLogger(),
    );
    const scopes = items.find((i) => i.name === 'Twitch API scopes');
    expect(scopes).toMatchObject({ status: 'fail', required: true });
    expect(scopes!.detail).toMatch(/lacks moderator:read:followers \(needed by eligibility.followersOnly\)/);
    expect(items.map((i) => i.detail).join('\n')).not.toContain(chat.token);
  });

  it('everything in place: client id, scopes and a real Helix call', async () => {
    const chat = await chatWith(['chat:read', 'chat:edit', 'moderator:read:followers']);
    const items = await checkTwitchApi(
      configFor(chat, { eligibility: { minFollowDays: 3 }, streaming: { auto: true } }, chat.clientId),
      silentLogger(),
    );
    expect(items.map((i) => [i.name, i.status])).toEqual([
      ['Twitch API client id', 'ok'],
      ['Twitch API scopes', 'ok'],
      ['Whispers', 'skip'],
      ['Twitch API', 'ok'],
    ]);
    expect(items[2]!.detail).toContain('user:manage:whispers');
    expect(items[3]!.detail).toMatch(
      new RegExp(`#${chat.channel} is user ${chat.channelId}; GET /streams: offline now`),
    );
  });

  it('a token with user:manage:whispers: whispers are reported on (optional item)', async () => {
    const chat = await chatWith(['chat:read', 'chat:edit', 'user:manage:whispers']);
    const items = await checkTwitchApi(configFor(chat, {}, chat.clientId), silentLogger());
    const w = items.find((i) => i.name === 'Whispers')!;
    expect([w.status, w.required]).toEqual(['ok', false]);
    expect(w.detail).toMatch(/verified phone number/);
  });

  it('the claim page item names the exact redirect URI to register, or what is missing', async () => {
    const chat = await chatWith(['chat:read', 'chat:edit']);
    const base = configFor(chat, {}, chat.clientId);
    expect(claimPageItem(base)).toMatchObject({ status: 'skip', required: false });
    const on = claimPageItem({
      ...base,
      publicUrl: 'https://abc.example.com',
      twitch: { ...base.twitch, clientSecret: 'sekrit-value' },
    });
    expect(on.status).toBe('ok');
    expect(on.detail).toContain('must list the OAuth Redirect URL https://abc.example.com/claim/callback');
    expect(on.detail).not.toContain('sekrit-value');
    const half = claimPageItem({
      ...base,
      publicUrl: 'https://abc.example.com',
      twitch: { ...base.twitch, clientSecret: undefined },
    });
    expect(half.status).toBe('warn');
    expect(half.detail).toContain('TWITCH_CLIENT_SECRET');
    expect(half.detail).toContain('https://abc.example.com/claim/callback');
  });

  it('a client id the token was not issued to is named', async () => {
    const chat = await chatWith(['chat:read', 'chat:edit']);
    const items = await checkTwitchApi(configFor(chat, {}, 'someotherclient'), silentLogger());
    expect(items).toEqual([
      expect.objectContaining({
        name: 'Twitch API client id',
        status: 'fail',
        detail: expect.stringMatching(/another application than TWITCH_CLIENT_ID/),
      }),
    ]);
  });
});
