/**
 * The winner chat catch (src/web/operator/chat-log.ts) listens to chat only while it could catch a line:
 * a catch window after winners were announced, or a draw in its claim window. Driven through its
 * ports (a chat emitter, the engine's events, claimsOpen and claimDrawsOf) on a manual clock.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { GiveawayEventMap } from '../src/giveaway/context.js';
import type { DrawRecord } from '../src/giveaway/model.js';
import { noRoles, type ChatMessage } from '../src/shared/chat.js';
import { ManualClock } from '../src/shared/clock.js';
import { ChatLog } from '../src/web/operator/chat-log.js';
import { IdSketch } from '../src/web/operator/id-sketch.js';
import { sandboxRecord } from './support/beacon-vectors.js';

function line(userId: string, text: string): ChatMessage {
  return {
    channel: 'giftdrop_demo',
    userId,
    login: `user${userId}`,
    displayName: `User${userId}`,
    text,
    sentAt: 0,
    self: false,
    roles: { ...noRoles },
    id: '',
    bits: 0,
    action: false,
  };
}

function setup() {
  const chat = new EventEmitter();
  const events = new EventEmitter<GiveawayEventMap>();
  const clock = new ManualClock();
  let claiming: DrawRecord[] = [];
  const log = new ChatLog({
    chat,
    engine: {
      events,
      claimsOpen: () => claiming.length > 0,
      claimDrawsOf: (userId) => claiming.filter((r) => r.winners.some((w) => w.userId === userId)),
    },
    clock,
    catchSeconds: 60,
  });
  const say = (userId: string, text: string) => chat.emit('message', line(userId, text));
  return { chat, events, clock, log, say, setClaims: (records: DrawRecord[]) => (claiming = records) };
}

describe('winner chat catch', () => {
  it('stops listening at the first line nothing could catch, and wakes for announced winners until their window ends', () => {
    const { chat, events, clock, log, say } = setup();
    expect(log.isListening()).toBe(true);
    say('1', 'hello');
    expect(log.isListening()).toBe(false);
    expect(chat.listenerCount('message')).toBe(0);

    const record = sandboxRecord({ id: 'draw-w', winners: 2 });
    const winner = record.winners[0]!;
    events.emit('winners', record, record.winners);
    expect(chat.listenerCount('message')).toBe(1);
    say('999', 'not a winner');
    say(winner.userId, 'I won!');
    expect(log.winnerLines().map((l) => [l.drawId, l.text])).toEqual([['draw-w', 'I won!']]);
    expect(log.isListening()).toBe(true);

    // The window ends on the clock's timer: chat is let go before any further line arrives.
    clock.advance(59_999);
    expect(log.isListening()).toBe(true);
    clock.advance(1);
    expect(chat.listenerCount('message')).toBe(0);
    events.emit('claim-opened', record.id, new Date().toISOString());
    say(winner.userId, 'too late');
    expect(log.winnerLines()).toHaveLength(1);
    expect(log.isListening()).toBe(false);
  });

  it('wakes when a claim window opens and catches the winners of draws in it, then sleeps once none is open', () => {
    const { chat, events, log, say, setClaims } = setup();
    say('1', 'hello');
    expect(log.isListening()).toBe(false);
    const record = sandboxRecord({ id: 'draw-c', winners: 1 });
    setClaims([record]);
    events.emit('claim-opened', record.id, new Date().toISOString());
    say(record.winners[0]!.userId, '!claim');
    expect(log.overlayLines('draw-c').map((l) => l.text)).toEqual(['!claim']);
    setClaims([]);
    say('2', 'chat goes on');
    expect(chat.listenerCount('message')).toBe(0);
  });

  it('a later announcement extends the catch to its own window end, and close() cancels the timer', () => {
    const { events, clock, log, say } = setup();
    const first = sandboxRecord({ id: 'draw-1', winners: 1 });
    const second = sandboxRecord({ id: 'draw-2', winners: 1 });
    events.emit('winners', first, first.winners);
    clock.advance(30_000);
    events.emit('winners', second, second.winners);
    clock.advance(40_000); // the first window ended 10 s ago, the second has 20 s left
    expect(log.isListening()).toBe(true);
    say(first.winners[0]!.userId, 'first, late');
    say(second.winners[0]!.userId, 'second, in time');
    expect(log.winnerLines().map((l) => [l.drawId, l.text])).toEqual([['draw-2', 'second, in time']]);
    expect(clock.pending()).toBe(1);
    log.close();
    expect(clock.pending()).toBe(0);
  });

  it("catches a winner, not a chatter whose id ends like the winner's", () => {
    const { events, log, say } = setup();
    const record = sandboxRecord({ id: 'draw-t', winners: 1 });
    const winner = record.winners[0]!.userId;
    events.emit('winners', record, record.winners);
    say(`9${winner}`, 'same last characters');
    say('1', 'another chatter');
    say(winner, 'the winner');
    expect(log.winnerLines().map((l) => l.text)).toEqual(['the winner']);
  });

  it('asks the engine about claim windows again only after one announced itself', () => {
    const chat = new EventEmitter();
    const events = new EventEmitter<GiveawayEventMap>();
    let asked = 0;
    let claiming: DrawRecord[] = [];
    const log = new ChatLog({
      chat,
      engine: {
        events,
        claimsOpen: () => (asked++, claiming.length > 0),
        claimDrawsOf: (id) => claiming.filter((r) => r.winners.some((w) => w.userId === id)),
      },
      clock: new ManualClock(),
      catchSeconds: 60,
    });
    const announced = sandboxRecord({ id: 'draw-a', winners: 1 });
    events.emit('winners', announced, announced.winners);
    for (let i = 0; i < 100; i++) chat.emit('message', line(String(1000 + i), 'chatter'));
    expect(asked).toBe(1);
    const claim = sandboxRecord({ id: 'draw-c', winners: 1 });
    claiming = [claim];
    events.emit('claim-opened', claim.id, new Date().toISOString());
    chat.emit('message', line(claim.winners[0]!.userId, '!claim'));
    expect(log.winnerLines().map((l) => [l.drawId, l.text])).toContainEqual(['draw-c', '!claim']);
    log.close();
  });

  it('IdSketch: never denies an id it holds, and denies most others', () => {
    const sketch = new IdSketch();
    const held = ['141981764', '12826', '7', '', '402911930'];
    sketch.reset(held);
    for (const id of held) expect(sketch.mayHave(id)).toBe(true);
    let denied = 0;
    for (let i = 0; i < 10_000; i++) if (!sketch.mayHave(String(100_000_000 + i * 7919))) denied++;
    expect(denied).toBeGreaterThan(9_000);
    sketch.reset();
    expect(held.some((id) => sketch.mayHave(id))).toBe(false);
  });

  it('a closed log listens to nothing, whatever the engine announces', () => {
    const { chat, events, log } = setup();
    log.close();
    const record = sandboxRecord({ id: 'draw-x', winners: 1 });
    events.emit('winners', record, record.winners);
    events.emit('claim-opened', record.id, new Date().toISOString());
    expect(chat.listenerCount('message')).toBe(0);
    expect(
      events.listenerCount('winners') + events.listenerCount('claim-opened') + events.listenerCount('rerolled'),
    ).toBe(0);
  });
});
