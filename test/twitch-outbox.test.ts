import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/shared/clock.js';
import { silentLogger } from '../src/logging/index.js';
import { Outbox, type OutboxLimits } from '../src/twitch/outbox.js';
import { capturingLogger, FakeTransport, settle } from './support/twitch-fakes.js';

const INVISIBLE = /[\s\u{E0000}]+$/u;

function setup(limits: Partial<OutboxLimits> = {}, paused = false) {
  const clock = new ManualClock();
  const transport = new FakeTransport(clock);
  const outbox = new Outbox({ channel: '#Giftdrop_Demo', transport, clock, logger: silentLogger(), limits, paused });
  const dropped: { text: string; reason: string; detail?: string }[] = [];
  outbox.on('dropped', (text: string, reason: string, detail?: string) => dropped.push({ text, reason, detail }));
  return { clock, transport, outbox, dropped };
}

/** Moves the manual clock forward in steps, letting transport promises settle between steps. */
async function run(clock: ManualClock, ms: number, step = 50): Promise<void> {
  await settle();
  for (let t = 0; t < ms; t += step) {
    clock.advance(step);
    await settle();
  }
}

function assertWindow(times: number[], limit: number, windowMs: number): void {
  for (let i = limit; i < times.length; i++) {
    expect(times[i]! - times[i - limit]!, `line ${i} vs line ${i - limit}`).toBeGreaterThanOrEqual(windowMs);
  }
}

describe('Outbox pacing', () => {
  it('never puts more than 20 lines in any 32 s window and keeps >= 1.1 s between lines (not mod)', async () => {
    const { clock, transport, outbox } = setup();
    for (let i = 0; i < 60; i++) outbox.say(`line number ${i}`);
    await run(clock, 200_000);
    const times = transport.written.map((w) => w.at);
    expect(transport.texts()).toEqual(Array.from({ length: 60 }, (_, i) => `line number ${i}`));
    assertWindow(times, 20, 32_000);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(1100);
    // The window is the binding limit for line 21: it waits for the first line to leave the window.
    expect(times[20]! - times[0]!).toBe(32_000);
    expect(transport.written.every((w) => w.channel === 'giftdrop_demo')).toBe(true);
  });

  it('uses 100 per window without per-line pacing once mod status is confirmed, and falls back when lost', async () => {
    const { clock, transport, outbox } = setup();
    outbox.setPrivileged(true);
    for (let i = 0; i < 150; i++) outbox.say(`mod line ${i}`);
    await settle();
    expect(transport.written).toHaveLength(100);
    expect(new Set(transport.written.map((w) => w.at)).size).toBe(1);
    await run(clock, 33_000);
    expect(transport.written).toHaveLength(150);
    assertWindow(
      transport.written.map((w) => w.at),
      100,
      32_000,
    );

    outbox.setPrivileged(false);
    for (let i = 0; i < 5; i++) outbox.say(`plain ${i}`);
    await run(clock, 40_000);
    const plain = transport.written.slice(150);
    expect(plain).toHaveLength(5);
    // 50 attempts are still inside the window when mod status is lost: regular limits wait for them.
    const all = transport.written.map((w) => w.at);
    for (const p of plain) {
      expect(all.filter((t) => t > p.at - 32_000 && t <= p.at).length).toBeLessThanOrEqual(20);
    }
    expect(plain[0]!.at).toBeGreaterThanOrEqual(transport.written[149]!.at + 32_000 - 1);
  });

  it('honours slow mode (seconds from ROOMSTATE) for non-mods only', async () => {
    const { clock, transport, outbox } = setup();
    outbox.setSlowMode(3);
    for (let i = 0; i < 4; i++) outbox.say(`slow ${i}`);
    await run(clock, 20_000);
    const times = transport.written.map((w) => w.at);
    expect(times).toHaveLength(4);
    for (let i = 1; i < 4; i++) expect(times[i]! - times[i - 1]!).toBe(3100);

    outbox.setPrivileged(true);
    for (let i = 0; i < 4; i++) outbox.say(`fast ${i}`);
    await settle();
    expect(transport.written).toHaveLength(8);
  });
});

describe('Outbox duplicate rule', () => {
  it('varies a repeated text invisibly within 30 s when not mod, and repeats it verbatim after', async () => {
    const { clock, transport, outbox } = setup();
    outbox.say('Giveaway open! Type !enter');
    outbox.say('Giveaway open! Type !enter');
    outbox.say('Giveaway open! Type !enter');
    await run(clock, 5_000);
    const texts = transport.texts();
    expect(texts).toHaveLength(3);
    expect(new Set(texts).size).toBe(3);
    for (const t of texts) expect(t.replace(INVISIBLE, '')).toBe('Giveaway open! Type !enter');
    expect(texts[0]).toBe('Giveaway open! Type !enter');

    await run(clock, 31_000);
    outbox.say('Giveaway open! Type !enter');
    await run(clock, 2_000);
    expect(transport.texts()[3]).toBe('Giveaway open! Type !enter');
  });

  it('waits out the duplicate window when a variation would exceed 500 characters', async () => {
    const { clock, transport, outbox } = setup();
    const long = `${'word '.repeat(99)}abcd`; // 499 characters
    expect(long).toHaveLength(499);
    outbox.say(long);
    outbox.say(long);
    await run(clock, 60_000);
    expect(transport.written).toHaveLength(2);
    expect(transport.written.every((w) => w.text === long)).toBe(true);
    expect(transport.written[1]!.at - transport.written[0]!.at).toBeGreaterThan(30_000);
  });

  it('sends identical lines verbatim when mod (mods are exempt)', async () => {
    const { transport, outbox } = setup();
    outbox.setPrivileged(true);
    outbox.say('same');
    outbox.say('same');
    await settle();
    expect(transport.texts()).toEqual(['same', 'same']);
  });
});

describe('Outbox priorities and staleness', () => {
  it('sends high before normal before low, FIFO within a priority', async () => {
    const { clock, transport, outbox } = setup({}, true);
    outbox.say('low 1', { priority: 'low' });
    outbox.say('normal 1');
    outbox.say('high 1', { priority: 'high' });
    outbox.say('low 2', { priority: 'low' });
    outbox.say('high 2', { priority: 'high' });
    outbox.say('normal 2', { priority: 'normal' });
    outbox.resume();
    await run(clock, 10_000);
    expect(transport.texts()).toEqual(['high 1', 'high 2', 'normal 1', 'normal 2', 'low 1', 'low 2']);
  });

  it('drops a low line that went stale while higher lines were paced', async () => {
    const { clock, transport, outbox, dropped } = setup();
    for (let i = 0; i < 5; i++) outbox.say(`winner ${i}`, { priority: 'high' });
    outbox.say('reminder: type !enter', { priority: 'low', staleAfterMs: 3000 });
    outbox.say('reminder that does not expire', { priority: 'low' });
    await run(clock, 20_000);
    expect(transport.texts()).toEqual([
      'winner 0',
      'winner 1',
      'winner 2',
      'winner 3',
      'winner 4',
      'reminder that does not expire',
    ]);
    expect(dropped).toEqual([{ text: 'reminder: type !enter', reason: 'stale', detail: undefined }]);
    expect(outbox.stats()).toMatchObject({ sent: 6, dropped: 1, queued: 0 });
  });

  it('idle() resolves once everything is written', async () => {
    const { clock, transport, outbox } = setup();
    outbox.say('a');
    outbox.say('b');
    let done = false;
    void outbox.idle().then(() => (done = true));
    await settle();
    expect(done).toBe(false);
    await run(clock, 2_000);
    expect(done).toBe(true);
    expect(transport.texts()).toEqual(['a', 'b']);
  });
});

describe('Outbox text shaping', () => {
  it('splits long text at word boundaries into lines of at most 500 characters', async () => {
    const { clock, transport, outbox } = setup();
    const words = Array.from({ length: 300 }, (_, i) => `wörd${i}😀`);
    const text = words.join(' ');
    expect(outbox.say(text)).toBeGreaterThan(2);
    await run(clock, 10_000);
    const lines = transport.texts();
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(500);
    expect(lines.join(' ').split(' ')).toEqual(words);
  });

  it('cuts only a word longer than 500 characters, never inside a surrogate pair', async () => {
    const { clock, transport, outbox } = setup();
    const word = '😀'.repeat(400); // 800 UTF-16 units
    outbox.say(`hello ${word} bye`);
    await run(clock, 10_000);
    const lines = transport.texts();
    expect(lines[0]).toBe('hello');
    expect(lines.at(-1)!.endsWith(' bye')).toBe(true);
    expect(lines.slice(1).join('').slice(0, -' bye'.length)).toBe(word);
    for (const l of lines) {
      expect(l.length).toBeLessThanOrEqual(500);
      expect(l).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    }
  });

  it('never sends a chat command or control characters, even in a split part', async () => {
    const { clock, transport, outbox } = setup();
    outbox.say('/ban someone');
    outbox.say('  .timeout someone 600');
    outbox.say(`${'x'.repeat(496)} /ban another`);
    outbox.say('\u0001ACTION dances\u0001\r\nline two');
    await run(clock, 10_000);
    const lines = transport.texts();
    for (const l of lines) {
      expect(l).not.toMatch(/^\s*[/.]/);
      expect(l).not.toMatch(/[\u0000-\u001f]/);
      expect(l.length).toBeLessThanOrEqual(500);
    }
    expect(lines).toContain('\u200b/ban someone');
    expect(lines).toContain('\u200b/ban another');
    expect(lines).toContain('ACTION dances line two');
  });

  it('packs a list into as few lines as possible, each with the prefix', async () => {
    const { clock, transport, outbox } = setup();
    const names = Array.from({ length: 120 }, (_, i) => `viewer_${i}_${'x'.repeat(i % 7)}`);
    const n = outbox.sayList('Winners: ', names, { priority: 'high' });
    await run(clock, 20_000);
    const lines = transport.texts();
    expect(lines).toHaveLength(n);
    const seen: string[] = [];
    for (const [i, l] of lines.entries()) {
      expect(l.length).toBeLessThanOrEqual(500);
      expect(l.startsWith('Winners: ')).toBe(true);
      const items = l.slice('Winners: '.length).split(', ');
      seen.push(...items);
      const next = lines[i + 1];
      // Greedy packing: the next line's first item would not have fitted here.
      if (next) expect(l.length + 2 + next.slice('Winners: '.length).split(', ')[0]!.length).toBeGreaterThan(499);
    }
    expect(seen).toEqual(names);
  });
});

describe('Outbox connection handling', () => {
  it('keeps lines while paused and re-queues a line the transport certainly did not write', async () => {
    const { clock, transport, outbox } = setup();
    for (let i = 0; i < 6; i++) outbox.say(`msg ${i}`);
    await run(clock, 2_300); // msg 0, 1, 2 written
    expect(transport.texts()).toEqual(['msg 0', 'msg 1', 'msg 2']);
    // The socket drops before the client notices: the next write is refused, not lost.
    transport.connected = false;
    await run(clock, 1_200);
    outbox.pause();
    await run(clock, 10_000);
    expect(transport.written).toHaveLength(3);
    transport.connected = true;
    outbox.resume();
    await run(clock, 10_000);
    expect(transport.texts()).toEqual(['msg 0', 'msg 1', 'msg 2', 'msg 3', 'msg 4', 'msg 5']);
    expect(outbox.stats()).toMatchObject({ sent: 6, dropped: 0, queued: 0 });
  });

  it('does not resend a line whose write outcome is unknown', async () => {
    const { clock, transport, outbox, dropped } = setup();
    transport.failNext = new Error('socket hang up');
    outbox.say('first');
    outbox.say('second');
    await run(clock, 5_000);
    expect(transport.texts()).toEqual(['second']);
    expect(dropped).toEqual([{ text: 'first', reason: 'uncertain', detail: 'socket hang up' }]);
  });
});

describe('Outbox NOTICE handling', () => {
  it('backs off a whole window after msg_ratelimit and retries the line once', async () => {
    const { logger, capture } = capturingLogger();
    const clock = new ManualClock();
    const transport = new FakeTransport(clock);
    const outbox = new Outbox({ channel: 'c', transport, clock, logger });
    outbox.say('announce');
    outbox.say('next');
    await settle();
    const t0 = clock.now();
    outbox.handleNotice('msg_ratelimit', 'Your message was not sent because you are sending messages too quickly.');
    await run(clock, 40_000);
    expect(transport.texts()).toEqual(['announce', 'announce', 'next']);
    expect(transport.written[1]!.at - t0).toBe(32_000);
    expect(capture.json().some((l) => l.msgId === 'msg_ratelimit' && String(l.msg).includes('retrying once'))).toBe(
      true,
    );

    // Refused again after its retry: dropped, not retried forever.
    outbox.say('third');
    await run(clock, 2_000);
    outbox.handleNotice('msg_ratelimit', '');
    await run(clock, 40_000);
    expect(transport.texts().filter((t) => t.startsWith('third'))).toHaveLength(2);
    outbox.handleNotice('msg_ratelimit', '');
    await run(clock, 80_000);
    expect(transport.texts().filter((t) => t.startsWith('third'))).toHaveLength(2);
    expect(outbox.stats()).toMatchObject({ retried: 2, dropped: 1 });
  });

  it('waits the seconds a msg_slowmode names, then retries', async () => {
    const { clock, transport, outbox } = setup();
    outbox.say('hello chat');
    await settle();
    const t0 = clock.now();
    outbox.handleNotice(
      'msg_slowmode',
      'This room is in slow mode and you are sending messages too quickly. You will be able to talk again in 7 seconds.',
    );
    await run(clock, 10_000);
    expect(transport.written).toHaveLength(2);
    expect(transport.written[1]!.at - t0).toBe(7_100);
    expect(transport.written[1]!.text.replace(INVISIBLE, '')).toBe('hello chat');
  });

  it('retries a msg_duplicate with a variation and drops lines refused for channel modes', async () => {
    const { clock, transport, outbox, dropped } = setup();
    outbox.say('dup');
    await settle();
    outbox.handleNotice('msg_duplicate', '');
    await run(clock, 2_000);
    expect(transport.written).toHaveLength(2);
    expect(transport.written[1]!.text).not.toBe('dup');
    outbox.say('subs only please');
    await run(clock, 2_000);
    outbox.handleNotice('msg_subsonly', 'This room is in subscribers-only mode.');
    await run(clock, 10_000);
    expect(transport.written).toHaveLength(3);
    expect(dropped).toEqual([{ text: 'subs only please', reason: 'notice', detail: 'msg_subsonly' }]);
  });
});

describe('Outbox review regressions', () => {
  it('a refused write (not connected) is not counted against the window and does not spin', async () => {
    const { clock, transport, outbox } = setup();
    outbox.setPrivileged(true);
    // The socket is closing but the client has not reported the disconnect yet.
    transport.connected = false;
    for (let i = 0; i < 5; i++) outbox.say(`mod line ${i}`);
    await settle();
    await run(clock, 3_000);
    outbox.pause();
    transport.connected = true;
    outbox.resume();
    await run(clock, 2_000);
    // Nothing was written while refused, so nothing may hold the lines back for a whole window.
    expect(transport.texts()).toEqual(Array.from({ length: 5 }, (_, i) => `mod line ${i}`));
    expect(outbox.stats()).toMatchObject({ sent: 5, dropped: 0, queued: 0 });
  });

  it('forgets sent texts after the duplicate window even while privileged (bounded memory)', async () => {
    const { clock, outbox } = setup();
    outbox.setPrivileged(true);
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 50; i++) outbox.say(`round ${round} line ${i}`);
      await run(clock, 35_000, 5_000);
    }
    expect(outbox.stats().sent).toBe(1000);
    const recent = (outbox as unknown as { pacer: { recent: Map<string, number> } }).pacer.recent;
    expect(recent.size).toBeLessThanOrEqual(100);
  });
});
