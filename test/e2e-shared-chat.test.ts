/**
 * Twitch Shared Chat end to end, over both chat transports (real sockets, the real bot in
 * process): through the IRC sandbox (tmi.js) and through EventSub chat (the sandbox's chat lines
 * as `channel.chat.message` notifications on the sandbox EventSub server, the bot's lines sent
 * with Send Chat Message):
 * while this channel shares its chat with a partner channel, the partner's viewers' messages
 * arrive in this channel's room with Twitch's Shared Chat tags (`source-room-id` and friends).
 * A gift draw with 3 own viewers and 6 partner viewers typing `!enter` counts only the 3 by
 * default; with `sharedChat.partnerEntries` it counts all 9, and the history (record, `npm run
 * history` table, `--json`, `--csv`) and the verify page say how many came from each channel,
 * the partner channel by its login (looked up with the local Helix API). Partner messages never
 * run commands here (a partner channel's moderator, or even a moderator of both channels typing in
 * the partner's chat, cannot end the draw), and a `source-only` message is ignored.
 */
import { describe, it } from 'vitest';
import { runHistoryCli } from '../src/cli/history.js';
import type { DrawRecord } from '../src/giveaway/model.js';
import type { DrawExport } from '../src/storage/export.js';
import type { PartnerViewer } from '../src/sandbox/chat/index.js';
import { captureIo } from './support/cli-io.js';
import { setShopLive, startInProcessStack, waitUntil, type InProcessStack } from './support/e2e-stack.js';

const PARTNER = 'partner_chan';

type Transport = 'irc' | 'eventsub';

async function withStack<T>(
  transport: Transport,
  partnerEntries: boolean,
  fn: (s: InProcessStack) => Promise<T>,
): Promise<T> {
  // Long entry windows: the draws are closed by a moderator's `!giveaway end`, never by a timer racing the test.
  const s = await startInProcessStack({
    fourthwall: { drawDurationSeconds: 120 },
    settings: { sharedChat: { partnerEntries }, chat: { transport } },
  });
  try {
    setShopLive({ fourthwall: s.fourthwall, chat: s.chatServer });
    return await fn(s);
  } finally {
    await s.close();
  }
}

async function buyGifts(s: InProcessStack, quantity: number): Promise<string> {
  const { draw } = s.fourthwall.control.simulateGiftPurchase({ quantity, username: 'generous_fan' });
  const drawId = draw['id'] as string;
  await s.chatServer.waitFor(
    () => s.chatServer.botMessages().some((m) => m.startsWith('🎁 generous_fan gifted')),
    5000,
    `draw ${drawId} announced`,
  );
  return drawId;
}

async function openEntrants(s: InProcessStack, drawId: string): Promise<number> {
  return (await s.bot.repo.openDraws()).find((d) => d.record.id === drawId)?.entrants.length ?? -1;
}

async function settled(s: InProcessStack, drawId: string): Promise<DrawRecord> {
  let rec: DrawRecord | undefined;
  await waitUntil(
    async () => (rec = await s.bot.repo.getDraw(drawId))?.status === 'finished',
    15_000,
    `draw ${drawId} finished`,
    20,
  );
  await s.bot.engine.whenIdle();
  return rec!;
}

/**
 * The scene: a Shared Chat session with PARTNER; partner messages first (6 partner viewers'
 * `!enter`, a source-only `!enter`, `!giveaway end` from the partner's broadcaster, from a
 * moderator of the partner channel and from a moderator of both channels typing in the partner's
 * chat), then the 3 own viewers' `!enter`. Lines are handled in order, so once the last own
 * viewer is in, every partner line before it was handled.
 */
function playScene(s: InProcessStack): { own: string[]; partners: PartnerViewer[] } {
  const chat = s.chatServer;
  chat.sharedChat.begin([PARTNER]);
  const shared = chat.sharedChat;
  const partners = [
    shared.viewer(PARTNER, PARTNER), // the partner channel's broadcaster
    shared.viewer(PARTNER, 'partner_mod', { there: { mod: true } }),
    shared.viewer(PARTNER, 'partner_sub', { there: { subscriber: true, subMonths: 12 } }),
    ...['pfan_a', 'pfan_b', 'pfan_c'].map((l) => shared.viewer(PARTNER, l)),
  ];
  for (const v of partners) shared.say(v, '!enter');
  shared.say(shared.viewer(PARTNER, 'quiet_fan'), '!enter', { sourceOnly: true });
  shared.say(partners[0]!, '!giveaway end');
  shared.say(partners[1]!, '!giveaway end');
  shared.say(shared.viewer(PARTNER, 'dual_mod', { there: { mod: true }, here: { mod: true } }), '!giveaway end');
  const own = ['own_a', 'own_b', 'own_c'];
  for (const l of own) chat.inject(chat.viewer(l), '!enter');
  return { own, partners };
}

/** Ends the draw with this channel's own moderator (the positive control of the command path). */
function endByOwnMod(s: InProcessStack): void {
  s.chatServer.inject(s.chatServer.viewer('own_mod', { mod: true }), '!giveaway end');
}

describe.concurrent.for(['irc', 'eventsub'] as const)('a gift draw during Twitch Shared Chat (%s)', (transport) => {
  it("by default counts only this channel's viewers: partner viewers neither enter nor win, partner messages run no command", async ({
    expect,
  }) => {
    await withStack(transport, false, async (s) => {
      const drawId = await buyGifts(s, 2);
      const { own } = playScene(s);
      await waitUntil(async () => (await openEntrants(s, drawId)) === 3, 5000, '3 own entrants');
      // the partners' `!giveaway end` came before and did nothing: the draw is still open
      expect((await s.bot.repo.getDraw(drawId))?.status).toBe('open');
      expect(s.chatServer.botMessages().filter((m) => m.includes('No giveaway is open'))).toEqual([]);
      endByOwnMod(s);
      const rec = await settled(s, drawId);
      expect(rec.entrants).toBe(3);
      expect(rec.frozenEntrants!.map((e) => e.login).sort()).toEqual(own);
      expect(rec.winners).toHaveLength(2);
      for (const w of rec.winners) expect(own).toContain(w.login);
      expect(rec.entrantsByChannel).toBeUndefined();
      // the sandbox really sent the partner lines with Twitch's tags (what the bot ignored)
      const partnerLines = s.chatServer.transcript.filter(
        (e) => e.kind === 'viewer' && e.sourceChannelId !== undefined,
      );
      expect(partnerLines).toHaveLength(10);
      // and the bot talked over the transport asked for
      expect(s.bot.health().chatTransport).toBe(transport);
      const botLines = s.chatServer.transcript.filter((e) => e.kind === 'bot');
      expect(botLines.length).toBeGreaterThan(0);
      expect(botLines.every((e) => (e.via === 'api') === (transport === 'eventsub'))).toBe(true);
    });
  });

  it('with sharedChat.partnerEntries counts both channels, by channel in the history, its export and the verify page', async ({
    expect,
  }) => {
    await withStack(transport, true, async (s) => {
      const drawId = await buyGifts(s, 2);
      const { own, partners } = playScene(s);
      await waitUntil(async () => (await openEntrants(s, drawId)) === 9, 5000, '9 entrants');
      expect((await s.bot.repo.getDraw(drawId))?.status).toBe('open'); // partner `!giveaway end` still ran nothing
      endByOwnMod(s);
      const rec = await settled(s, drawId);
      expect(rec.entrants).toBe(9);
      // the partner channel's broadcaster and moderator are plain viewers here: eligible, one ticket
      expect(rec.frozenEntrants!.map((e) => e.login).sort()).toEqual([...own, ...partners.map((p) => p.login)].sort());
      expect(rec.frozenEntrants!.every((e) => e.weight === 1)).toBe(true);
      expect(rec.entrantsByChannel).toEqual([
        { channelId: s.chatServer.channelId, login: s.chatServer.channel, entrants: 3, own: true },
        { channelId: partners[0]!.partner.id, login: PARTNER, entrants: 6 },
      ]);

      const table = captureIo(s.dataDir);
      expect(await runHistoryCli(['--draw', drawId], table.io)).toBe(0);
      expect(table.out()).toContain(`entrants   9 (${s.chatServer.channel} 3, ${PARTNER} 6)`);
      const json = captureIo(s.dataDir);
      expect(await runHistoryCli(['--json', '--draw', drawId], json.io)).toBe(0);
      expect((JSON.parse(json.out()) as DrawExport[])[0]!.entrantsByChannel).toEqual(rec.entrantsByChannel);
      const csv = captureIo(s.dataDir);
      expect(await runHistoryCli(['--csv', '--draw', drawId], csv.io)).toBe(0);
      const rows = csv.out().trimEnd().split('\r\n');
      expect(rows[0]!.split(',').at(-1)).toBe('entrantsByChannel');
      expect(rows.slice(1).map((r) => r.split(',').at(-1))).toEqual([
        `${s.chatServer.channel}:3 ${PARTNER}:6`,
        `${s.chatServer.channel}:3 ${PARTNER}:6`,
      ]);

      const page = await fetch(`${s.bot.http.url}/verify/${encodeURIComponent(drawId)}`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain(`<p id="channels">9 entrants: ${s.chatServer.channel} 3, ${PARTNER} 6</p>`);
    });
  });
});
