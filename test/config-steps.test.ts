// loadConfig's steps, each alone (src/config/index.ts): what each one reads and what it reports.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  chooseMode,
  credentialsPresent,
  formatProblems,
  fourthwallRateLimit,
  liveModeProblems,
  mergeEnvironment,
  rawEnvironment,
  readSettingsFile,
  validateEnvironment,
} from '../src/config/index.js';

const dir = mkdtempSync(join(tmpdir(), 'giftdrop-cfg-steps-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const raw = (env: Record<string, string>) => rawEnvironment(env, validateEnvironment(env).env);

describe('loadConfig steps', () => {
  it('mergeEnvironment: the real environment wins over .env; an unquoted #value is named', () => {
    writeFileSync(join(dir, '.env'), 'HTTP_PORT=1\nTWITCH_TOKEN=#oops\nLOG_LEVEL=debug\n');
    const s = mergeEnvironment({ env: { HTTP_PORT: '2' } }, dir);
    expect(s.merged.HTTP_PORT).toBe('2');
    expect(s.merged.LOG_LEVEL).toBe('debug');
    expect(s.hashed).toEqual(['TWITCH_TOKEN']);
    expect(mergeEnvironment({ env: {}, dotenv: false }, dir).merged).toEqual({});
  });

  it('validateEnvironment: typed values, or one problem naming the field', () => {
    expect(validateEnvironment({ HTTP_PORT: '9000' }).env?.HTTP_PORT).toBe(9000);
    const bad = validateEnvironment({ HTTP_PORT: 'abc' });
    expect(bad.env).toBeUndefined();
    expect(bad.problems.some((p) => p.startsWith('HTTP_PORT:'))).toBe(true);
  });

  it('readSettingsFile: defaults without a file; a named missing file and bad JSON are problems', () => {
    const none = readSettingsFile(dir, {}, undefined);
    expect(none.problems).toEqual([]);
    expect(none.configFile).toBeUndefined();
    expect(readSettingsFile(dir, { GIFTDROP_CONFIG: 'missing.json' }, undefined).problems[0]).toMatch(
      /^GIFTDROP_CONFIG: file not found: /,
    );
    writeFileSync(join(dir, 'bad.json'), '{\n  "draw": ,\n}');
    const bad = readSettingsFile(dir, { GIFTDROP_CONFIG: 'bad.json' }, undefined);
    expect(bad.configFile).toBe(join(dir, 'bad.json'));
    expect(bad.problems[0]).toMatch(/not valid JSON at line 2, column/);
  });

  it('chooseMode: any live credential means live; forced and named modes win', () => {
    const none = raw({});
    expect(chooseMode(none, credentialsPresent(none))).toBe('sandbox');
    const one = raw({ TWITCH_TOKEN: 'x' });
    expect(chooseMode(one, credentialsPresent(one))).toBe('live');
    expect(chooseMode(one, credentialsPresent(one), 'sandbox')).toBe('sandbox');
    const named = raw({ GIFTDROP_MODE: 'sandbox', TWITCH_TOKEN: 'x' });
    expect(chooseMode(named, credentialsPresent(named))).toBe('sandbox');
  });

  it('liveModeProblems: names each missing piece; none in sandbox mode', () => {
    const e = raw({ TWITCH_CHANNEL: 'abc', FOURTHWALL_USERNAME: 'u' });
    const has = credentialsPresent(e);
    expect(liveModeProblems(e, has, 'sandbox')).toEqual([]);
    const problems = liveModeProblems(e, has, 'live');
    expect(problems).toContain('TWITCH_TOKEN: required in live mode');
    expect(problems).toContain('FOURTHWALL_PASSWORD: required with FOURTHWALL_USERNAME');
    expect(problems.some((p) => p.startsWith('FOURTHWALL_WEBHOOK_SECRET:'))).toBe(true);
  });

  it('formatProblems and fourthwallRateLimit: shapes and the 100 per 10 s default', () => {
    expect(formatProblems(raw({ TWITCH_CHANNEL: 'a b', TWITCH_IRC_URL: 'http://x' }))).toEqual([
      'TWITCH_CHANNEL: must be a Twitch login (letters, digits, underscore)',
      'TWITCH_IRC_URL: must start with ws:// or wss://',
    ]);
    expect(fourthwallRateLimit({ FOURTHWALL_RATE_LIMIT: undefined }).window).toEqual({
      limit: 100,
      intervalMs: 10_000,
    });
    expect(fourthwallRateLimit({ FOURTHWALL_RATE_LIMIT: '0/5s' }).problems).toEqual([
      'FOURTHWALL_RATE_LIMIT: both numbers must be positive',
    ]);
  });
});
