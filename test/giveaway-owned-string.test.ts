import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { ownedString } from '../src/giveaway/entrants/owned-string.js';

describe('ownedString', () => {
  it('gives back an equal string, whatever its characters', () => {
    const frame =
      '@badge-info=;user-id=141981764 :someviewer!someviewer@someviewer.tmi.twitch.tv PRIVMSG #chan :!enter';
    const cut = frame.slice(frame.indexOf(':someviewer'), frame.indexOf(' PRIVMSG'));
    for (const s of [
      '',
      'short',
      cut,
      'ユーザー名はとても長い名前です',
      'lone \uD800 surrogate and more',
      '"quoted"\\\n\t',
    ]) {
      expect(ownedString(s)).toBe(s);
    }
  });
});

/**
 * The V8 behaviour ownedString relies on, pinned: a substring of 13 or more characters is a view
 * into the string it was cut from (keeping it keeps the whole chat frame alive), one of 12 or fewer
 * is a copy. Measured in a child process (its own heap, --expose-gc): 16 MB frames, the heap still
 * held after the frame is dropped. If V8 moved its threshold, this fails and owned-string.ts's
 * `s.length < 13` must follow.
 */
describe('the V8 sliced-string threshold ownedString relies on', () => {
  it(
    'a 13-character slice pins its 16 MB frame, a 12-character one does not; ownedString pins nothing',
    { timeout: 60_000 },
    () => {
      const out = execFileSync(
        process.execPath,
        ['--expose-gc', '--import', 'tsx', 'test/support/sliced-string-child.ts'],
        { encoding: 'utf8' },
      );
      const r = JSON.parse(out) as {
        frameBytes: number;
        slice12: number;
        slice13: number;
        owned13: number;
        owned40: number;
      };
      const pinned = r.frameBytes / 2; // a one-byte string of frameBytes characters: at least half of it must show
      expect(r.slice13).toBeGreaterThan(pinned);
      expect(r.slice12).toBeLessThan(1 << 20);
      expect(r.owned13).toBeLessThan(1 << 20);
      expect(r.owned40).toBeLessThan(1 << 20);
    },
  );
});
