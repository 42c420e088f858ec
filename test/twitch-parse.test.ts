/**
 * The tag parser, fed by tmi.js itself: raw IRC lines go through tmi.js's own receive path
 * (`_onMessage`: its IRC parser and tag transforms), only the socket is left out.
 */
import { describe, expect, it } from 'vitest';
import tmi from 'tmi.js';
import type { ChatMessage } from '../src/shared/chat.js';
import {
  TagsMessage,
  chatMessageOf,
  parseChatMessage,
  plainMessage,
  type ParseResult,
  type TmiTags,
} from '../src/twitch/parse.js';

const NOW = Date.UTC(2026, 0, 1, 12);

/** What tmi.js's receive path hands its `message` and `cheer` listeners for raw lines, in order. */
function tmiListenerArgs(...lines: string[]): { channel: string; tags: TmiTags; text: string; self: boolean }[] {
  const client = new tmi.Client({
    options: { skipUpdatingEmotesets: true },
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
  });
  const out: { channel: string; tags: TmiTags; text: string; self: boolean }[] = [];
  client.on('message', (channel, tags, text, self) => out.push({ channel, tags: tags, text, self }));
  client.on('cheer', (channel, tags, text) => out.push({ channel, tags: tags, text, self: false }));
  (client as unknown as { _onMessage(e: { data: string }): void })._onMessage({ data: lines.join('\r\n') });
  return out;
}

/** Runs raw lines through tmi.js's receive path and parses what its listeners get. */
function viaTmi(...lines: string[]): ParseResult[] {
  return tmiListenerArgs(...lines).map((a) => parseChatMessage(a.channel, a.tags, a.text, a.self, NOW));
}

function ok(r: ParseResult | undefined): ChatMessage {
  if (!r || !r.ok) throw new Error(`not parsed: ${r && !r.ok ? r.reason : 'nothing'}`);
  return r.message;
}

const base =
  'badge-info=;badges=;color=#FF0000;display-name=Viewer_42;emotes=;first-msg=0;flags=;id=3f0d1c9e-7c55-4a44-b1a1-1f6bb6a2f0aa;' +
  'mod=0;returning-chatter=0;room-id=424242;subscriber=0;tmi-sent-ts=1767268800123;turbo=0;user-id=987654321;user-type=';
const prefix = ':viewer42!viewer42@viewer42.tmi.twitch.tv PRIVMSG #giftdrop_demo :';

function line(tags: Record<string, string>, text: string): string {
  const map = new Map(base.split(';').map((kv) => kv.split('=') as [string, string]));
  for (const [k, v] of Object.entries(tags)) map.set(k, v);
  return `@${[...map].map(([k, v]) => `${k}=${v}`).join(';')} ${prefix}${text}`;
}

/** A moderator, a vip, a subscriber, the broadcaster, a first message and a founder, in that order. */
function roleLines(): string[] {
  return [
    line({ badges: 'moderator/1', mod: '1', 'user-type': 'mod' }, 'a'),
    line({ badges: 'vip/1', vip: '1' }, 'b'),
    line({ 'badge-info': 'subscriber/14', badges: 'subscriber/12', subscriber: '1' }, 'c'),
    line({ badges: 'broadcaster/1,subscriber/0', 'user-id': '424242' }, 'd'),
    line({ 'first-msg': '1' }, 'e'),
    line({ 'badge-info': 'founder/7', badges: 'founder/0', subscriber: '0' }, 'f'),
  ];
}

describe('parseChatMessage (through tmi.js)', () => {
  it('maps a plain viewer line', () => {
    const m = ok(viaTmi(line({}, '!enter'))[0]);
    expect(m).toEqual({
      id: '3f0d1c9e-7c55-4a44-b1a1-1f6bb6a2f0aa',
      channel: 'giftdrop_demo',
      channelId: '424242',
      userId: '987654321',
      login: 'viewer42',
      displayName: 'Viewer_42',
      text: '!enter',
      roles: { broadcaster: false, moderator: false, vip: false, subscriber: false, subMonths: 0, firstMessage: false },
      bits: 0,
      action: false,
      sentAt: 1767268800123,
      receivedAt: NOW,
      self: false,
    });
  });

  it('reads every role from badges and tags', () => {
    const [mod, vip, sub, owner, first, founder] = viaTmi(...roleLines()).map(ok);
    expect(mod!.roles).toMatchObject({ moderator: true, vip: false, broadcaster: false });
    expect(vip!.roles).toMatchObject({ vip: true, moderator: false });
    expect(sub!.roles).toMatchObject({ subscriber: true, subMonths: 14 });
    expect(owner!.roles).toMatchObject({ broadcaster: true, moderator: false });
    expect(first!.roles.firstMessage).toBe(true);
    expect(founder!.roles).toMatchObject({ subscriber: true, subMonths: 7 });
  });

  it('handles a mod flag without a badge and a vip badge without the vip tag', () => {
    const [a, b] = viaTmi(line({ mod: '1' }, 'x'), line({ badges: 'vip/1' }, 'y')).map(ok);
    expect(a!.roles.moderator).toBe(true);
    expect(b!.roles.vip).toBe(true);
  });

  it('reads bits from a cheer (tmi.js fires only `cheer` for it) and /me actions', () => {
    const [cheer, action, cheerAction] = viaTmi(
      line({ bits: '100', badges: 'bits/100' }, 'Cheer100 !enter'),
      line({}, '\u0001ACTION waves at chat\u0001'),
      line({ bits: '1' }, '\u0001ACTION Cheer1 hi\u0001'),
    ).map(ok);
    expect(cheer).toMatchObject({ bits: 100, action: false, text: 'Cheer100 !enter' });
    expect(action).toMatchObject({ bits: 0, action: true, text: 'waves at chat' });
    expect(cheerAction).toMatchObject({ bits: 1, action: true, text: 'Cheer1 hi' });
  });

  it('keeps unicode and 500-character texts intact, unescapes display names', () => {
    const long = `!enter ${'ñ😀'.repeat(164)}`;
    const [u, l] = viaTmi(line({ 'display-name': 'ユーザー\\sName' }, '!enter Tシャツ 😀 ümlaut'), line({}, long)).map(
      ok,
    );
    expect(u!.text).toBe('!enter Tシャツ 😀 ümlaut');
    expect(u!.displayName).toBe('ユーザー Name');
    expect(l!.text).toBe(long);
  });

  it('falls back to the login for an empty display name and to the receive time without tmi-sent-ts', () => {
    const raw = line({ 'display-name': '' }, 'hi').replace(/tmi-sent-ts=\d+;/, '');
    const m = ok(viaTmi(raw)[0]);
    expect(m.displayName).toBe('viewer42');
    expect(m.sentAt).toBe(NOW);
  });

  it('rejects a line without a user id instead of throwing', () => {
    const raw = line({}, 'no id').replace(/user-id=\d+;/, '');
    const [r] = viaTmi(raw);
    expect(r).toEqual({ ok: false, reason: 'no user-id tag' });
    // tmi.js turns a user-id of "1" into `true`: not a usable id either.
    const [r2] = viaTmi(line({ 'user-id': '1' }, 'x'));
    expect(r2).toMatchObject({ ok: false });
  });
});

describe('TagsMessage (the receive path: fields read when first used)', () => {
  const tagsOf = tmiListenerArgs;

  const lines = [
    line({}, '!enter'),
    ...roleLines(),
    line({ mod: '1' }, 'x'),
    line({ bits: '100', badges: 'bits/100' }, 'Cheer100 !enter'),
    line({}, '\u0001ACTION waves at chat\u0001'),
    line({ 'display-name': 'ユーザー\\sName' }, '!enter Tシャツ'),
    line({ 'display-name': '' }, 'no name').replace(/tmi-sent-ts=\d+;/, ''),
    line({ 'tmi-sent-ts': '000' }, 'zero time'),
    line({ 'tmi-sent-ts': '1.7e12' }, 'exponent time'),
    line({ 'tmi-sent-ts': 'soon' }, 'word time'),
    line({ 'tmi-sent-ts': '1767268800123456789' }, 'long time'),
    line({ id: '' }, 'no id').replace(/room-id=\d+;/, ''),
  ];

  it('has every field of the plain message, with the same values', () => {
    const seen = tagsOf(...lines);
    expect(seen).toHaveLength(lines.length);
    for (const { tags, text } of seen) {
      const lazy = TagsMessage.of('giftdrop_demo', tags, text, false, NOW);
      const plain = chatMessageOf('giftdrop_demo', tags, text, false, NOW);
      if (typeof lazy === 'string' || typeof plain === 'string') throw new Error('not parsed');
      expect(plainMessage(lazy)).toEqual(plain);
      for (const key of Object.keys(plain) as (keyof typeof plain)[]) expect(lazy[key]).toEqual(plain[key]);
      expect(lazy.roles).toBe(lazy.roles);
    }
  });

  it('takes the receive time as the send time of a line without a usable one, and keeps it as receivedAt', () => {
    const seen = tagsOf(lines[0]!, lines[11]!, lines[12]!, lines[13]!, lines[14]!);
    const made = seen.map(({ tags, text }) => TagsMessage.of('c', tags, text, false, NOW + 5));
    const times = made.map((m) => (typeof m === 'string' ? m : [m.sentAt, m.receivedAt]));
    expect(times).toEqual([
      [1767268800123, NOW + 5],
      [NOW + 5, NOW + 5],
      [NOW + 5, NOW + 5],
      [1.7e12, NOW + 5],
      [NOW + 5, NOW + 5],
    ]);
  });

  it('rejects what the plain mapping rejects', () => {
    const [noId] = tagsOf(line({}, 'no id').replace(/user-id=\d+;/, ''));
    expect(TagsMessage.of('c', noId!.tags, noId!.text, false, NOW)).toBe('no user-id tag');
  });
});
