/**
 * Claim windows end to end (issue 5): with `claim.seconds` set, winners of a link giveaway must
 * type `!claim` in time; a winner who does not is replaced by a new pick among the remaining
 * entrants (up to `claim.maxRerolls`), claims and rerolls are announced and recorded, and the
 * links are created only once the claims are settled, for exactly the number of winners.
 * Real bot in-process against the chat server and the Fourthwall sandbox; 1-2 s windows.
 */
import { describe, expect, it } from 'vitest';
import type { DrawRecord } from '../src/giveaway/model.js';
import { drawSettled, nextDrawOpened, startLinkStack, type LinkStack } from './support/e2e-link-stack.js';
import { perTest } from './support/per-test.js';

const stack = perTest(startLinkStack, (s) => s.close(true));

const ENTRANTS = ['ana', 'ben', 'cai', 'dee', 'eve', 'fay'];

const claimStack = (seconds: number, maxRerolls: number) => stack({ settings: { claim: { seconds, maxRerolls } } });

/** Runs a mug giveaway for `winners` up to the first claim prompt; returns the picked record. */
async function toClaimPrompt(s: LinkStack, winners: number): Promise<{ id: string; picked: DrawRecord; from: number }> {
  const opened = nextDrawOpened(s);
  s.say(s.mod, `!giveaway start giftdrop-mug ${winners} 60`);
  const { id } = await opened;
  await s.nextBotLine(/Giveaway: \d+x Giftdrop Mug/);
  s.enter(ENTRANTS);
  const from = s.mark();
  s.say(s.mod, '!giveaway end');
  await s.nextBotLine(/Type !claim within/, from);
  await s.idle();
  expect(s.bot.engine.openDrawCount()).toBe(1);
  return { id, picked: await s.record(id), from };
}

describe('claim window', () => {
  it('one winner claims, the other does not and is replaced; the replacement claims; links follow', async () => {
    const s = await claimStack(2, 3);
    const { id, picked, from } = await toClaimPrompt(s, 2);
    const [stays, leaves] = picked.winners;
    expect(picked.status).toBe('drawing');
    expect(picked.winners.every((w) => w.claimed === false)).toBe(true);
    const prompt = await s.nextBotLine(/Type !claim within/, from);
    expect(prompt).toBe(
      `@${stays!.login} and @${leaves!.login}: you won Giftdrop Mug! Type !claim within 2s to claim it.`,
    );
    // No links before the claims are settled.
    expect(s.requests('createGiveawayLinks')).toHaveLength(0);

    // A non-winner's !claim counts for nothing; the winner's does.
    const outsider = ENTRANTS.find((l) => !picked.winners.some((w) => w.login === l))!;
    s.say(s.viewer(outsider), '!claim');
    s.say(s.viewer(stays!.login), '!claim');
    await s.nextBotLine(new RegExp(`^✅ @${stays!.login} claimed Giftdrop Mug\\.$`), from);
    expect(s.botLines(from).filter((l) => l.startsWith('✅'))).toHaveLength(1);

    // The deadline passes: the silent winner is replaced and the replacement is asked.
    const replacedLine = await s.nextBotLine(/is replaced by/, from, 6000);
    const m = new RegExp(
      `^🔁 Giftdrop Mug: @${leaves!.login} is replaced by @(\\w+) \\(did not claim in time\\)\\.$`,
    ).exec(replacedLine);
    expect(m).not.toBeNull();
    const newcomer = m![1]!;
    expect(ENTRANTS).toContain(newcomer);
    expect([stays!.login, leaves!.login]).not.toContain(newcomer);
    await s.nextBotLine(new RegExp(`^@${newcomer}: you won Giftdrop Mug! Type !claim within 2s`), from);
    expect(s.requests('createGiveawayLinks')).toHaveLength(0);

    const settled = drawSettled(s, id);
    s.say(s.viewer(newcomer), '!claim');
    const { event, record } = await settled;
    expect(event).toBe('draw-finished');
    await s.nextBotLine(new RegExp(`^✅ @${newcomer} claimed Giftdrop Mug\\.$`), from);
    const winnersLine = await s.nextBotLine(/congratulations/, from);
    expect(winnersLine).toContain(`@${stays!.login}`);
    expect(winnersLine).toContain(`@${newcomer}`);
    expect(winnersLine).not.toContain(`@${leaves!.login}`);

    // One package, one link per final winner, delivered privately.
    expect(s.requests('createGiveawayLinks').map((r) => r.status)).toEqual([200]);
    const pkg = [...s.fw.state.packages.values()];
    expect(pkg).toHaveLength(1);
    expect(pkg[0]!.giveawayLinks).toHaveLength(2);
    expect(record.winners.map((w) => w.login).sort()).toEqual([stays!.login, newcomer].sort());
    for (const w of record.winners) {
      expect(w.claimed).toBe(true);
      expect(s.operator.some((l) => l.includes(`@${w.login}`) && l.includes(w.redeemUrl!))).toBe(true);
    }
    expect(s.chat.transcript.map((e) => e.text).join('\n')).not.toContain('/gifts/');

    // Recorded: the claims in the export, the reroll and its reason in the record; verify passes.
    await s.idle();
    const row = (await s.history()).find((r) => r.id === id)!;
    expect(row.winners.map((w) => [w.login, w.claimed]).sort()).toEqual(
      [
        [stays!.login, true],
        [newcomer, true],
      ].sort(),
    );
    const stored = await s.record(id);
    expect(stored.claim?.rerollsUsed).toBe(1);
    expect(stored.rerolls).toHaveLength(1);
    expect(stored.rerolls![0]).toMatchObject({ replacedLogin: leaves!.login, reason: 'unclaimed' });
    expect(stored.rerolls![0]!.byUserId).toBeUndefined();
    const v = await s.verify(id);
    expect(v.err).toBe('');
    expect(v.code).toBe(0);
  });

  it('stops replacing after maxRerolls: the last unclaimed winner is kept and recorded as unclaimed', async () => {
    const s = await claimStack(1, 1);
    const { id, picked, from } = await toClaimPrompt(s, 1);
    const first = picked.winners[0]!;
    const settled = drawSettled(s, id);
    // Nobody claims: one replacement, then the window ends with the replacement unclaimed.
    const replacedLine = await s.nextBotLine(/is replaced by/, from, 6000);
    const second = /is replaced by @(\w+)/.exec(replacedLine)![1]!;
    expect(second).not.toBe(first.login);
    const { event, record } = await settled;
    expect(event).toBe('draw-finished');
    expect(s.botLines(from).filter((l) => l.includes('is replaced by'))).toHaveLength(1);
    expect(record.winners).toHaveLength(1);
    expect(record.winners[0]).toMatchObject({ login: second, claimed: false });
    expect(s.requests('createGiveawayLinks')).toHaveLength(1);
    await s.idle();
    const stored = await s.record(id);
    expect(stored.claim?.rerollsUsed).toBe(1);
    expect(stored.rerolls!.map((r) => r.replacedLogin)).toEqual([first.login]);
    expect((await s.verify(id)).code).toBe(0);
  });

  it('a mod reroll during the window asks the replacement to claim; cancelling then creates no links', async () => {
    const s = await claimStack(30, 3);
    const { id, picked, from } = await toClaimPrompt(s, 1);
    const first = picked.winners[0]!;
    s.say(s.mod, `!giveaway reroll ${first.login}`);
    const replaced = await s.nextBotLine(/is replaced by/, from);
    const second = new RegExp(
      `^🔁 Giftdrop Mug: @${first.login} is replaced by @(\\w+) \\(rerolled by a moderator\\)\\.$`,
    ).exec(replaced)![1]!;
    await s.nextBotLine(new RegExp(`^@${second}: you won Giftdrop Mug! Type !claim within \\d+s`), from);
    // The replaced winner's !claim no longer counts.
    s.say(s.viewer(first.login), '!claim');
    const status = s.mark();
    s.say(s.mod, '!giveaway');
    await s.nextBotLine(
      new RegExp(`^Giftdrop Mug: waiting for @${second} to type !claim \\(\\d+s left\\)\\.$`),
      status,
    );
    expect(s.botLines(from).some((l) => l.startsWith('✅'))).toBe(false);

    const settled = drawSettled(s, id);
    s.say(s.mod, '!giveaway cancel');
    expect((await settled).event).toBe('draw-cancelled');
    await s.nextBotLine(/^The Giftdrop Mug giveaway was cancelled\.$/, from);
    await s.idle();
    expect(s.requests('createGiveawayLinks')).toHaveLength(0);
    expect(s.fw.state.packages.size).toBe(0);
    const stored = await s.record(id);
    expect(stored.status).toBe('cancelled');
    expect(stored.rerolls).toEqual([
      expect.objectContaining({ replacedLogin: first.login, reason: 'command', byUserId: s.mod.userId }),
    ]);
    expect(s.operator.filter((l) => l.includes('/gifts/'))).toEqual([]);
  });
  it("the winners' chat catch takes a winner's line during the claim window, not a non-winner's", async () => {
    const s = await claimStack(30, 0);
    const { id, picked } = await toClaimPrompt(s, 1);
    const winner = picked.winners[0]!;
    const outsider = ENTRANTS.find((l) => l !== winner.login)!;
    const chatLog = s.bot.pages.chatLog;
    expect(chatLog.winnerLines()).toEqual([]);
    s.say(s.viewer(outsider), 'so close');
    s.say(s.viewer(winner.login), 'no way, I won?');
    await s.chat.waitFor(() => chatLog.winnerLines().length > 0, 5000, "the winner's line caught");
    await s.idle();
    expect(
      chatLog.winnerLines().map((l) => ({ drawId: l.drawId, login: l.login, text: l.text, prize: l.prize })),
    ).toEqual([{ drawId: id, login: winner.login, text: 'no way, I won?', prize: 'Giftdrop Mug' }]);
  });
});
