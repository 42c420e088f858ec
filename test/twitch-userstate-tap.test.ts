/**
 * userstate-tap.ts and chat-wire.ts, fed by tmi.js itself: frames go through a real tmi.js
 * client's receive path (`_onMessage`: its IRC parser and events) from a stand-in for its socket
 * (an EventEmitter with tmi.js's handler on it, as a `ws` socket has); only the network is left
 * out. The chat worker (tmi-host.ts) uses both exactly this way.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import tmi from 'tmi.js';
import { tapUserState } from '../src/twitch/userstate-tap.js';
import { LineWriter, readableLines, WireMessage } from '../src/twitch/chat-wire.js';
import { TagsMessage, plainMessage, type TmiTags } from '../src/twitch/parse.js';

const CHANNEL = '#giftdrop_demo';
const chat = (user: string, text: string, tags = '') =>
  `@badge-info=;badges=;display-name=${user};id=0b2c7a1e-5f61-4f0e-9a7e-2f1d3c4b5a69;mod=0;room-id=4242;subscriber=0;tmi-sent-ts=1767268800123;user-id=${user.length}00${user.charCodeAt(0)};user-type=${tags} :${user.toLowerCase()}!u@u.tmi.twitch.tv PRIVMSG ${CHANNEL} :${text}`;
const userState = `@badge-info=;badges=moderator/1;color=;display-name=Bot;emote-sets=0;id=7c1f0e2a-1b3c-4d5e-8f90-a1b2c3d4e5f6;mod=1;subscriber=0;user-type=mod :tmi.twitch.tv USERSTATE ${CHANNEL}`;

/** A tmi.js client reading frames from `socket` (its handler first, as on a `ws` socket it opened). */
function clientOn(socket: EventEmitter): tmi.Client {
  const client = new tmi.Client({
    options: { skipUpdatingEmotesets: true },
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
  });
  socket.on('message', (data: Buffer) => (client as unknown as { _onMessage(e: { data: string }): void })._onMessage({ data: data.toString() }));
  return client;
}

describe('userstate-tap', () => {
  it("attaches raw_message only for a frame carrying USERSTATE or PONG: chat frames are never copied, the USERSTATE is read in tmi.js's order", () => {
    const socket = new EventEmitter();
    const client = clientOn(socket);
    const seen: string[] = [];
    // (while attached, tmi.js hands every line of the frame to raw_message: the tap's user keeps its two commands)
    tapUserState(socket, client as unknown as EventEmitter, (_copy, m) => {
      if (m.command === 'USERSTATE' || m.command === 'PONG') seen.push(m.command);
    });
    const rawListenersDuringChat: number[] = [];
    client.on('message', (_ch, tags) => {
      rawListenersDuringChat.push(client.listenerCount('raw_message'));
      seen.push(`chat ${String(tags.username)}`);
    });
    socket.emit('message', Buffer.from([chat('Ann', '!enter'), chat('Bob', '!enter')].join('\r\n')));
    expect(rawListenersDuringChat).toEqual([0, 0]);
    // A frame with a USERSTATE between two chat lines: everything in order, and detached after.
    socket.emit('message', Buffer.from([chat('Cy', 'hi'), userState, chat('Di', 'yo')].join('\r\n')));
    expect(seen).toEqual(['chat ann', 'chat bob', 'chat cy', 'USERSTATE', 'chat di']);
    expect(client.listenerCount('raw_message')).toBe(0);
    socket.emit('message', Buffer.from(':tmi.twitch.tv PONG tmi.twitch.tv :giftdrop-probe-1'));
    expect(seen.at(-1)).toBe('PONG');
    expect(client.listenerCount('raw_message')).toBe(0);
  });

  it('taps a socket once, however often it is asked', () => {
    const socket = new EventEmitter();
    const client = clientOn(socket);
    let n = 0;
    tapUserState(socket, client as unknown as EventEmitter, () => n++);
    tapUserState(socket, client as unknown as EventEmitter, () => n++);
    socket.emit('message', Buffer.from(userState));
    expect(n).toBe(1);
  });
});

describe('chat-wire', () => {
  it('a line read back from the columns has every value of the parsed message, with the receive time of the batch', () => {
    const socket = new EventEmitter();
    const client = clientOn(socket);
    const parsed: TagsMessage[] = [];
    const fromTmi = (_ch: string, tags: TmiTags, text: string) => {
      const m = TagsMessage.of('giftdrop_demo', tags, text, false, 0);
      if (typeof m !== 'string') parsed.push(m);
    };
    client.on('message', (ch, tags, text) => fromTmi(ch, tags as TmiTags, text));
    client.on('cheer', (ch, tags, text) => fromTmi(ch, tags as TmiTags, text));
    socket.emit(
      'message',
      Buffer.from(
        [
          chat('Ann', '!enter'),
          chat('Sub', '!ENTER now 😀', ';subscriber=1;badges=subscriber/12,vip/1;badge-info=subscriber/14;first-msg=1'),
          chat('Mod', '\u0001ACTION dances\u0001', ';mod=1'),
          chat('Cheer', 'Cheer100 !enter', ';bits=100'),
          chat('lower', 'same name', ';display-name='),
          chat('Uni', 'ünïcode ✓ 🎁', ';display-name=ビューア'),
          // no tmi-sent-ts: the send time is the receive time
          `@badges=;display-name=Nots;id=x;room-id=4242;user-id=77 :nots!u@u.tmi.twitch.tv PRIVMSG ${CHANNEL} :late`,
        ].join('\r\n'),
      ),
    );
    expect(parsed).toHaveLength(7);
    const writer = new LineWriter();
    for (const m of parsed) writer.add(m);
    const lines = readableLines(writer.take());
    expect(lines.count).toBe(7);
    expect(writer.count).toBe(0);
    const receivedAt = 1_767_268_899_000;
    parsed.forEach((m, i) => {
      const back = plainMessage(WireMessage.read('giftdrop_demo', lines, i, receivedAt));
      const expected = { ...plainMessage(m), receivedAt, sentAt: m.sentAt > 0 ? m.sentAt : receivedAt };
      expect(back).toEqual(expected);
    });
    const back = parsed.map((_, i) => WireMessage.read('giftdrop_demo', lines, i, receivedAt));
    expect(back[1]!.roles).toEqual({ broadcaster: false, moderator: false, vip: true, subscriber: true, subMonths: 14, firstMessage: true });
    expect(back[2]!.action).toBe(true);
    expect(back[3]!.bits).toBe(100);
    expect(back[4]!.displayName).toBe('lower');
    expect(back[5]).toMatchObject({ displayName: 'ビューア', text: 'ünïcode ✓ 🎁' });
    expect(back[6]!.sentAt).toBe(receivedAt);
  });
});
