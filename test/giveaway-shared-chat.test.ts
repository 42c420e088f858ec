/**
 * The Shared Chat rule (src/giveaway/shared-chat.ts) as data, and what it leaves behind: a partner
 * viewer's channel survives the entry journal (its line format, read back after a restart), and
 * the per-channel counts (shared-chat-counts.ts) are right, ordered, named where a login is known
 * and asked for where it is not. The whole path through the IRC sandbox is
 * test/e2e-shared-chat.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { EntrantTable } from '../src/giveaway/entrants/index.js';
import { LineBytes } from '../src/giveaway/entrants/journal-line.js';
import type { DrawRecord, Entrant } from '../src/giveaway/model.js';
import { chatOrigin, commandGate, mayEnter, mayRunCommand } from '../src/giveaway/shared-chat.js';
import { channelCounts, recordChannelCounts } from '../src/giveaway/shared-chat-counts.js';
import { noRoles, type ChatMessage } from '../src/shared/chat.js';
import { parseJournal } from '../src/storage/journal.js';

const HERE = '111111111';
const PARTNER = '222222222';
const off = { partnerEntries: false };
const on = { partnerEntries: true };

function msg(over: Partial<ChatMessage> = {}): ChatMessage {
  return {
    id: 'm1',
    channel: 'here',
    channelId: HERE,
    userId: '333',
    login: 'fan',
    displayName: 'fan',
    text: '!enter',
    roles: noRoles,
    bits: 0,
    action: false,
    sentAt: 1,
    self: false,
    ...over,
  };
}

describe('the Shared Chat rule', () => {
  it('own: no source channel, or the source channel is this channel; partner: any other; source-only: ignored', () => {
    expect(chatOrigin(msg())).toBe('own');
    expect(chatOrigin(msg({ sourceChannelId: HERE }))).toBe('own');
    expect(chatOrigin(msg({ sourceChannelId: PARTNER }))).toBe('partner');
    expect(chatOrigin(msg({ sourceChannelId: HERE, sourceOnly: true }))).toBe('source-only');
    expect(chatOrigin(msg({ sourceChannelId: PARTNER, sourceOnly: true }))).toBe('source-only');
    expect(chatOrigin(msg({ sourceChannelId: HERE, sourceOnly: false }))).toBe('own');
    // this channel's id from chat when the message lacks it; unknown on both sides: not provably own
    expect(chatOrigin(msg({ channelId: undefined, sourceChannelId: HERE }), HERE)).toBe('own');
    expect(chatOrigin(msg({ channelId: undefined, sourceChannelId: HERE }))).toBe('partner');
  });

  it('entries: own always, partner only with partnerEntries, source-only never', () => {
    expect([mayEnter('own', off), mayEnter('partner', off), mayEnter('source-only', off)]).toEqual([
      true,
      false,
      false,
    ]);
    expect([mayEnter('own', on), mayEnter('partner', on), mayEnter('source-only', on)]).toEqual([true, true, false]);
  });

  it('commands: own any; partner only enter and claim, and only with partnerEntries; source-only none', () => {
    for (const c of ['enter', 'claim', 'giveaway', 'stream', 'merch']) {
      expect(mayRunCommand('own', c, off)).toBe(true);
      expect(mayRunCommand('partner', c, off)).toBe(false);
      expect(mayRunCommand('partner', c, on)).toBe(c === 'enter' || c === 'claim');
      expect(mayRunCommand('source-only', c, on)).toBe(false);
    }
    // the registry's gate reads this channel's id from chat on every message
    let chatId: string | undefined;
    const gate = commandGate(off, () => chatId);
    const noRoomId = msg({ channelId: undefined, sourceChannelId: HERE, text: '!giveaway end' });
    expect(gate(noRoomId, 'giveaway')).toBe(false);
    chatId = HERE;
    expect(gate(noRoomId, 'giveaway')).toBe(true);
  });
});

const roles = { ...noRoles };
function entrant(userId: string, partnerChannelId?: string): Entrant {
  return {
    userId,
    login: `u${userId}`,
    displayName: `U${userId}`,
    weight: 1,
    roles,
    enteredAt: 1_767_300_000_000,
    ...(partnerChannelId ? { partnerChannelId } : {}),
  };
}

describe('a partner viewer in the entrant store and its journal', () => {
  it('keeps the partner channel through the journal line (read back after a restart): counts unchanged', () => {
    const table = new EntrantTable();
    const ids = ['100000000001', '100000000002', '100000000003', '100000000004', '100000000005'];
    table.add(entrant(ids[0]!));
    table.addFields(ids[1]!, 'pfan', 'PFan', 1, 0, 0, 5, PARTNER);
    table.add(entrant(ids[2]!, PARTNER));
    table.add(entrant(ids[3]!, '444444444'));
    table.add(entrant(ids[4]!));
    expect(table.partnerCounts()).toEqual(
      new Map([
        [PARTNER, 2],
        ['444444444', 1],
      ]),
    );
    expect(table.get(ids[0]!)).not.toHaveProperty('partnerChannelId');
    expect(table.get(ids[1]!)?.partnerChannelId).toBe(PARTNER);

    // both ways the journal writes rows: copied from the columns, and one by one
    for (const write of [
      (b: LineBytes) => b.addRows(table, 0, table.size),
      (b: LineBytes) => {
        for (let r = 0; r < table.size; r++) b.addRow(table, r);
      },
    ]) {
      const bytes = new LineBytes(64);
      write(bytes);
      const parsed = parseJournal(bytes.bytes().toString('utf8'));
      expect(parsed.badLines).toEqual([]);
      expect(parsed.entrants.map((e) => e.partnerChannelId)).toEqual([
        undefined,
        PARTNER,
        PARTNER,
        '444444444',
        undefined,
      ]);
      const restored = new EntrantTable(parsed.entrants);
      expect(restored.partnerCounts()).toEqual(table.partnerCounts());
      expect([...restored.values()]).toEqual([...table.values()]);
    }
  });
});

describe('entrants by channel', () => {
  const here = { channelLogin: 'home_chan', channelId: () => HERE };

  it('this channel first (even with 0), then partners by count; logins where known, lookups asked for the others', () => {
    const table = new EntrantTable([
      entrant('100000000011', PARTNER),
      entrant('100000000012', PARTNER),
      entrant('100000000013', '555555555'),
    ]);
    const asked: string[] = [];
    const directory = {
      loginOf: (id: string) => (id === PARTNER ? 'partner_chan' : undefined),
      lookUp: (id: string) => void asked.push(id),
    };
    expect(channelCounts(table, here, directory)).toEqual([
      { channelId: HERE, login: 'home_chan', entrants: 0, own: true },
      { channelId: PARTNER, login: 'partner_chan', entrants: 2 },
      { channelId: '555555555', entrants: 1 },
    ]);
    expect(asked).toEqual(['555555555']);
  });

  it('is recorded with partner entries on, or when the draw has partner entrants; never otherwise', () => {
    const record = () => ({ entrants: 0 }) as DrawRecord;
    const own = new EntrantTable([entrant('100000000021')]);
    const a = record();
    recordChannelCounts(a, own, here, off);
    expect(a.entrantsByChannel).toBeUndefined();
    recordChannelCounts(a, own, here, on);
    expect(a.entrantsByChannel).toEqual([{ channelId: HERE, login: 'home_chan', entrants: 1, own: true }]);
    // restored after the setting was turned off: the partner entrants are still counted
    const b = record();
    recordChannelCounts(b, new EntrantTable([entrant('100000000022', PARTNER)]), here, off);
    expect(b.entrantsByChannel).toEqual([
      { channelId: HERE, login: 'home_chan', entrants: 0, own: true },
      { channelId: PARTNER, entrants: 1 },
    ]);
  });
});
