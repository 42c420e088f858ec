import { mkdtempSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, configHint, loadConfig, parseRateLimitSpec, secretValues } from '../src/config/index.js';
import { configProblems, LIVE_ENV } from './support/config-fixtures.js';

const made: string[] = [];
/** A fresh temp folder, removed after the file's tests. */
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'giftdrop-cfg-'));
  made.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const live = LIVE_ENV;

describe('config', () => {
  const emptyDir = tempDir();

  it('defaults to sandbox mode without credentials', () => {
    const c = loadConfig({ env: {}, cwd: emptyDir });
    expect(c.mode).toBe('sandbox');
    expect(c.http).toEqual({ host: '127.0.0.1', port: 8787, localBind: '127.0.0.1', localPort: 8788 });
    expect(c.fourthwall.apiUrl).toBe('https://api.fourthwall.com/open-api/v1.0');
    expect(c.fourthwall.tokenUrl).toBe('https://api.fourthwall.com/open-api/v1.0/platform/token');
    expect(c.fourthwall.rateLimit).toEqual({ limit: 100, intervalMs: 10_000 });
    expect(c.twitch.ircUrl).toBe('wss://irc-ws.chat.twitch.tv:443');
    expect(c.settings.gifting.flow).toBe('draw');
    expect(c.settings.links.publicInChat).toBe(false);
    // Sandbox data lives apart from live data.
    expect(c.dataDir).toBe(join(emptyDir, 'data', 'sandbox'));
    expect(c.dataRoot).toBe(join(emptyDir, 'data'));
  });

  it('is live when Twitch and Fourthwall credentials are set', () => {
    const c = loadConfig({ env: { ...live, FOURTHWALL_RATE_LIMIT: '50/5s' }, cwd: emptyDir });
    expect(c.mode).toBe('live');
    expect(c.fourthwall.auth).toEqual({ kind: 'basic', username: 'api-user', password: 'pw-very-secret-456' });
    expect(c.fourthwall.rateLimit).toEqual({ limit: 50, intervalMs: 5000 });
    expect(secretValues(c)).toContain(Buffer.from('api-user:pw-very-secret-456').toString('base64'));
  });

  it('some but not all live credentials: an error naming each missing variable, never the demo', () => {
    const { TWITCH_TOKEN: _t, FOURTHWALL_PASSWORD: _p, ...partial } = live;
    const problems = configProblems(() => loadConfig({ env: partial, cwd: emptyDir }));
    expect(problems[0]).toMatch(
      /^live credentials are partly set \(TWITCH_CHANNEL, TWITCH_USERNAME, FOURTHWALL_USERNAME, FOURTHWALL_WEBHOOK_SECRET\)/,
    );
    expect(problems).toContain('TWITCH_TOKEN: required in live mode');
    expect(problems).toContain('FOURTHWALL_PASSWORD: required with FOURTHWALL_USERNAME');
    expect(problems.join('\n')).not.toContain('whsec-very-secret-789');
    // One stray variable is enough to mean "live".
    const one = configProblems(() => loadConfig({ env: { FOURTHWALL_WEBHOOK_SECRET: 'x' }, cwd: emptyDir }));
    for (const name of ['TWITCH_CHANNEL', 'TWITCH_USERNAME', 'TWITCH_TOKEN', 'FOURTHWALL_USERNAME'])
      expect(one.join('\n')).toContain(name);
    // GIFTDROP_MODE=sandbox is the explicit way to run the demo anyway.
    expect(loadConfig({ env: { ...partial, GIFTDROP_MODE: 'sandbox' }, cwd: emptyDir }).mode).toBe('sandbox');
  });

  it('live data in DATA_DIR, sandbox data in DATA_DIR/sandbox; the scripts may force a mode without credentials', () => {
    expect(loadConfig({ env: { ...live, DATA_DIR: 'store' }, cwd: emptyDir }).dataDir).toBe(join(emptyDir, 'store'));
    expect(loadConfig({ env: { DATA_DIR: 'store' }, cwd: emptyDir }).dataDir).toBe(join(emptyDir, 'store', 'sandbox'));
    // a DATA_DIR the user set that does not exist is worth a line at start (main.ts); the default is not
    expect(loadConfig({ env: { DATA_DIR: 'store' }, cwd: emptyDir }).dataDirSet).toBe(true);
    expect(loadConfig({ env: {}, cwd: emptyDir }).dataDirSet).toBeUndefined();
    const forced = loadConfig({ env: { DATA_DIR: 'store', TWITCH_TOKEN: 'x' }, cwd: emptyDir, readOnlyMode: 'live' });
    expect([forced.mode, forced.dataDir]).toEqual(['live', join(emptyDir, 'store')]);
    expect(loadConfig({ env: live, cwd: emptyDir, readOnlyMode: 'sandbox' }).dataDir).toBe(
      join(emptyDir, 'data', 'sandbox'),
    );
  });

  it('FOURTHWALL_EVENT_POLL_SECONDS: default 5, 0 turns the catch-up poll off, a bad value is named', () => {
    expect(loadConfig({ env: live, cwd: emptyDir }).fourthwall.eventPollSeconds).toBe(5);
    expect(
      loadConfig({ env: { ...live, FOURTHWALL_EVENT_POLL_SECONDS: '0' }, cwd: emptyDir }).fourthwall.eventPollSeconds,
    ).toBe(0);
    expect(
      loadConfig({ env: { ...live, FOURTHWALL_EVENT_POLL_SECONDS: '2.5' }, cwd: emptyDir }).fourthwall.eventPollSeconds,
    ).toBe(2.5);
    for (const bad of ['often', '-1', '7200']) {
      const text = configProblems(() =>
        loadConfig({ env: { ...live, FOURTHWALL_EVENT_POLL_SECONDS: bad }, cwd: emptyDir }),
      ).join('\n');
      expect(text, bad).toContain('FOURTHWALL_EVENT_POLL_SECONDS');
    }
  });

  it('names every missing live variable in one error', () => {
    const problems = configProblems(() => loadConfig({ env: { GIFTDROP_MODE: 'live' }, cwd: emptyDir }));
    const text = problems.join('\n');
    for (const name of [
      'TWITCH_CHANNEL',
      'TWITCH_USERNAME',
      'TWITCH_TOKEN',
      'FOURTHWALL_USERNAME',
      'FOURTHWALL_WEBHOOK_SECRET',
    ])
      expect(text).toContain(name);
  });

  it('reports bad fields by name together, never printing a secret', () => {
    const problems = configProblems(() =>
      loadConfig({
        env: {
          ...live,
          HTTP_PORT: '99999',
          LOG_LEVEL: 'loud',
          FOURTHWALL_RATE_LIMIT: 'lots',
          TWITCH_IRC_URL: 'not a url',
          GIFTDROP_MODE: 'party',
        },
        cwd: emptyDir,
      }),
    );
    const text = problems.join('\n');
    for (const name of ['HTTP_PORT', 'LOG_LEVEL', 'FOURTHWALL_RATE_LIMIT', 'TWITCH_IRC_URL', 'GIFTDROP_MODE'])
      expect(text).toContain(name);
    for (const secret of Object.values(live).filter((v) => v.includes('secret'))) expect(text).not.toContain(secret);
  });

  it('a refresh token beside an access token needs the client id and secret (else it would be silently unused)', () => {
    const { FOURTHWALL_USERNAME: _u, FOURTHWALL_PASSWORD: _p, ...twitchOnly } = live;
    const env = {
      ...twitchOnly,
      FOURTHWALL_ACCESS_TOKEN: 'at-very-secret-1',
      FOURTHWALL_REFRESH_TOKEN: 'rt-very-secret-2',
    };
    const text = configProblems(() => loadConfig({ env, cwd: emptyDir })).join('\n');
    expect(text).toContain('FOURTHWALL_CLIENT_ID: required with FOURTHWALL_REFRESH_TOKEN');
    expect(text).toContain('FOURTHWALL_CLIENT_SECRET: required with FOURTHWALL_REFRESH_TOKEN');
    expect(text).not.toContain('very-secret');
    const ok = loadConfig({
      env: { ...env, FOURTHWALL_CLIENT_ID: 'app-1', FOURTHWALL_CLIENT_SECRET: 'cs-very-secret-3' },
      cwd: emptyDir,
    });
    expect(ok.fourthwall.auth).toMatchObject({ kind: 'oauth', clientId: 'app-1', refreshToken: 'rt-very-secret-2' });
    // an access token alone is a plain Bearer token
    expect(
      loadConfig({ env: { ...twitchOnly, FOURTHWALL_ACCESS_TOKEN: 'at-very-secret-1' }, cwd: emptyDir }).mode,
    ).toBe('live');
  });

  it('loads .env without overriding the real environment', () => {
    const dir = tempDir();
    writeFileSync(join(dir, '.env'), 'HTTP_PORT=9000\nLOG_LEVEL=debug\n');
    const c = loadConfig({ env: { LOG_LEVEL: 'warn' }, cwd: dir });
    expect(c.http.port).toBe(9000);
    expect(c.logLevel).toBe('warn');
  });

  it('.env as Windows editors write it: a byte-order mark, CRLF line ends, paths with drive letters, backslashes and spaces', () => {
    const dir = tempDir();
    // the settings file in a folder with a space, named by an unquoted path with spaces
    const settingsDir = join(dir, 'stream setup');
    mkdirSync(settingsDir);
    const settings = join(settingsDir, 'my giftdrop.json');
    writeFileSync(settings, '\uFEFF{\r\n  "claim": { "seconds": 120 }\r\n}\r\n');
    const env = [
      'HTTP_PORT=9000',
      `GIFTDROP_CONFIG=${settings}`,
      // double quotes: dotenv would read \n as a line break; a Windows path keeps it
      'DATA_DIR="C:\\new streams\\giftdrop data"',
      "LOG_FILE='D:\\logs\\bot log.txt'",
      'LOG_LEVEL=debug',
      '',
    ];
    writeFileSync(join(dir, '.env'), '\uFEFF' + env.join('\r\n'));
    const c = loadConfig({ env: {}, cwd: dir });
    expect(c.http.port).toBe(9000); // the first line, after the byte-order mark
    expect(c.logLevel).toBe('debug'); // the last one, before its CR
    expect(c.configFile).toBe(settings);
    expect(c.settings.claim.seconds).toBe(120);
    // each path arrives as written (resolved against the folder; on Windows C:\ and D:\ are absolute)
    expect(c.dataRoot).toBe(resolve(dir, 'C:\\new streams\\giftdrop data'));
    expect(c.logFile).toBe(resolve(dir, 'D:\\logs\\bot log.txt'));
    expect(c.dataRoot).not.toMatch(/[\r\n]/);
    expect(c.logFile).not.toMatch(/[\r\n]/);
  });

  it('.env: TWITCH_CHANNEL=#channel (unquoted, where # starts a comment) is the channel; another #value says why it is empty', () => {
    const dir = tempDir();
    const { TWITCH_CHANNEL: _, ...rest } = live;
    const lines = Object.entries(rest).map(([k, v]) => `${k}=${v}`);
    writeFileSync(
      join(dir, '.env'),
      ['# my bot', 'TWITCH_CHANNEL=#MyChannel   # the channel, as Twitch writes it', ...lines, ''].join('\n'),
    );
    const c = loadConfig({ env: {}, cwd: dir });
    expect(c.mode).toBe('live');
    expect(c.twitch.channel).toBe('mychannel');
    // quoted and export forms too; the real environment still wins
    writeFileSync(join(dir, '.env'), ['export TWITCH_CHANNEL=#other_chan', ...lines, ''].join('\n'));
    expect(loadConfig({ env: {}, cwd: dir }).twitch.channel).toBe('other_chan');
    expect(loadConfig({ env: { TWITCH_CHANNEL: 'realenv' }, cwd: dir }).twitch.channel).toBe('realenv');
    writeFileSync(join(dir, '.env'), ['TWITCH_CHANNEL="#quoted"', ...lines, ''].join('\n'));
    expect(loadConfig({ env: {}, cwd: dir }).twitch.channel).toBe('quoted');
    // as Windows Notepad saves it: a byte-order mark and CRLF line ends
    writeFileSync(join(dir, '.env'), '\uFEFF' + [...lines, 'TWITCH_CHANNEL=#crlf_chan', ''].join('\r\n'));
    expect(loadConfig({ env: {}, cwd: dir }).twitch.channel).toBe('crlf_chan');
    // a channel with a space in it is not taken: the error explains the # instead
    writeFileSync(join(dir, '.env'), ['TWITCH_CHANNEL=#my channel', ...lines, ''].join('\n'));
    expect(configProblems(() => loadConfig({ env: {}, cwd: dir })).join('\n')).toContain(
      'TWITCH_CHANNEL: required in live mode (in .env, TWITCH_CHANNEL=#... is read as empty because an unquoted # starts a comment: write TWITCH_CHANNEL="#..." in quotes)',
    );
    // a password that starts with # is read as empty: the error says what happened and how to write it
    const noPw = lines.filter((l) => !l.startsWith('FOURTHWALL_PASSWORD='));
    writeFileSync(
      join(dir, '.env'),
      ['TWITCH_CHANNEL=#mychannel', 'FOURTHWALL_PASSWORD=#pw-secret', ...noPw, ''].join('\n'),
    );
    const problems = configProblems(() => loadConfig({ env: {}, cwd: dir }));
    expect(problems).toContain(
      'FOURTHWALL_PASSWORD: required with FOURTHWALL_USERNAME (in .env, FOURTHWALL_PASSWORD=#... is read as empty because an unquoted # starts a comment: write FOURTHWALL_PASSWORD="#..." in quotes)',
    );
    expect(problems.join()).not.toContain('pw-secret');
  });

  it('a settings file that is not JSON is reported with its line and column', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'x.json'), '{\n  "links": { "publicInChat": true },\n  "claim": { "seconds": , }\n}\n');
    expect(configProblems(() => loadConfig({ env: { GIFTDROP_CONFIG: 'x.json' }, cwd: dir }))).toEqual([
      `GIFTDROP_CONFIG (${join(dir, 'x.json')}): not valid JSON at line 3, column 25: unexpected ","`,
    ]);
    writeFileSync(join(dir, 'x.json'), '{\n  "links": { "publicInChat": true }\n');
    expect(configProblems(() => loadConfig({ env: { GIFTDROP_CONFIG: 'x.json' }, cwd: dir })).join()).toContain(
      'not valid JSON at line 3, column 1: unexpected end of the file',
    );
    // a byte-order mark (Windows Notepad) is not an error
    writeFileSync(join(dir, 'x.json'), '\uFEFF{ "claim": { "seconds": 30 } }');
    expect(loadConfig({ env: { GIFTDROP_CONFIG: 'x.json' }, cwd: dir }).settings.claim.seconds).toBe(30);
    writeFileSync(join(dir, 'x.json'), '{ "a": [1, 2,] }');
    expect(configProblems(() => loadConfig({ env: { GIFTDROP_CONFIG: 'x.json' }, cwd: dir })).join()).toContain(
      'line 1, column 14: unexpected "]"',
    );
  });

  it('validates the JSON settings file strictly and names the bad key', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'config'));
    writeFileSync(
      join(dir, 'config/giftdrop.json'),
      JSON.stringify({ links: { publicInchat: true }, gifting: { entrySeconds: 5 } }),
    );
    const problems = configProblems(() => loadConfig({ env: {}, cwd: dir }));
    expect(problems.join('\n')).toMatch(/links/);
    expect(problems.join('\n')).toMatch(/gifting\.entrySeconds/);

    writeFileSync(
      join(dir, 'config/giftdrop.json'),
      JSON.stringify({ links: { publicInChat: true }, claim: { seconds: 30 } }),
    );
    const c = loadConfig({ env: {}, cwd: dir });
    expect(c.settings.links.publicInChat).toBe(true);
    expect(c.settings.claim).toEqual({ seconds: 30, maxRerolls: 3 });
    expect(c.configFile).toBe(join(dir, 'config/giftdrop.json'));
  });

  it('reports a named config file that does not exist, and invalid JSON', () => {
    expect(configProblems(() => loadConfig({ env: { GIFTDROP_CONFIG: 'nope.json' }, cwd: emptyDir })).join()).toContain(
      'GIFTDROP_CONFIG',
    );
    const dir = tempDir();
    writeFileSync(join(dir, 'x.json'), '{oops');
    expect(configProblems(() => loadConfig({ env: { GIFTDROP_CONFIG: 'x.json' }, cwd: dir })).join()).toContain(
      'not valid JSON',
    );
  });

  it('suggests the known key for a typo, and labels a broken default settings file as such', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'config'));
    writeFileSync(join(dir, 'config/giftdrop.json'), JSON.stringify({ comands: {}, links: { publicInchat: true } }));
    const problems = configProblems(() => loadConfig({ env: {}, cwd: dir })).join('\n');
    expect(problems).toContain('unknown key "comands" (did you mean "commands"?)');
    expect(problems).toContain(
      'links: unknown key "publicInchat" (did you mean "publicInChat"?); known here: publicInChat',
    );
    writeFileSync(join(dir, 'config/giftdrop.json'), '{oops');
    const err = (() => {
      try {
        loadConfig({ env: {}, cwd: dir });
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(err.problems.join()).toContain(`settings file ${join(dir, 'config/giftdrop.json')}: not valid JSON`);
    expect(err.problems.join()).not.toContain('GIFTDROP_CONFIG');
    expect(configHint(err)).toContain('config/giftdrop.example.json');
    expect(configHint(err)).not.toContain('.env.example');
    expect(configHint(new ConfigError(['TWITCH_CHANNEL: required in live mode']))).toContain('.env.example');
  });

  it('parses rate limit specs', () => {
    expect(parseRateLimitSpec('100/10s')).toEqual({ limit: 100, intervalMs: 10_000 });
    expect(parseRateLimitSpec('100 / 250ms')).toEqual({ limit: 100, intervalMs: 250 });
    expect(parseRateLimitSpec('5/1')).toEqual({ limit: 5, intervalMs: 1000 });
  });

  it('a process with bad config exits non-zero, names the field and hides the secret', () => {
    const script =
      "import { loadConfigOrExit } from './src/config/index.ts'; loadConfigOrExit({ dotenv: false }); console.log('loaded');";
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: join(import.meta.dirname, '..'),
      env: {
        PATH: process.env.PATH,
        GIFTDROP_MODE: 'live',
        TWITCH_TOKEN: 'oauth:zzz-hidden-token',
        GIFTDROP_CONFIG: join(emptyDir, 'absent.json'),
      },
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
    const dir = tempDir();
    const c = loadConfig({
      env: { GIFTDROP_CONFIG: join(import.meta.dirname, '..', 'config', 'giftdrop.example.json') },
      cwd: dir,
    });
    expect(c.settings.commands.aliases.enter).toEqual(['join']);
    expect(c.settings.eligibility.excludeLogins).toContain('nightbot');
  });
});

describe("the streamer's own listener's settings", () => {
  const load = (env: Record<string, string>) => loadConfig({ env, dotenv: false, cwd: '/nonexistent' });
  it('defaults to HTTP_PORT + 1 on loopback (0 with HTTP_PORT 0), takes GIFTDROP_LOCAL_PORT and GIFTDROP_TRUST_PROXY', () => {
    expect(load({ HTTP_PORT: '9000' }).http).toMatchObject({ port: 9000, localPort: 9001, localBind: '127.0.0.1' });
    expect(load({ HTTP_PORT: '0' }).http.localPort).toBe(0);
    expect(load({ GIFTDROP_LOCAL_PORT: '7000', GIFTDROP_TRUST_PROXY: 'Cloudflare' }).http).toMatchObject({
      localPort: 7000,
      trustProxy: 'cloudflare',
    });
  });
  it('refuses a local port past 65535 or equal to HTTP_PORT, a bind beyond this machine without the overlay key, an unknown proxy', () => {
    expect(() => load({ HTTP_PORT: '65535' })).toThrow(/GIFTDROP_LOCAL_PORT: HTTP_PORT \+ 1 \(65536\) is not a port/);
    expect(() => load({ HTTP_PORT: '9000', GIFTDROP_LOCAL_PORT: '9000' })).toThrow(/must differ from HTTP_PORT/);
    expect(() => load({ GIFTDROP_LOCAL_BIND: '0.0.0.0' })).toThrow(
      /GIFTDROP_LOCAL_BIND: 0\.0\.0\.0 serves the overlay beyond this machine, which needs GIFTDROP_OVERLAY_KEY/,
    );
    expect(load({ GIFTDROP_LOCAL_BIND: '0.0.0.0', GIFTDROP_OVERLAY_KEY: 'k'.repeat(20) }).http.localBind).toBe(
      '0.0.0.0',
    );
    expect(() => load({ GIFTDROP_TRUST_PROXY: 'x-forwarded-for' })).toThrow(/GIFTDROP_TRUST_PROXY/);
  });
});
