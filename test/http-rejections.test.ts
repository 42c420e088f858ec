/**
 * RejectionLog: a flood of rejected webhook requests costs one warn line per kind and window plus
 * one counting line, while every rejection still has its own debug line.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/logging/index.js';
import { RejectionLog } from '../src/http/rejections.js';
import { LogCapture } from './support/log-capture.js';

describe('RejectionLog', () => {
  it('warns on the first rejection of a kind, counts the rest at debug, and sums them up when the window ends', () => {
    const cap = new LogCapture();
    const r = new RejectionLog(createLogger({ destination: cap, level: 'debug' }), 60_000);
    for (let i = 0; i < 5; i++) r.note('signature', { bytes: i });
    r.note('payload', { reason: 'x' });
    const lines = cap.json();
    expect(lines.filter((l) => l['level'] === 40).map((l) => l['msg'])).toEqual([
      'webhook rejected: signature not verified',
      'webhook rejected: bad payload',
    ]);
    expect(
      lines.filter((l) => l['level'] === 20 && l['msg'] === 'webhook rejected: signature not verified'),
    ).toHaveLength(4);
    r.close();
    const summary = cap.json().at(-1)!;
    expect(summary['level']).toBe(40);
    expect(summary['msg']).toBe(
      '4 more webhook request(s) rejected in the last 60 s (signature: 4); each is at debug level',
    );
    // a new window warns again on its first rejection
    r.note('signature', {});
    expect(cap.json().at(-1)!['level']).toBe(40);
    r.close();
  });

  it('at the default level a flood is two lines', () => {
    const cap = new LogCapture();
    const r = new RejectionLog(createLogger({ destination: cap }), 60_000);
    for (let i = 0; i < 1000; i++) r.note('signature', { bytes: i });
    r.close();
    expect(cap.lines).toHaveLength(2);
  });
});
