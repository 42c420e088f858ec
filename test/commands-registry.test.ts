import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/shared/clock.js';
import { silentLogger } from '../src/logging/index.js';
import { CommandConfigError, CommandRegistry, hasPermission, parseArgs } from '../src/commands/registry.js';
import type { Command, CommandContext, Permission } from '../src/commands/types.js';
import { capturingLogger, chatMessage, roles } from './support/twitch-fakes.js';

function recorder(name: string, extra: Partial<Command> = {}) {
  const calls: CommandContext[] = [];
  const command: Command = {
    name,
    permission: 'everyone',
    execute: (ctx) => void calls.push(ctx),
    ...extra,
  };
  return { command, calls };
}

function registry(opts: Partial<ConstructorParameters<typeof CommandRegistry>[0]> = {}) {
  const clock = new ManualClock();
  return { clock, reg: new CommandRegistry({ clock, logger: silentLogger(), ...opts }) };
}

const noReply = () => undefined;

describe('parseArgs', () => {
  it('splits on any run of whitespace and invisible characters, keeping unicode intact', () => {
    expect(parseArgs('  start   Tシャツ\t3  ')).toEqual(['start', 'Tシャツ', '3']);
    expect(parseArgs('reroll 😀user\u200b\u200b ok \u{E0000}')).toEqual(['reroll', '😀user', 'ok']);
    expect(parseArgs('\u3000全角\u3000space')).toEqual(['全角', 'space']);
    expect(parseArgs('   ')).toEqual([]);
  });
});

describe('CommandRegistry dispatch', () => {
  it('runs a command case-insensitively with odd spacing and gives args and argText', () => {
    const { reg } = registry();
    const { command, calls } = recorder('giveaway');
    reg.register(command);
    const replies: string[] = [];
    expect(reg.handle(chatMessage('  !GiveAway   start  Cool  Hoodie 😀   2 '), (t) => replies.push(t))).toBe(true);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.invokedAs).toBe('giveaway');
    expect(calls[0]!.args).toEqual(['start', 'Cool', 'Hoodie', '😀', '2']);
    expect(calls[0]!.argText).toBe('start  Cool  Hoodie 😀   2');
    calls[0]!.reply('hi');
    expect(replies).toEqual(['hi']);
  });

  it('ignores plain chat, unknown commands, a bare prefix and a space after the prefix', () => {
    const { reg } = registry();
    const { command, calls } = recorder('enter');
    reg.register(command);
    for (const text of ['enter', 'hello !enter', '!', '! enter', '!entered', '!unknown', '!!enter', '']) {
      expect(reg.handle(chatMessage(text), noReply), text).toBe(false);
    }
    expect(calls).toHaveLength(0);
    expect(reg.handle(chatMessage('!enter'), noReply)).toBe(true);
    expect(reg.handle(chatMessage('!enter \u{E0000}'), noReply)).toBe(true);
    expect(calls[1]!.args).toEqual([]);
  });

  it('handles a 500-character line and a /me line', () => {
    const { reg } = registry();
    const { command, calls } = recorder('enter');
    reg.register(command);
    const long = `!enter ${'ä'.repeat(493)}`;
    expect(long).toHaveLength(500);
    expect(reg.handle(chatMessage(long), noReply)).toBe(true);
    expect(calls[0]!.args).toEqual(['ä'.repeat(493)]);
    expect(reg.handle(chatMessage('!enter', { action: true }), noReply)).toBe(true);
  });

  it('supports another prefix', () => {
    const { reg } = registry({ prefix: '?' });
    const { command, calls } = recorder('enter');
    reg.register(command);
    expect(reg.handle(chatMessage('!enter'), noReply)).toBe(false);
    expect(reg.handle(chatMessage('?ENTER'), noReply)).toBe(true);
    expect(calls).toHaveLength(1);
    expect(() => registry({ prefix: '' })).toThrow(CommandConfigError);
  });
});

describe('CommandRegistry names and aliases', () => {
  it('answers to aliases and reports which word was used', () => {
    const { reg } = registry();
    const { command, calls } = recorder('enter', { aliases: ['Join', 'in'] });
    reg.register(command);
    expect(reg.handle(chatMessage('!join'), noReply)).toBe(true);
    expect(reg.handle(chatMessage('!IN'), noReply)).toBe(true);
    expect(calls.map((c) => c.invokedAs)).toEqual(['join', 'in']);
    expect(reg.get('JOIN')).toBe(command);
  });

  it('applies configured names and aliases at registration (names map in the constructor)', () => {
    const { reg } = registry({ names: { enter: 'mitmachen' }, aliases: { enter: ['dabei'] } });
    const { command, calls } = recorder('enter', { aliases: ['join'] });
    reg.register(command);
    expect(reg.handle(chatMessage('!enter'), noReply)).toBe(false);
    expect(reg.handle(chatMessage('!join'), noReply)).toBe(false);
    expect(reg.handle(chatMessage('!Mitmachen'), noReply)).toBe(true);
    expect(reg.handle(chatMessage('!dabei'), noReply)).toBe(true);
    expect(reg.describe()).toEqual([
      { canonical: 'enter', name: 'mitmachen', aliases: ['dabei'], permission: 'everyone' },
    ]);
    expect(calls).toHaveLength(2);
  });

  it('renames a command at run time, keeping or replacing its aliases', () => {
    const { reg } = registry();
    const { command, calls } = recorder('enter', { aliases: ['join'] });
    reg.register(command);
    reg.rename('enter', 'ticket');
    expect(reg.handle(chatMessage('!enter'), noReply)).toBe(false);
    expect(reg.handle(chatMessage('!ticket'), noReply)).toBe(true);
    expect(reg.handle(chatMessage('!join'), noReply)).toBe(true);
    reg.rename('enter', 'raffle', ['r']);
    expect(reg.handle(chatMessage('!join'), noReply)).toBe(false);
    expect(reg.handle(chatMessage('!r'), noReply)).toBe(true);
    expect(calls).toHaveLength(3);
  });

  it("a repeated text (remembered after its first line) runs for each line with that line's message", () => {
    const { reg } = registry();
    const { command, calls } = recorder('enter');
    reg.register(command);
    const users = ['1', '2', '3'].map((userId) => chatMessage('!enter', { userId }));
    for (const m of users) expect(reg.handle(m, noReply)).toBe(true);
    expect(reg.handle(chatMessage('!enter now'), noReply)).toBe(true);
    expect(reg.handle(chatMessage('!enter'), noReply)).toBe(true);
    expect(calls.map((c) => c.msg.userId)).toEqual(['1', '2', '3', '5550001', '5550001']);
    expect(calls.map((c) => c.args)).toEqual([[], [], [], ['now'], []]);
    calls[0]!.args.push('changed by a command');
    expect(reg.handle(chatMessage('!enter'), noReply)).toBe(true);
    expect(calls.at(-1)!.args).toEqual([]);
  });

  it('refuses clashing names and keeps the old binding when a rename clashes', () => {
    const { reg } = registry();
    reg.register(recorder('enter', { aliases: ['join'] }).command);
    reg.register(recorder('claim').command);
    expect(() => reg.register(recorder('join').command)).toThrow(/already used by command "enter"/);
    expect(() => reg.register(recorder('enter').command)).toThrow(CommandConfigError);
    expect(() => reg.rename('claim', 'JOIN')).toThrow(CommandConfigError);
    expect(reg.get('claim')).toBeDefined();
    expect(() => reg.rename('nope', 'x')).toThrow(/no command/);
    expect(() => reg.register(recorder('two words').command)).toThrow(/one word/);
  });
});

describe('CommandRegistry permissions', () => {
  const levels: Permission[] = ['everyone', 'subscriber', 'vip', 'moderator', 'broadcaster'];
  const people = {
    viewer: roles(),
    subscriber: roles({ subscriber: true, subMonths: 3 }),
    vip: roles({ vip: true }),
    moderator: roles({ moderator: true }),
    broadcaster: roles({ broadcaster: true }),
  };
  // who -> the highest level they pass
  const expected: Record<keyof typeof people, Permission> = {
    viewer: 'everyone',
    subscriber: 'subscriber',
    vip: 'vip',
    moderator: 'moderator',
    broadcaster: 'broadcaster',
  };

  it('orders everyone < subscriber < vip < moderator < broadcaster', () => {
    for (const [who, r] of Object.entries(people) as [keyof typeof people, (typeof people)['viewer']][]) {
      const top = levels.indexOf(expected[who]);
      for (const [i, level] of levels.entries()) expect(hasPermission(r, level), `${who} vs ${level}`).toBe(i <= top);
    }
  });

  it('runs a moderator command for mods and the broadcaster only, silently ignoring others', () => {
    const { reg } = registry();
    const { command, calls } = recorder('giveaway', { permission: 'moderator' });
    reg.register(command);
    const replies: string[] = [];
    for (const [who, r] of Object.entries(people)) {
      reg.handle(chatMessage('!giveaway end', { roles: r, login: who }), (t) => replies.push(t));
    }
    expect(calls.map((c) => c.msg.login)).toEqual(['moderator', 'broadcaster']);
    expect(replies).toEqual([]);
  });
});

describe('CommandRegistry cooldowns', () => {
  it('keeps a per-user cooldown by user id (not login) and a global one', () => {
    const { reg, clock } = registry();
    const { command, calls } = recorder('giveaway', { cooldown: { userMs: 10_000, globalMs: 2_000 } });
    reg.register(command);
    const alice = { userId: '111', login: 'alice' };
    const bob = { userId: '222', login: 'bob' };
    expect(reg.handle(chatMessage('!giveaway', alice), noReply)).toBe(true);
    expect(reg.handle(chatMessage('!giveaway', bob), noReply)).toBe(false); // global
    clock.advance(2_000);
    expect(reg.handle(chatMessage('!giveaway', bob), noReply)).toBe(true);
    clock.advance(2_000);
    // alice renamed herself: same user id, still on cooldown.
    expect(reg.handle(chatMessage('!giveaway', { ...alice, login: 'alice_new' }), noReply)).toBe(false);
    clock.advance(6_000);
    expect(reg.handle(chatMessage('!giveaway', alice), noReply)).toBe(true);
    expect(calls.map((c) => c.msg.userId)).toEqual(['111', '222', '111']);
  });

  it('a subcommand listed in cooldown.subcommands has cooldowns of its own (!merch train right after !merch answers)', () => {
    const { reg, clock } = registry();
    const { command, calls } = recorder('merch', {
      cooldown: { userMs: 30_000, globalMs: 30_000, subcommands: ['train'] },
    });
    reg.register(command);
    const alice = { userId: '111', login: 'alice' };
    expect(reg.handle(chatMessage('!merch', alice), noReply)).toBe(true);
    clock.advance(2_500);
    expect(reg.handle(chatMessage('!merch TRAIN', alice), noReply)).toBe(true);
    expect(reg.handle(chatMessage('!merch train', alice), noReply)).toBe(false); // its own cooldown
    expect(reg.handle(chatMessage('!merch', alice), noReply)).toBe(false); // the command's, unchanged
    expect(reg.handle(chatMessage('!merch soldout mug', alice), noReply)).toBe(false); // not listed: the command's
    clock.advance(30_000);
    expect(reg.handle(chatMessage('!merch train', alice), noReply)).toBe(true);
    expect(calls.map((c) => c.argText)).toEqual(['', 'TRAIN', 'train']);
  });

  it('exempts mods and the broadcaster unless appliesToMods', () => {
    const { reg } = registry();
    const a = recorder('status', { cooldown: { globalMs: 60_000 } });
    const b = recorder('stream', { permission: 'moderator', cooldown: { globalMs: 60_000, appliesToMods: true } });
    reg.register(a.command).register(b.command);
    const mod = { roles: roles({ moderator: true }), userId: '333' };
    const owner = { roles: roles({ broadcaster: true }), userId: '444' };
    expect(reg.handle(chatMessage('!status'), noReply)).toBe(true);
    expect(reg.handle(chatMessage('!status'), noReply)).toBe(false);
    expect(reg.handle(chatMessage('!status', mod), noReply)).toBe(true);
    expect(reg.handle(chatMessage('!status', owner), noReply)).toBe(true);
    expect(reg.handle(chatMessage('!stream', mod), noReply)).toBe(true);
    expect(reg.handle(chatMessage('!stream', owner), noReply)).toBe(false);
    expect(a.calls).toHaveLength(3);
    expect(b.calls).toHaveLength(1);
  });

  it('does not consume a cooldown when permission is missing', () => {
    const { reg } = registry();
    const { command, calls } = recorder('end', {
      permission: 'moderator',
      cooldown: { globalMs: 5_000, appliesToMods: true },
    });
    reg.register(command);
    expect(reg.handle(chatMessage('!end'), noReply)).toBe(false);
    expect(reg.handle(chatMessage('!end', { roles: roles({ moderator: true }) }), noReply)).toBe(true);
    expect(calls).toHaveLength(1);
  });

  it('forgets expired per-user cooldowns so memory follows the active chat', () => {
    const { reg, clock } = registry();
    const { command, calls } = recorder('enter', { cooldown: { userMs: 1_000 } });
    reg.register(command);
    for (let i = 0; i < 5_000; i++) {
      reg.handle(chatMessage('!enter', { userId: String(100_000 + i) }), noReply);
      clock.advance(1);
    }
    expect(calls).toHaveLength(5_000);
    // Still on cooldown for the most recent user, free again for an old one.
    expect(reg.handle(chatMessage('!enter', { userId: String(100_000 + 4_999) }), noReply)).toBe(false);
    expect(reg.handle(chatMessage('!enter', { userId: String(100_000) }), noReply)).toBe(true);
  });
});

describe('CommandRegistry failures', () => {
  it('logs a command that throws or rejects, and keeps working', async () => {
    const { logger, capture } = capturingLogger();
    const clock = new ManualClock();
    const reg = new CommandRegistry({ clock, logger });
    reg.register({
      name: 'boom',
      permission: 'everyone',
      execute: () => {
        throw new Error('sync boom');
      },
    });
    reg.register({
      name: 'later',
      permission: 'everyone',
      execute: async () => {
        throw new Error('async boom');
      },
    });
    const ok = recorder('ok');
    reg.register(ok.command);
    expect(reg.handle(chatMessage('!boom', { userId: '999' }), noReply)).toBe(true);
    expect(reg.handle(chatMessage('!later'), noReply)).toBe(true);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(reg.handle(chatMessage('!ok'), noReply)).toBe(true);
    const errors = capture.json().filter((l) => l.msg === 'command failed');
    expect(errors.map((e) => [e.command, (e.err as { message: string }).message])).toEqual([
      ['boom', 'sync boom'],
      ['later', 'async boom'],
    ]);
    expect(errors[0]!.userId).toBe('999');
    expect(ok.calls).toHaveLength(1);
  });
});
