import { describe, expect, it } from 'vitest';
import { ownedString } from '../src/giveaway/entrants/owned-string.js';

describe('ownedString', () => {
  it('gives back an equal string, whatever its characters', () => {
    const frame = '@badge-info=;user-id=141981764 :someviewer!someviewer@someviewer.tmi.twitch.tv PRIVMSG #chan :!enter';
    const cut = frame.slice(frame.indexOf(':someviewer'), frame.indexOf(' PRIVMSG'));
    for (const s of ['', 'short', cut, 'ユーザー名はとても長い名前です', 'lone \uD800 surrogate and more', '"quoted"\\\n\t']) {
      expect(ownedString(s)).toBe(s);
    }
  });
});
