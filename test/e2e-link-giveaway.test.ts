/**
 * Link giveaways end to end (issue 5): `!giveaway start <product>` in the local chat server, the
 * real bot (in-process, live code paths), the Fourthwall sandbox over HTTP. Product lookup by
 * name, slug and id, by the broadcaster and by a mod; ambiguous and unknown products; a viewer
 * trying to start one; the rate-limited status for anyone. Links: one createGiveawayLinks call
 * for exactly the winners, delivered to the operator console and the history, never to chat or
 * the log (links.publicInChat is off by default).
 */
import { describe, expect, it } from 'vitest';
import { SEED_PRODUCT_IDS } from '../src/sandbox/fourthwall/index.js';
import { drawSettled, nextDrawOpened, startLinkStack, type LinkStack } from './support/e2e-link-stack.js';
import { perTest } from './support/per-test.js';

const stack = perTest(startLinkStack, (s) => s.close(true));

function transcriptText(s: LinkStack): string {
  return s.chat.transcript.map((e) => `${e.text} ${e.attempted ?? ''}`).join('\n');
}

describe('link giveaway by product name, slug and id', () => {
  const cases = [
    { how: 'name', by: 'broadcaster', query: 'Giftdrop Hoodie', product: 'hoodie', winners: 2 },
    { how: 'slug', by: 'mod', query: 'giftdrop-mug', product: 'mug', winners: 1 },
    { how: 'id', by: 'mod', query: SEED_PRODUCT_IDS.stickers, product: 'stickers', winners: 3 },
  ] as const;

  it.each(cases)(
    'by $how, started by the $by: announced, entered, ended, one link package, links private',
    async (c) => {
      const s = await stack();
      const productId = SEED_PRODUCT_IDS[c.product];
      const productName = s.fw.state.products.get(productId)!.name;
      const starter = c.by === 'broadcaster' ? s.chat.broadcaster : s.mod;

      const opened = nextDrawOpened(s);
      s.say(starter, `!giveaway start ${c.query} ${c.winners} 30`);
      const open = await opened;
      expect(open.kind).toBe('link-giveaway');
      expect(open.offer).toEqual({ id: productId, name: productName });
      expect(open.startedBy?.login).toBe(starter.login);
      await s.nextBotLine(new RegExp(`Giveaway: ${c.winners}x ${productName}! Type !enter in the next (30|29)s`));

      const logins = ['ana', 'ben', 'cai', 'dee', 'eve'];
      s.enter(logins);
      // The broadcaster and the bot typing !enter never become entrants.
      s.say(s.chat.broadcaster, '!enter');
      s.say(s.chat.viewer(s.chat.botLogin), '!enter');
      expect(s.requests('createGiveawayLinks')).toHaveLength(0);

      const settled = drawSettled(s, open.id);
      const from = s.mark();
      s.say(s.mod, '!giveaway end');
      const { event, record } = await settled;
      expect(event).toBe('draw-finished');
      expect(record.entrants).toBe(logins.length);

      // Winners: distinct entrants, exactly as many as asked.
      const winners = record.winners.map((w) => w.login);
      expect(winners).toHaveLength(c.winners);
      expect(new Set(winners).size).toBe(c.winners);
      for (const w of winners) expect(logins).toContain(w);
      const line = await s.nextBotLine(/congratulations/, from);
      expect(line).toContain(`🏆 ${productName}: congratulations`);
      for (const w of winners) expect(line).toContain(`@${w}`);
      expect(line).toContain('The streamer will send you your redeem link.');
      await s.nextBotLine(new RegExp(`Anyone can check draw ${open.id}: `), from);

      // Exactly one createGiveawayLinks call, for exactly the number of winners.
      const calls = s.requests('createGiveawayLinks');
      expect(calls.map((r) => r.status)).toEqual([200]);
      const packages = [...s.fw.state.packages.values()];
      expect(packages).toHaveLength(1);
      const pkg = packages[0]!;
      expect(pkg.giveawayLinks).toHaveLength(c.winners);
      expect(pkg.giveawayLinks.every((l) => l.productId === productId)).toBe(true);
      const links = pkg.giveawayLinks.map((l) => l.link);

      // Delivered to the operator console, one line per winner with their link.
      for (const w of record.winners) {
        expect(w.redeemUrl).toBeDefined();
        expect(links).toContain(w.redeemUrl);
        expect(s.operator.some((l) => l.includes(`@${w.login}`) && l.includes(w.redeemUrl!))).toBe(true);
      }
      // Stored in the history export.
      await s.idle();
      const rows = await s.history();
      const row = rows.find((r) => r.id === open.id)!;
      expect(row).toMatchObject({
        kind: 'link-giveaway',
        status: 'finished',
        offer: { id: productId, name: productName },
        gifts: c.winners,
        entrants: logins.length,
        source: { packageId: pkg.packageId },
      });
      expect(row.winners.map((w) => w.redeemUrl).sort()).toEqual([...links].sort());
      expect(row.winners.map((w) => w.login).sort()).toEqual([...winners].sort());

      // Never in chat, never in the log (neither the URL nor the link's id).
      const chat = transcriptText(s);
      const log = s.log.text();
      expect(chat).not.toMatch(/\/gifts\//);
      for (const l of pkg.giveawayLinks) {
        expect(chat).not.toContain(l.id);
        expect(log).not.toContain(l.link);
        expect(log).not.toContain(l.id);
      }
      expect(log).toContain('winners picked');

      const v = await s.verify(open.id);
      expect(v.err).toBe('');
      expect(v.code).toBe(0);
    },
  );
});

describe('the entry window', () => {
  it('closes on its own after the [seconds] given, then draws and delivers', async () => {
    const s = await stack();
    const opened = nextDrawOpened(s);
    const startedAt = Date.now();
    s.say(s.mod, '!giveaway start giftdrop-mug 1 5');
    const open = await opened;
    expect(Date.parse(open.closesAt) - Date.parse(open.openedAt)).toBe(5000);
    await s.nextBotLine(/Giveaway: 1x Giftdrop Mug! Type !enter in the next [45]s/);
    const settled = drawSettled(s, open.id);
    s.enter(['ana', 'ben']);
    const { event, record } = await settled;
    expect(event).toBe('draw-finished');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(4500);
    expect(record.entrants).toBe(2);
    expect(record.winners).toHaveLength(1);
    expect(s.requests('createGiveawayLinks')).toHaveLength(1);
    await s.nextBotLine(new RegExp(`congratulations @${record.winners[0]!.login}!`));
  });

  it('refuses out-of-range winners and seconds', async () => {
    const s = await stack({ settings: { linkGiveaway: { maxWinners: 5, maxSeconds: 120 } } });
    const from = s.mark();
    s.say(s.mod, '!giveaway start giftdrop-mug 6 30');
    await s.nextBotLine(/^Winners must be a whole number from 1 to 5\.$/, from);
    s.say(s.mod, '!giveaway start giftdrop-mug 2 121');
    await s.nextBotLine(/^Seconds must be a whole number from 5 to 120\.$/, from);
    expect(s.bot.engine.openDrawCount()).toBe(0);
  });
});

describe('product lookup problems and permissions', () => {
  it('an ambiguous name lists the candidates (at most 5) and opens nothing', async () => {
    const s = await stack();
    let from = s.mark();
    s.say(s.mod, '!giveaway start giftdrop');
    const reply = await s.nextBotLine(/Several products match/, from);
    expect(reply).toContain('Several products match "giftdrop"');
    for (const slug of ['giftdrop-t-shirt', 'giftdrop-mug', 'giftdrop-hoodie']) expect(reply).toContain(`(${slug})`);
    expect(reply).not.toContain('sticker-pack');

    // More than five matches: the sandbox catalogue grows, the reply still names exactly five.
    const base = s.fw.state.products.get(SEED_PRODUCT_IDS.mug)!;
    for (let i = 1; i <= 4; i++) {
      const id = `9e0c${i}000-0000-4000-8000-00000000000${i}`;
      s.fw.state.products.set(id, {
        ...structuredClone(base),
        id,
        name: `Giftdrop Poster ${i}`,
        slug: `giftdrop-poster-${i}`,
      });
    }
    from = s.mark();
    s.say(s.mod, '!giveaway start giftdrop');
    const many = await s.nextBotLine(/Several products match/, from);
    expect(many.match(/\(giftdrop-[a-z0-9-]+\)/g)).toHaveLength(5);

    // An exact name still resolves although it is also part of other names.
    from = s.mark();
    const opened = nextDrawOpened(s);
    s.say(s.mod, '!giveaway start giftdrop mug 1 20');
    expect((await opened).offer.id).toBe(SEED_PRODUCT_IDS.mug);
    await s.nextBotLine(/Giveaway: 1x Giftdrop Mug!/, from);
    expect(s.bot.engine.openDrawCount()).toBe(1);
    await s.idle();
    expect((await s.history()).filter((r) => r.kind === 'link-giveaway')).toHaveLength(1);
  });

  it('an unknown product says so and opens nothing', async () => {
    const s = await stack();
    const from = s.mark();
    s.say(s.chat.broadcaster, '!giveaway start flux capacitor 2 30');
    const reply = await s.nextBotLine(/flux capacitor/, from);
    expect(reply).toContain('No product matches "flux capacitor".');
    s.say(s.mod, '!giveaway start 5f0f0f0f-0000-4000-8000-000000000000');
    await s.nextBotLine(/No product matches "5f0f0f0f-0000-4000-8000-000000000000"/, from);
    expect(s.bot.engine.openDrawCount()).toBe(0);
    await s.idle();
    expect(await s.history()).toEqual([]);
    expect(s.requests('createGiveawayLinks')).toHaveLength(0);
  });

  it('a viewer typing !giveaway start gets only the status; nothing is looked up or opened', async () => {
    const s = await stack();
    const lookupsBefore = s.requests('listProducts').length + s.requests('getProduct').length;
    const from = s.mark();
    const viewer = s.viewer('sneaky', { subscriber: true, vip: true });
    s.say(viewer, '!giveaway start giftdrop-mug 5 60');
    const reply = await s.nextBotLine(/./, from);
    expect(reply).toContain('No giveaway is open right now.');
    // The mod's command after it is a barrier: it is handled after the viewer's line.
    s.say(s.mod, '!giveaway');
    await s.chat.waitFor(() => s.botLines(from).length >= 2, 5000, 'the mod status reply');
    expect(s.botLines(from)).toHaveLength(2);
    expect(s.bot.engine.openDrawCount()).toBe(0);
    expect(s.requests('listProducts').length + s.requests('getProduct').length).toBe(lookupsBefore);
    await s.idle();
    expect(await s.history()).toEqual([]);
  });

  it('!giveaway shows the status to anyone, rate-limited for viewers (mods are exempt)', async () => {
    const s = await stack({ settings: { commands: { statusCooldownSeconds: 30 } } });
    const opened = nextDrawOpened(s);
    s.say(s.mod, '!giveaway start giftdrop-hoodie 2 120');
    await opened;
    await s.nextBotLine(/Giveaway: 2x Giftdrop Hoodie/);
    s.enter(['ana', 'ben', 'cai']);

    const from = s.mark();
    s.say(s.viewer('curious'), '!giveaway');
    const status = await s.nextBotLine(/Giftdrop Hoodie \(2x\)/, from);
    expect(status).toMatch(/Giftdrop Hoodie \(2x\): \d+s left, 3 entered\. Type !enter to join!/);
    // Within the cooldown: another viewer and the same viewer get nothing; the mod is answered.
    s.say(s.viewer('nosy'), '!giveaway');
    s.say(s.viewer('curious'), '!giveaway');
    s.say(s.mod, '!giveaway');
    await s.chat.waitFor(() => s.botLines(from).length >= 2, 5000, 'the mod status reply');
    expect(s.botLines(from)).toHaveLength(2);
    expect(s.botLines(from).every((l) => /Giftdrop Hoodie \(2x\): \d+s left, 3 entered/.test(l))).toBe(true);
    // Four people asked, two were answered: the first viewer and the (exempt) mod.
    expect(s.chat.transcript.filter((e) => e.kind === 'viewer' && e.text === '!giveaway')).toHaveLength(4);

    // Cancel so no links are created at the end of the test.
    const settled = drawSettled(s);
    s.say(s.mod, '!giveaway cancel');
    expect((await settled).event).toBe('draw-cancelled');
  });
});
