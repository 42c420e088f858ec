/** The Twitch auth and refresh variables of the one config module (src/config). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, secretValues } from '../src/config/index.js';
import { LIVE_ENV } from './support/config-fixtures.js';

const live = LIVE_ENV;

describe('Twitch auth configuration', () => {
  const dir = mkdtempSync(join(tmpdir(), 'giftdrop-cfg-twitch-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const load = (env: Record<string, string>) => loadConfig({ env, cwd: dir, dotenv: false });

  it('TWITCH_AUTH_URL: Twitch by default, the local chat server for a loopback ws:// URL, an explicit value wins', () => {
    expect(load(live).twitch.authUrl).toBe('https://id.twitch.tv/oauth2');
    expect(load({ ...live, TWITCH_IRC_URL: 'ws://127.0.0.1:6001' }).twitch.authUrl).toBe(
      'http://127.0.0.1:6001/oauth2',
    );
    expect(
      load({ ...live, TWITCH_IRC_URL: 'ws://127.0.0.1:6001', TWITCH_AUTH_URL: 'http://127.0.0.1:7000/oauth2/' }).twitch
        .authUrl,
    ).toBe('http://127.0.0.1:7000/oauth2');
  });

  it('a refresh token without the client id and secret is an error naming both; the secrets are redacted', () => {
    let problems: string[] = [];
    try {
      load({ ...live, TWITCH_REFRESH_TOKEN: 'refresh-very-secret-1' });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      problems = (err as ConfigError).problems;
      expect((err as Error).message).not.toContain('refresh-very-secret-1');
    }
    expect(problems).toEqual([
      'TWITCH_CLIENT_ID: required with TWITCH_REFRESH_TOKEN (to refresh TWITCH_TOKEN)',
      'TWITCH_CLIENT_SECRET: required with TWITCH_REFRESH_TOKEN (to refresh TWITCH_TOKEN)',
    ]);
    const c = load({
      ...live,
      TWITCH_REFRESH_TOKEN: 'refresh-very-secret-1',
      TWITCH_CLIENT_ID: 'cid',
      TWITCH_CLIENT_SECRET: 'client-very-secret-2',
    });
    expect(c.twitch).toMatchObject({
      refreshToken: 'refresh-very-secret-1',
      clientId: 'cid',
      clientSecret: 'client-very-secret-2',
    });
    expect(secretValues(c)).toEqual(expect.arrayContaining(['refresh-very-secret-1', 'client-very-secret-2']));
  });

  it('TWITCH_OUTBOX_MAX must be a positive whole number', () => {
    expect(load({ ...live, TWITCH_OUTBOX_MAX: '40' }).twitch.outboxMax).toBe(40);
    expect(load(live).twitch.outboxMax).toBeUndefined();
    expect(() => load({ ...live, TWITCH_OUTBOX_MAX: 'lots' })).toThrow(/TWITCH_OUTBOX_MAX: must be a whole number/);
    expect(() => load({ ...live, TWITCH_OUTBOX_MAX: '0' })).toThrow(/TWITCH_OUTBOX_MAX: must be at least 1/);
  });
});
