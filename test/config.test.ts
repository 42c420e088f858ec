import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseRateLimitSpec, secretValues } from '../src/config/index.js';

const live = {
  TWITCH_CHANNEL: 'somestreamer',
  TWITCH_USERNAME: 'giftdrop_bot',
  TWITCH_TOKEN: 'oauth:tok-very-secret-123',
  FOURTHWALL_USERNAME: 'api-user',
  FOURTHWALL_PASSWORD: 'pw-very-secret-456',
  FOURTHWALL_WEBHOOK_SECRET: 'whsec-very-secret-789',
};

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('config', () => {
  const emptyDir = mkdtempSync(join(tmpdir(), 'giftdrop-cfg-'));

  it('defaults to sandbox mode without credentials', () => {
    const c = loadConfig({ env: {}, cwd: emptyDir });
    expect(c.mode).toBe('sandbox');
    expect(c.http).toEqual({ host: '127.0.0.1', port: 8787 });
    expect(c.fourthwall.apiUrl).toBe('https://api.fourthwall.com/open-api/v1.0');
    expect(c.fourthwall.tokenUrl).toBe('https://api.fourthwall.com/open-api/v1.0/platform/token');
    expect(c.fourthwall.rateLimit).toEqual({ limit: 100, intervalMs: 10_000 });
    expect(c.twitch.ircUrl).toBe('wss://irc-ws.chat.twitch.tv:443');
    expect(c.settings.gifting.flow).toBe('draw');
    expect(c.settings.links.publicInChat).toBe(false);
    expect(c.dataDir).toBe(join(emptyDir, 'data'));
  });

  it('is live when Twitch and Fourthwall credentials are set', () => {
    const c = loadConfig({ env: { ...live, FOURTHWALL_RATE_LIMIT: '50/5s' }, cwd: emptyDir });
    expect(c.mode).toBe('live');
    expect(c.fourthwall.auth).toEqual({ kind: 'basic', username: 'api-user', password: 'pw-very-secret-456' });
    expect(c.fourthwall.rateLimit).toEqual({ limit: 50, intervalMs: 5000 });
    expect(secretValues(c)).toContain(Buffer.from('api-user:pw-very-secret-456').toString('base64'));
  });

  it('FOURTHWALL_EVENT_POLL_SECONDS: default 5, 0 turns the catch-up poll off, a bad value is named', () => {
    expect(loadConfig({ env: live, cwd: emptyDir }).fourthwall.eventPollSeconds).toBe(5);
    expect(loadConfig({ env: { ...live, FOURTHWALL_EVENT_POLL_SECONDS: '0' }, cwd: emptyDir }).fourthwall.eventPollSeconds).toBe(0);
    expect(loadConfig({ env: { ...live, FOURTHWALL_EVENT_POLL_SECONDS: '2.5' }, cwd: emptyDir }).fourthwall.eventPollSeconds).toBe(2.5);
    for (const bad of ['often', '-1', '7200']) {
      const text = problemsOf(() => loadConfig({ env: { ...live, FOURTHWALL_EVENT_POLL_SECONDS: bad }, cwd: emptyDir })).join('\n');
      expect(text, bad).toContain('FOURTHWALL_EVENT_POLL_SECONDS');
    }
  });

  it('names every missing live variable in one error', () => {
    const problems = problemsOf(() => loadConfig({ env: { GIFTDROP_MODE: 'live' }, cwd: emptyDir }));
    const text = problems.join('\n');
    for (const name of ['TWITCH_CHANNEL', 'TWITCH_USERNAME', 'TWITCH_TOKEN', 'FOURTHWALL_USERNAME', 'FOURTHWALL_WEBHOOK_SECRET'])
      expect(text).toContain(name);
  });

  it('reports bad fields by name together, never printing a secret', () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: { ...live, HTTP_PORT: '99999', LOG_LEVEL: 'loud', FOURTHWALL_RATE_LIMIT: 'lots', TWITCH_IRC_URL: 'not a url', GIFTDROP_MODE: 'party' },
        cwd: emptyDir,
      }),
    );
    const text = problems.join('\n');
    for (const name of ['HTTP_PORT', 'LOG_LEVEL', 'FOURTHWALL_RATE_LIMIT', 'TWITCH_IRC_URL', 'GIFTDROP_MODE']) expect(text).toContain(name);
    for (const secret of Object.values(live).filter((v) => v.includes('secret'))) expect(text).not.toContain(secret);
  });

  it('a refresh token beside an access token needs the client id and secret (else it would be silently unused)', () => {
    const { FOURTHWALL_USERNAME: _u, FOURTHWALL_PASSWORD: _p, ...twitchOnly } = live;
    const env = { ...twitchOnly, FOURTHWALL_ACCESS_TOKEN: 'at-very-secret-1', FOURTHWALL_REFRESH_TOKEN: 'rt-very-secret-2' };
    const text = problemsOf(() => loadConfig({ env, cwd: emptyDir })).join('\n');
    expect(text).toContain('FOURTHWALL_CLIENT_ID: required with FOURTHWALL_REFRESH_TOKEN');
    expect(text).toContain('FOURTHWALL_CLIENT_SECRET: required with FOURTHWALL_REFRESH_TOKEN');
    expect(text).not.toContain('very-secret');
    const ok = loadConfig({ env: { ...env, FOURTHWALL_CLIENT_ID: 'app-1', FOURTHWALL_CLIENT_SECRET: 'cs-very-secret-3' }, cwd: emptyDir });
    expect(ok.fourthwall.auth).toMatchObject({ kind: 'oauth', clientId: 'app-1', refreshToken: 'rt-very-secret-2' });
    // an access token alone is a plain Bearer token
    expect(loadConfig({ env: { ...twitchOnly, FOURTHWALL_ACCESS_TOKEN: 'at-very-secret-1' }, cwd: emptyDir }).mode).toBe('live');
  });

  it('loads .env without overriding the real environment', () => {
    const dir = mkdtempSync(join(tmpdir(), 'giftdrop-cfg-'));
    writeFileSync(join(dir, '.env'), 'HTTP_PORT=9000\nLOG_LEVEL=debug\n');
    const c = loadConfig({ env: { LOG_LEVEL: 'warn' }, cwd: dir });
    expect(c.http.port).toBe(9000);
    expect(c.logLevel).toBe('warn');
  });

  it('validates the JSON settings file strictly and names the bad key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'giftdrop-cfg-'));
    mkdirSync(join(dir, 'config'));
    writeFileSync(join(dir, 'config/giftdrop.json'), JSON.stringify({ links: { publicInchat: true }, gifting: { entrySeconds: 5 } }));
    const problems = problemsOf(() => loadConfig({ env: {}, cwd: dir }));
    expect(problems.join('\n')).toMatch(/links/);
    expect(problems.join('\n')).toMatch(/gifting\.entrySeconds/);

    writeFileSync(join(dir, 'config/giftdrop.json'), JSON.stringify({ links: { publicInChat: true }, claim: { seconds: 30 } }));
    const c = loadConfig({ env: {}, cwd: dir });
    expect(c.settings.links.publicInChat).toBe(true);
    expect(c.settings.claim).toEqual({ seconds: 30, maxRerolls: 3 });
    expect(c.configFile).toBe(join(dir, 'config/giftdrop.json'));
  });

  it('reports a named config file that does not exist, and invalid JSON', () => {
    expect(problemsOf(() => loadConfig({ env: { GIFTDROP_CONFIG: 'nope.json' }, cwd: emptyDir })).join()).toContain('GIFTDROP_CONFIG');
    const dir = mkdtempSync(join(tmpdir(), 'giftdrop-cfg-'));
    writeFileSync(join(dir, 'x.json'), '{oops');
    expect(problemsOf(() => loadConfig({ env: { GIFTDROP_CONFIG: 'x.json' }, cwd: dir })).join()).toContain('not valid JSON');
  });

  it('parses rate limit specs', () => {
    expect(parseRateLimitSpec('100/10s')).toEqual({ limit: 100, intervalMs: 10_000 });
    expect(parseRateLimitSpec('100 / 250ms')).toEqual({ limit: 100, intervalMs: 250 });
    expect(parseRateLimitSpec('5/1')).toEqual({ limit: 5, intervalMs: 1000 });
  });

  it('a process with bad config exits non-zero, names the field and hides the secret', () => {
    const script = "import { loadConfigOrExit } from './src/config/index.ts'; loadConfigOrExit({ dotenv: false }); console.log('loaded');";
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: join(import.meta.dirname, '..'),
      env: { PATH: process.env.PATH, GIFTDROP_MODE: 'live', TWITCH_TOKEN: 'oauth:zzz-hidden-token', GIFTDROP_CONFIG: join(emptyDir, 'absent.json') },
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('TWITCH_CHANNEL');
    expect(r.stderr).not.toContain('zzz-hidden-token');
    expect(r.stdout).not.toContain('loaded');
  });
});

describe('config/giftdrop.example.json', () => {
  it('is a valid settings file (copy it to config/giftdrop.json to use it)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'giftdrop-cfg-'));
    const c = loadConfig({ env: { GIFTDROP_CONFIG: join(import.meta.dirname, '..', 'config', 'giftdrop.example.json') }, cwd: dir });
    expect(c.settings.commands.aliases.enter).toEqual(['join']);
    expect(c.settings.eligibility.excludeLogins).toContain('nightbot');
  });
});
