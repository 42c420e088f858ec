import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/logging/index.js';
import { FourthwallNetworkError } from '../src/fourthwall/errors.js';
import { connect, createServer, type AddressInfo } from 'node:net';
import { LogCapture } from './support/log-capture.js';

describe('logging', () => {
  it('redacts the named secret fields (top level, headers) and registered secret values anywhere in a line', () => {
    const cap = new LogCapture();
    const log = createLogger({ destination: cap, secrets: ['pw-s3cret-value', 'tok-abcdef'] });
    log.info(
      {
        headers: { authorization: 'Basic QWxhZGRpbjpvcGVu' },
        password: 'pw-s3cret-value',
        deep: { a: { token: 'tok-abcdef' } },
      },
      'calling with pw-s3cret-value inside the message',
    );
    log.child({ module: 'x' }).error({ err: new Error('failed for tok-abcdef') }, 'oops');
    const text = cap.text();
    expect(cap.lines).toHaveLength(2);
    expect(text).not.toContain('pw-s3cret-value');
    expect(text).not.toContain('tok-abcdef');
    expect(text).not.toContain('QWxhZGRpbjpvcGVu');
    expect(text).toContain('[REDACTED]');
    expect(cap.json()[1]!.module).toBe('x');
  });

  it('a routine network failure is one line without a stack at info; at debug it keeps its stack; other errors always do', async () => {
    // a real refused connection: a port nothing listens on (opened, then closed)
    const refused = await new Promise<Error>((resolve) => {
      const srv = createServer();
      srv.listen(0, '127.0.0.1', () => {
        const port = (srv.address() as AddressInfo).port;
        srv.close(() => connect(port, '127.0.0.1').on('error', resolve));
      });
    });
    expect((refused as { code?: string }).code).toBe('ECONNREFUSED');
    const wrapped = new FourthwallNetworkError(
      'ECONNREFUSED',
      false,
      { operation: 'getShop', method: 'GET', path: '/shops/current' },
      { cause: refused },
    );
    const cap = new LogCapture();
    const log = createLogger({ destination: cap, level: 'info' });
    log.child({ module: 'x' }).warn({ err: wrapped }, 'could not read the shop yet; events wait until it is known');
    log.warn({ err: refused }, 'raw refusal');
    log.error({ err: new TypeError('x is not a function') }, 'bug');
    const [one, two, bug] = cap.json() as { err: Record<string, unknown> }[];
    expect(one!.err).toEqual({
      type: 'FourthwallNetworkError',
      message: 'Fourthwall connection failed (ECONNREFUSED) (getShop GET /shops/current)',
      code: 'FOURTHWALL_NETWORK',
      cause: 'ECONNREFUSED',
    });
    expect(two!.err['stack']).toBeUndefined();
    expect(cap.lines).toHaveLength(3);
    expect(String(bug!.err['stack'])).toMatch(/TypeError: x is not a function\n\s+at /);
    const dbg = new LogCapture();
    createLogger({ destination: dbg, level: 'debug' }).warn({ err: wrapped }, 'same, at debug');
    expect(String((dbg.json()[0] as { err: Record<string, unknown> }).err['stack'])).toMatch(/\n\s+at /);
  });

  it('never prints a gift or giveaway link', () => {
    const cap = new LogCapture();
    const log = createLogger({ destination: cap });
    log.info(
      { winner: 'viewer', url: 'https://shop.example.com/gifts/gft_EdJvIXu3SEiXe_QkPavHSA' },
      'link https://fourthwall.com/gifts/gft_abc-1',
    );
    expect(cap.text()).not.toMatch(/gft_/);
    expect(cap.json()[0]!.winner).toBe('viewer');
  });

  it('censors a whole redeem URL, its path and query included (not only up to the gift id)', () => {
    const cap = new LogCapture();
    const log = createLogger({ destination: cap });
    const url = 'https://shop.example.com/gifts/gft_Ab1/redeem?platform=TWITCH&token=rdm-T0KEN-value';
    log.warn({ err: new Error(`could not deliver ${url}`) }, `winner link ${url} (sent)`);
    const text = cap.text();
    expect(text).not.toContain('rdm-T0KEN-value');
    expect(text).not.toContain('/redeem');
    expect(cap.json()[0]!.msg).toBe('winner link [REDACTED] (sent)');
  });

  it('honours the level', () => {
    const cap = new LogCapture();
    const log = createLogger({ destination: cap, level: 'warn' });
    log.info('hidden');
    log.warn('shown');
    expect(cap.lines).toHaveLength(1);
  });
});

describe('logging destinations', () => {
  it('with a file, every line also lands in it as JSON (owner-only), scrubbed the same way', async () => {
    const { mkdtempSync, readFileSync, rmSync, statSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'giftdrop-logfile-'));
    try {
      const file = join(dir, 'logs', 'giftdrop.log');
      const cap = new LogCapture();
      const log = createLogger({ destination: cap, file, secrets: ['tok-abcdef'] });
      log.info({ n: 1 }, 'first with tok-abcdef and https://s.example/gifts/gft_1/redeem?token=x');
      log.warn('second');
      const lines = readFileSync(file, 'utf8').trim().split('\n');
      expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual([
        'first with [REDACTED] and [REDACTED]',
        'second',
      ]);
      expect(cap.lines).toHaveLength(2);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
