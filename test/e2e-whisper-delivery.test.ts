/**
 * Whispers that Twitch drops silently (issue 30), on the whole local stack: the bot token has
 * user:manage:whispers, the local Helix answers 204 to every whisper but delivers none. The winner
 * is whispered (the chat line says only that), the delivery shows "whispered, not opened", the
 * dashboard lists the prize as waiting; at the next stream start the reminder goes to chat (the
 * whisper may have been lost) and points to the claim page; the winner logs in there and sees the
 * link; the prize stays on the dashboard until it is redeemed, then leaves it. Also: whispers
 * past Twitch's limits wait in the queue and all go out, none refused or dropped.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/shared/clock.js';
import { startChatServer } from '../src/sandbox/chat/index.js';
import { SandboxHelix } from '../src/sandbox/helix/index.js';
import { TwitchWhispers } from '../src/twitch/whispers.js';
import { silentLogger } from '../src/logging/index.js';
import { freePort } from './support/e2e-stack.js';
import { deliveryReaches, runMugGiveaway, startLinkStack, type LinkStack } from './support/e2e-link-stack.js';
import { claimPageAs } from './support/claim-login.js';

const stacks: LinkStack[] = [];
afterEach(async () => {
  for (const s of stacks.splice(0)) await s.close(true);
});

async function dashboardPrizes(s: LinkStack): Promise<{ login: string; label: string }[]> {
  const res = await fetch(`${s.bot.http.localUrl}/dashboard/api/prizes`, {
    headers: { authorization: `Bearer ${s.bot.pages.token.token}` },
  });
  return ((await res.json()) as { prizes: { login: string; label: string }[] }).prizes;
}

describe('whispers dropped silently', () => {
  it(
    'delivery says "whispered, not opened"; the chat reminder and the claim page still reach the winner; waiting until redeemed',
    { timeout: 60_000 },
    async () => {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const s = await startLinkStack({
        env: { HTTP_PORT: String(port), GIFTDROP_PUBLIC_URL: base },
        chat: { scopes: ['chat:read', 'chat:edit', 'user:manage:whispers'] },
        helix: { prepare: (helix) => helix.setWhisperDrop(true) },
      });
      stacks.push(s);
      const helix = s.stack.helix;
      const record = await runMugGiveaway(s, ['ana', 'ben']);
      const winner = record.winners[0]!;
      const whispered = deliveryReaches(s, winner.userId, (d) => !!d.whisperedAt);

      // Chat says only that the winners were whispered.
      const line = await s.nextBotLine(/congratulations/);
      expect(line).toContain('I whispered each winner how to get their prize.');
      const d = await whispered;
      expect(d.claimPageOpenedAt).toBeUndefined();
      expect(helix.whispers).toHaveLength(1);
      expect(helix.whispers[0]).toMatchObject({ to: winner.userId, delivered: false });
      expect(helix.whispers[0]!.message).toContain(`${base}/claim`);
      expect(helix.whispers[0]!.message).not.toContain(winner.redeemUrl!);
      expect(helix.whispersTo(winner.userId)).toEqual([]);
      expect(await dashboardPrizes(s)).toMatchObject([{ login: winner.login, label: 'whispered, not opened' }]);

      // The prize is from an earlier stream; the next stream starts: one reminder, in chat (the whisper may be lost).
      await s.bot.repo.updateDelivery(record.id, winner.userId, {
        announcedAt: new Date(Date.now() - 86_400_000).toISOString(),
      });
      const reminded = deliveryReaches(s, winner.userId, (x) => !!x.remindedAt);
      const from = s.mark();
      s.say(s.chat.broadcaster, '!stream live');
      const reminder = await s.nextBotLine(/still waiting/, from);
      expect(reminder).toContain(`@${winner.login}`);
      expect(reminder).toContain(`${base}/claim`);
      expect(reminder).not.toContain(winner.redeemUrl!);
      expect((await reminded).remindedBy).toBe('chat');
      expect(helix.whispers).toHaveLength(1); // no second whisper into the void
      // Another stream start reminds nobody again.
      const again = s.mark();
      await s.bot.delivery.streamStarted();
      expect(s.botLines(again).some((l) => /still waiting/.test(l))).toBe(false);

      // The claim page reaches the winner.
      const page = await claimPageAs(base, winner.login);
      expect(page).toContain(winner.redeemUrl!);
      await s.bot.repo.flush();
      expect(await dashboardPrizes(s)).toMatchObject([{ login: winner.login, label: 'opened' }]);

      // Waiting until Fourthwall says it is redeemed.
      const redeemed = deliveryReaches(s, winner.userId, (x) => !!x.redeemedAt);
      s.fw.control.redeemGift(winner.giftId!);
      await redeemed;
      expect(await dashboardPrizes(s)).toEqual([]);
      // No link in chat or the log.
      expect(s.chat.transcript.map((e) => e.text).join('\n')).not.toContain(winner.redeemUrl!);
      expect(s.log.text()).not.toContain(winner.redeemUrl!);
    },
  );
});

describe('whisper limits', () => {
  it('45 winners: 40 new recipients a day, 3 a second; the rest wait in the queue, nothing refused or dropped', async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const chat = await startChatServer({
      clock,
      scopes: ['chat:read', 'chat:edit', 'user:manage:whispers'],
      tokenLifetimeSeconds: 30 * 86_400,
    });
    const helix = new SandboxHelix({ auth: chat.tokens, clock });
    chat.mount((req, res) => helix.handle(req, res));
    const apiUrl = chat.authUrl.replace(/\/oauth2$/, '/helix');
    const whispers = new TwitchWhispers({
      apiUrl,
      clientId: chat.clientId,
      token: { current: () => chat.token, canRefresh: () => false, refresh: async () => undefined },
      identity: () => ({ userId: chat.botUserId, scopes: chat.tokens.scopes }),
      clock,
      logger: silentLogger(),
    });
    try {
      const results: boolean[] = [];
      const all = Array.from({ length: 45 }, (_, i) =>
        whispers.send(String(1000 + i), `you won #${i}`).then((ok) => void results.push(ok)),
      );
      // Move time in steps while no whisper is in flight (each queued or answered); real sockets answer in between.
      const until = async (pred: () => boolean, stepMs: number) => {
        for (let i = 0; i < 20_000 && !pred(); i++) {
          await new Promise((r) => setImmediate(r));
          if (whispers.waiting() > 0 && results.length + whispers.waiting() === 45) clock.advance(stepMs);
        }
        expect(pred()).toBe(true);
      };
      await until(() => results.length === 40, 250);
      expect(helix.whispers).toHaveLength(40);
      // Never more than 3 in any second.
      const times = helix.whispers.map((w) => w.at);
      for (let i = 3; i < times.length; i++) expect(times[i]! - times[i - 3]!).toBeGreaterThanOrEqual(1000);
      expect(whispers.waiting()).toBe(5);
      expect(helix.calls.filter((c) => c.status === 429)).toEqual([]);
      // A day later the other 5 go out.
      clock.advance(86_400_000);
      await until(() => results.length === 45, 1000);
      await Promise.all(all);
      expect(results.every((ok) => ok)).toBe(true);
      expect(helix.whispers).toHaveLength(45);
      expect(helix.calls.filter((c) => c.path === '/whispers' && c.status !== 204)).toEqual([]);
    } finally {
      whispers.stop();
      await chat.close();
    }
  });
});
