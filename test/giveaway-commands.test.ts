import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { CommandRegistry } from '../src/commands/registry.js';
import { enterCommand } from '../src/commands/enter.js';
import { claimCommand } from '../src/commands/claim.js';
import { giveawayCommand, parseStartArgs } from '../src/commands/giveaway.js';
import { silentLogger } from '../src/logging/index.js';
import type { DrawRecord } from '../src/giveaway/model.js';
import { chatMsg, waitFor, type HarnessOptions } from './support/giveaway-fakes.js';
import { harnessPerTest } from './support/giveaway-harness.js';

const newHarness = harnessPerTest();

async function setup(settings: HarnessOptions = {}) {
  const h = await newHarness(settings);
  h.shop.products = [
    { id: '3f1c0a52-3333-4a6b-9d1e-000000000003', name: 'Mug', slug: 'mug' },
    { id: '3f1c0a52-5555-4a6b-9d1e-000000000005', name: 'Hoodie 2', slug: 'hoodie-2' },
  ];
  const registry = new CommandRegistry({ clock: h.clock, logger: silentLogger(), names: { enter: 'join' } });
  registry.register(enterCommand(h.svc)).register(giveawayCommand(h.svc)).register(claimCommand(h.svc));
  const replies: string[] = [];
  const say = (login: string, text: string, roles = {}) => {
    registry.handle(chatMsg(login, { text, roles }), (t) => replies.push(t));
  };
  return { h, registry, replies, say };
}

describe('parseStartArgs', () => {
  it.each([
    [['mug'], { query: 'mug' }],
    [['red', 'hoodie', '3'], { query: 'red hoodie', winners: 3 }],
    [['red', 'hoodie', '3', '90'], { query: 'red hoodie', winners: 3, seconds: 90 }],
    [['42'], { query: '42' }],
    [['a', '1', '2', '3'], { query: 'a 1', winners: 2, seconds: 3 }],
  ])('%j', (args, want) => {
    expect(parseStartArgs(args)).toEqual(want);
  });
});

describe('giveaway commands through the registry', () => {
  it('!join (renamed !enter) enters; !giveaway shows status to everyone', async () => {
    const { h, replies, say } = await setup();
    await h.svc.handleGiftDrawStarted(h.shop.addDraw({ gifts: 2 }));
    say('viewer', '!join');
    say('viewer2', '!enter');
    expect(replies).toEqual([]);
    say('viewer', '!giveaway');
    expect(replies).toEqual([expect.stringMatching(/Cozy Hoodie \(2x\): 60s left, 1 entered/)]);
  });

  it('viewers cannot run moderator subcommands; moderators can', async () => {
    const { h, replies, say } = await setup();
    say('viewer', '!giveaway start mug');
    await h.svc.whenIdle();
    expect(h.svc.openDrawCount()).toBe(0);
    expect(replies).toEqual(['No giveaway is open right now.']);
    say('modjo', '!giveaway start mug 2 30', { moderator: true });
    await waitFor(() => h.svc.openDrawCount() === 1, 'giveaway opened');
    await h.svc.whenIdle();
    expect(h.chat.texts()[0]).toMatch(/2x Mug.*30s/);
    say('boss', '!giveaway start poster', { broadcaster: true });
    await waitFor(() => replies.length === 2, 'reply');
    expect(replies[1]).toMatch(/already running/);
  });

  it('start with a trailing number in the name, end, reroll and claim', async () => {
    const { h, replies, say } = await setup({ settings: { claim: { seconds: 30, maxRerolls: 1 } } });
    say('modjo', '!giveaway start hoodie-2 1 20', { moderator: true });
    await waitFor(() => h.svc.openDrawCount() === 1, 'opened');
    for (const l of ['a', 'b', 'c']) say(l, '!join');
    say('modjo', '!giveaway end', { moderator: true });
    await waitFor(() => h.chat.matching(/Type !claim/).length === 1, 'claim prompt');
    const winner = h.chat.matching(/Type !claim/)[0]!.match(/@(\w+)/)![1]!;
    say('modjo', `!giveaway reroll ${winner}`, { moderator: true });
    await waitFor(() => h.chat.matching(/is replaced by/).length === 1, 'reroll');
    const next = h.chat.matching(/is replaced by @(\w+)/)[0]!.match(/replaced by @(\w+)/)![1]!;
    const done = once(h.svc.events, 'draw-finished');
    say(next, '!claim');
    const [rec] = (await done) as [DrawRecord];
    expect(rec.offer.name).toBe('Hoodie 2');
    expect(rec.winners.map((w) => w.login)).toEqual([next]);
    say('modjo', '!giveaway end', { moderator: true });
    expect(replies).toContain('No giveaway is open.');
  });

  it('cancel and retry answer the moderator', async () => {
    const { h, replies, say } = await setup();
    say('modjo', '!giveaway cancel', { moderator: true });
    await waitFor(() => replies.length === 1, 'reply');
    expect(replies[0]).toBe('No link giveaway is open.');
    say('modjo', '!giveaway start mug', { moderator: true });
    await waitFor(() => h.svc.openDrawCount() === 1, 'opened');
    h.clock.advance(3_000);
    say('modjo', '!giveaway cancel', { moderator: true });
    await waitFor(() => h.svc.openDrawCount() === 0, 'cancelled');
    h.clock.advance(3_000);
    say('modjo', '!giveaway retry', { moderator: true });
    await waitFor(() => replies.length === 2, 'retry reply');
    expect(replies[1]).toBe('No giveaway is waiting for links.');
  });
});
