/**
 * The words of delivery/winner-reach.ts, the one home of "is the claim page / are whispers on, and
 * what turns each on": every case names its fix and where it goes for the person reading it (the
 * executable's own .env beside it, with Notepad's .env.txt trap on Windows; a clone's .env), and
 * the facts are read from a configuration as the setup page saves it (its Public client id is never
 * taken for the claim page's application). The same words reaching the dashboard, the setup page
 * and the start-up line is test/e2e-winner-reach.test.ts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { claimPageFacts, claimPageReach, whisperReach } from '../src/delivery/winner-reach.js';
import { envFileHint, type Invocation } from '../src/platform/invocation.js';

const winExe: Invocation = { platform: 'win32', executable: { typed: '.\\giftdrop-win-x64.exe' } };
const linuxExe: Invocation = {
  platform: 'linux',
  executable: { typed: '/home/sam/bot/giftdrop-linux-x64', name: 'giftdrop-linux-x64' },
};
const clone: Invocation = { platform: 'linux' };
const URL = 'https://sam.ngrok-free.app';

describe('where a .env setting goes', () => {
  it("beside the executable (Notepad saves .env.txt unless told otherwise), or the clone's .env", () => {
    expect(envFileHint(winExe)).toBe(
      'a file named .env beside giftdrop-win-x64.exe (in Notepad pick Save as type "All files", or it saves .env.txt)',
    );
    expect(envFileHint(linuxExe)).toBe('a file named .env beside giftdrop-linux-x64');
    expect(envFileHint({ platform: 'win32', executable: { typed: "& 'C:\\My Bot\\giftdrop-win-x64.exe'" } })).toMatch(
      /^a file named \.env beside giftdrop-win-x64\.exe /,
    );
    expect(envFileHint(clone)).toBe('the .env file (copy .env.example to .env)');
  });
});

describe('the claim page', () => {
  it("the setup page's Public application only: off, naming the streamer's own Confidential application, the redirect URL and the .env beside the executable", () => {
    const r = claimPageReach({ publicUrl: URL, clientSecret: false, publicClient: true }, { inv: winExe });
    expect(r.status).toBe('off');
    expect(r.detail).toContain(
      'your own Twitch application of Client Type "Confidential" (the setup page\'s Public one has no secret',
    );
    expect(r.detail).toContain(`OAuth Redirect URL ${URL}/claim/callback`);
    expect(r.detail).toContain(
      'a file named .env beside giftdrop-win-x64.exe (in Notepad pick Save as type "All files", or it saves .env.txt) as two lines, TWITCH_CLIENT_ID=<Client ID> and TWITCH_CLIENT_SECRET=<Client Secret>',
    );
    expect(r.detail).not.toMatch(/npm|\.env\.example/);
  });

  it("each half-done case names what is missing; the address alone missing names the page's row", () => {
    const noSecret = claimPageReach(
      { publicUrl: URL, clientId: 'abc', clientSecret: false, publicClient: false },
      { inv: linuxExe },
    );
    expect(noSecret.detail).toMatch(
      /^off: it needs the Client Secret of TWITCH_CLIENT_ID's application \(Client Type "Confidential"; Manage > New Secret/,
    );
    expect(noSecret.detail).toContain(
      "The application's OAuth Redirect URLs must include https://sam.ngrok-free.app/claim/callback.",
    );
    const noId = claimPageReach({ publicUrl: URL, clientSecret: true, publicClient: true }, { inv: linuxExe });
    expect(noId.detail).toContain(
      'the Client ID of the application TWITCH_CLIENT_SECRET belongs to in a file named .env beside giftdrop-linux-x64: TWITCH_CLIENT_ID=<Client ID>',
    );
    const noUrl = claimPageReach({ clientId: 'abc', clientSecret: true, publicClient: false }, { inv: clone });
    expect(noUrl.detail).toBe(
      "off: it needs the public address (the setup page's row, or GIFTDROP_PUBLIC_URL); then restart the bot. The application's OAuth Redirect URLs must include <public address>/claim/callback. Until then the dashboard lists each winner whose prize waits, with their link.",
    );
  });

  it('on: where winners log in and the redirect URL the application must list', () => {
    const r = claimPageReach({ publicUrl: URL, clientId: 'abc', clientSecret: true, publicClient: false });
    expect(r).toMatchObject({
      status: 'on',
      detail: expect.stringContaining(
        `winners log in at ${URL}/claim. Your Twitch application must list the OAuth Redirect URL ${URL}/claim/callback`,
      ),
    });
  });

  it("from a configuration the setup page saved: its client id is the Public one, never the claim page's", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'giftdrop-reach-config-'));
    try {
      const env = {
        TWITCH_CHANNEL: 'sam',
        TWITCH_USERNAME: 'sambot',
        TWITCH_CLIENT_ID: 'pagepublicapp',
        FOURTHWALL_USERNAME: 'u',
        FOURTHWALL_PASSWORD: 'p',
        FOURTHWALL_WEBHOOK_SECRET: 'secret-secret',
        GIFTDROP_PUBLIC_URL: URL,
      };
      await writeFile(
        join(dir, 'setup.json'),
        JSON.stringify({ version: 1, env, live: true, botLogin: true, savedAt: new Date().toISOString() }),
        { mode: 0o600 },
      );
      const page = loadConfig({ env: { DATA_DIR: dir }, dotenv: false, cwd: dir });
      expect(page.twitch.clientId).toBe('pagepublicapp'); // the Helix features use the login's application
      expect(claimPageFacts(page)).toEqual({ publicUrl: URL, clientSecret: false, publicClient: true });
      // The streamer's own Confidential application in .env wins: the claim page is on.
      const own = loadConfig({
        env: { DATA_DIR: dir, TWITCH_CLIENT_ID: 'confidentialapp', TWITCH_CLIENT_SECRET: 'a-client-secret' },
        dotenv: false,
        cwd: dir,
      });
      expect(claimPageFacts(own)).toEqual({
        publicUrl: URL,
        clientId: 'confidentialapp',
        clientSecret: true,
        publicClient: false,
      });
      expect(claimPageReach(claimPageFacts(own)).status).toBe('on');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the whispers', () => {
  const base = { setting: true, clientId: true, claimPage: false } as const;
  it('on with the scope, saying what a whisper carries and that Twitch may drop one', () => {
    expect(whisperReach({ ...base, token: 'login', scopes: ['user:manage:whispers'] }).detail).toMatch(
      /^on: each winner is whispered their link\. .*verified phone number.*drop one silently/,
    );
    expect(whisperReach({ ...base, token: 'login', scopes: ['user:manage:whispers'], claimPage: true }).detail).toMatch(
      /^on: each winner is whispered the claim page\./,
    );
  });

  it('off: each cause names its own fix', () => {
    expect(whisperReach({ ...base, setting: false, token: 'login', scopes: [] }).detail).toContain(
      'delivery.whispers is false in the settings file',
    );
    expect(whisperReach({ ...base, token: 'none' }).detail).toBe(
      'off: log the bot in on the setup page (its login asks Twitch for whispers).',
    );
    expect(whisperReach({ ...base, token: 'env', clientId: false }).detail).toContain(
      'set TWITCH_CLIENT_ID to the Client ID of the application TWITCH_TOKEN was made with',
    );
    expect(whisperReach({ ...base, token: 'env', scopes: ['chat:read'] }).detail).toContain(
      'TWITCH_TOKEN lacks the scope user:manage:whispers',
    );
    expect(whisperReach({ ...base, token: 'login', scopes: ['chat:read'] }).detail).toContain(
      'log the bot in again on the setup page',
    );
  });

  it('not known before the token was validated', () => {
    expect(whisperReach({ ...base, token: 'env' })).toMatchObject({ status: 'checking' });
  });
});
