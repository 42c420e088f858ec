/**
 * RoundChecker (src/beacon/round-check.ts): a drand round's BLS signature checked on
 * a worker thread started from its one-file bundle: a valid signature of the round verifies, a
 * signature of another round or under another key does not, and no "runs on the event loop" line
 * is logged (the worker started). After close, a check still answers (on the loop).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { signRound } from '../src/fairness/drand.js';
import { RoundChecker } from '../src/beacon/round-check.js';
import { createLogger } from '../src/logging/index.js';
import { localChain } from './support/beacon-vectors.js';
import { LogCapture } from './support/log-capture.js';

const checkers: RoundChecker[] = [];
afterEach(async () => {
  for (const c of checkers.splice(0)) await c.close();
});

describe('RoundChecker', () => {
  it('checks rounds on its worker thread: the right signature verifies, another round or key does not', async () => {
    const logs = new LogCapture();
    const checker = new RoundChecker(createLogger({ level: 'debug', destination: logs }));
    checkers.push(checker);
    const { chain, secretKey } = localChain('round-check');
    const other = localChain('another-chain');
    const sig = signRound(secretKey, 42);
    expect(await checker.verify(chain.publicKey, 42, sig)).toBe(true);
    expect(await checker.verify(chain.publicKey, 43, sig)).toBe(false);
    expect(await checker.verify(other.chain.publicKey, 42, sig)).toBe(false);
    expect(await checker.verify(chain.publicKey, 42, 'ab'.repeat(48))).toBe(false);
    expect(logs.text(), 'the worker started: nothing ran on the loop').not.toContain('runs on the event loop');
  });

  it('after close, a check still answers (on the event loop)', async () => {
    const checker = new RoundChecker(createLogger({ level: 'silent' }));
    const { chain, secretKey } = localChain('round-check-closed');
    checker.prepare();
    await checker.close();
    expect(await checker.verify(chain.publicKey, 7, signRound(secretKey, 7))).toBe(true);
  });
});
