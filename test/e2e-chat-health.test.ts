/**
 * /healthz tells the truth about chat (issue 27): while the bot's lines go unconfirmed by Twitch,
 * `chat` is "degraded" with a `chatReason`; once the half-open connection is found and replaced,
 * it is "connected" again and the line is delivered. The real bot (startLocalStack) against the
 * local chat server over real sockets, on a ManualClock (the 15 s confirmation timeout and the
 * probe's PONG deadline pass when the test advances it).
 */
import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/shared/clock.js';
import { startLinkStack, tempDir } from './support/e2e-link-stack.js';

interface Health {
  status: string;
  chat: string;
  chatReason?: string;
}

describe('/healthz and chat confirmations', () => {
  it('says chat is degraded, and why, while a line goes unconfirmed; connected again once the connection is replaced and the line delivered', async () => {
    const dataDir = await tempDir();
    const clock = new ManualClock(Date.now());
    const s = await startLinkStack({ dataDir, clock });
    try {
      const health = async () => (await (await fetch(`${s.bot.http.url}/healthz`)).json()) as Health;
      expect(await health()).toMatchObject({ status: 'ok', chat: 'connected' });
      expect((await health()).chatReason).toBeUndefined();

      // The socket goes half-open: the bot's line vanishes and Twitch never answers it.
      s.chat.halfOpen();
      s.bot.chat.say('said into a half-open socket');
      await s.chat.waitFor(() => s.bot.chat.outboxStats().unconfirmed === 1, 5000, 'the line written');
      expect((await health()).chat).toBe('connected');
      clock.advance(15_000);
      const degraded = await health();
      expect(degraded).toMatchObject({ status: 'ok', chat: 'degraded' });
      expect(degraded.chatReason).toMatch(/not confirmed by Twitch within 15 s/);

      // No PONG to the probe: the connection is replaced, the line said again and confirmed.
      const said = (l: string) => s.chat.botMessages().includes(l);
      clock.advance(5_000);
      await s.chat.waitFor(
        () => said('said into a half-open socket') && s.bot.chat.outboxStats().sent === 1,
        10_000,
        'the line delivered after the reconnect',
      );
      expect(await health()).toMatchObject({ status: 'ok', chat: 'connected' });
      expect((await health()).chatReason).toBeUndefined();
    } finally {
      await s.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 30_000);
});
