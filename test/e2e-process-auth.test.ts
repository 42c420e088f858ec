/**
 * The real bot process in live mode with a Twitch token Twitch refuses (at /validate, before any
 * chat login): it must end with a clear message naming TWITCH_TOKEN and a non-zero exit (no retry
 * loop), never printing the token.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, botProcessEnv, makeTempDir, startLocalServers, type LocalServers } from './support/e2e-stack.js';

describe('live mode with a refused Twitch token', () => {
  let servers: LocalServers;
  beforeAll(async () => {
    servers = await startLocalServers();
  });
  afterAll(async () => {
    await servers?.close();
  });

  it('exits 1 naming TWITCH_TOKEN, without the token, and makes no second login attempt', async () => {
    const tmp = await makeTempDir('giftdrop-auth-');
    const env = {
      ...botProcessEnv(servers, { dataDir: tmp.dir }),
      TWITCH_TOKEN: 'oauth:wrongtoken-zz9-plural-z-alpha',
    };
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: PROJECT_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(1);
    expect(out).toContain('TWITCH_TOKEN');
    expect(out).not.toContain('wrongtoken-zz9-plural-z-alpha');
    // The token is checked at Twitch's /validate first (the chat server's /oauth2 stand-in): one
    // refusal there, and no chat login is even tried with it.
    const refused = servers.chat.transcript.filter(
      (e) => e.kind === 'system' && /oauth2 validate: 401 invalid access token/.test(e.text),
    );
    expect(refused).toHaveLength(1);
    expect(out).toMatch(/TWITCH_TOKEN is expired or invalid/);
    const rejected = servers.chat.transcript.filter((e) => e.kind === 'system' && /login rejected/.test(e.text));
    expect(rejected).toHaveLength(0);
    expect(servers.chat.transcript.some((e) => e.kind === 'system' && / connected/.test(e.text))).toBe(false);
    await tmp.cleanup();
  });
});
