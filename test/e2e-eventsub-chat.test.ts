/**
 * Chat over EventSub end to end (`chat.transport: "eventsub"`), the real bot in process against
 * the local sandboxes over real sockets: it reads the channel's chat as `channel.chat.message`
 * notifications from the sandbox EventSub server and sends with Helix Send Chat Message on the
 * Helix sandbox, with an app access token (the Chat Bot badge) when Twitch allows it.
 * - a line Twitch answers with `is_sent: false` is an unconfirmed line: retried once for a
 *   duplicate or a rate limit, dropped and reported for any other reason (AutoMod's, or a code the
 *   bot never saw), never claimed sent ('sent' event, outbox count, the channel's transcript);
 *   several in a row make chat `degraded` on /healthz until a line gets through;
 * - the badge: the app token is used while Twitch allows it (the bot is a moderator); refused, the
 *   line goes with the bot's own token, and the badge comes back once Twitch shows the bot as a
 *   moderator;
 * - a token without the EventSub chat scopes is refused at start with one line naming them.
 * (The Shared Chat rule over this transport: test/e2e-shared-chat.test.ts.)
 */
import { describe, it } from 'vitest';
import type { TranscriptEntry } from '../src/sandbox/chat/index.js';
import { startInProcessStack, waitUntil, type InProcessOptions, type InProcessStack } from './support/e2e-stack.js';

/** Outbox windows scaled down (a rate-limit NOTICE waits a whole window before its retry). */
async function withStack<T>(o: InProcessOptions, fn: (s: InProcessStack) => Promise<T>): Promise<T> {
  const s = await startInProcessStack({
    ...o,
    settings: { chat: { transport: 'eventsub' }, ...o.settings },
    outbox: { minIntervalMs: 50, pacingMarginMs: 10, backoffMs: 100, windowMs: 1000, ...o.outbox },
  });
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

const botLines = (s: InProcessStack): TranscriptEntry[] => s.chatServer.transcript.filter((e) => e.kind === 'bot');
const apiNotices = (s: InProcessStack): TranscriptEntry[] =>
  s.chatServer.transcript.filter((e) => e.kind === 'notice' && e.via === 'api');

/**
 * Says `text` and waits until the channel has it and the bot counted it sent (Twitch's answer
 * reached it); a line starting with it: a retry may carry an invisible variation.
 */
async function said(s: InProcessStack, text: string): Promise<TranscriptEntry> {
  let confirmed = false;
  const onSent = (t: string) => {
    if (t.startsWith(text)) confirmed = true;
  };
  s.bot.chat.on('sent', onSent);
  try {
    s.bot.chat.say(text);
    await s.chatServer.waitFor(() => botLines(s).some((e) => e.text.startsWith(text)), 5000, `"${text}" delivered`);
    await waitUntil(() => confirmed, 5000, `"${text}" confirmed by the bot`);
  } finally {
    s.bot.chat.off('sent', onSent);
  }
  return botLines(s).find((e) => e.text.startsWith(text))!;
}

describe.concurrent('chat over EventSub', () => {
  it('reads and sends: viewers enter through channel.chat.message, the bot talks with the Chat Bot badge, /healthz names the transport', async ({
    expect,
  }) => {
    await withStack({}, async (s) => {
      expect(s.bot.health()).toMatchObject({ chat: 'connected', chatTransport: 'eventsub', eventsub: 'connected' });
      const heard: string[] = [];
      s.bot.chat.on('message', (m: { text: string }) => heard.push(m.text));
      s.chatServer.inject(s.chatServer.viewer('reader_one'), 'hello bot');
      await waitUntil(() => heard.includes('hello bot'), 5000, 'the viewer line read over EventSub');
      const first = await said(s, 'first line');
      expect(first).toMatchObject({ via: 'api', chatBotBadge: true });
      // the bot's own line came back over EventSub with its moderator badge: moderator limits now
      await waitUntil(() => s.bot.chat.isMod(), 5000, 'the bot knows it is a moderator');
      expect(s.bot.chat.outboxStats().sent).toBe(1);
      expect(heard).toEqual(['hello bot']); // its own lines are not handed on as chat
    });
  });

  it('is_sent: false is an unconfirmed line: retried once (duplicate, rate limit), else dropped and reported, never claimed sent', async ({
    expect,
  }) => {
    await withStack({}, async (s) => {
      const confirmed: string[] = [];
      const notices: string[] = [];
      s.bot.chat.on('sent', (text: string) => confirmed.push(text));
      s.bot.chat.on('notice', (code: string) => notices.push(code));
      await said(s, 'warm up');

      // a duplicate: retried once, delivered once
      s.chatServer.dropNextApiMessage('msg_duplicate');
      await said(s, 'retried line');
      expect(botLines(s).filter((e) => e.text.startsWith('retried line'))).toHaveLength(1);
      expect(apiNotices(s).map((e) => [e.msgId, e.attempted])).toEqual([['msg_duplicate', 'retried line']]);
      expect(s.bot.chat.outboxStats()).toMatchObject({ sent: 2, retried: 1, dropped: 0 });

      // AutoMod's rejection, a reason the bot never saw, and a second refusal after the one retry: dropped, reported, never sent
      s.chatServer.dropNextApiMessage('msg_rejected');
      s.bot.chat.say('held by automod');
      s.chatServer.dropNextApiMessage('msg_brand_new_reason');
      s.bot.chat.say('unknown reason');
      s.chatServer.dropNextApiMessage('msg_ratelimit');
      s.chatServer.dropNextApiMessage('msg_ratelimit');
      s.bot.chat.say('limited twice');
      await said(s, 'after the drops');
      expect(
        apiNotices(s)
          .slice(1)
          .map((e) => [e.msgId, e.attempted]),
      ).toEqual([
        ['msg_rejected', 'held by automod'],
        ['msg_brand_new_reason', 'unknown reason'],
        ['msg_ratelimit', 'limited twice'],
        ['msg_ratelimit', 'limited twice'],
      ]);
      const delivered = botLines(s).map((e) => e.text);
      for (const gone of ['held by automod', 'unknown reason', 'limited twice']) {
        expect(delivered.some((t) => t.startsWith(gone))).toBe(false);
        expect(confirmed.some((t) => t.startsWith(gone))).toBe(false);
      }
      expect(notices).toEqual([
        'msg_duplicate',
        'msg_rejected',
        'msg_brand_new_reason',
        'msg_ratelimit',
        'msg_ratelimit',
      ]);
      expect(s.bot.chat.outboxStats()).toMatchObject({ sent: 3, retried: 2, dropped: 3 });
      expect(confirmed).toHaveLength(3);
      expect(s.logs.lines.some((l) => l.includes('is_sent: false, msg_rejected'))).toBe(true);
    });
  });

  it('a line whose request may have reached Twitch (a 5xx) is sent once and dropped, never repeated (no doubled line)', async ({
    expect,
  }) => {
    await withStack({}, async (s) => {
      await said(s, 'warm up');
      const posts = () => s.helix.calls.filter((c) => c.path === '/chat/messages').length;
      const before = posts();
      const dropped = s.bot.chat.outboxStats().dropped;
      s.helix.setDown(true);
      s.bot.chat.say('during the outage');
      await waitUntil(() => s.bot.chat.outboxStats().dropped === dropped + 1, 5000, 'the line dropped');
      s.helix.setDown(false);
      expect(posts() - before).toBe(1);
      await said(s, 'after the outage');
      expect(botLines(s).some((e) => e.text.startsWith('during the outage'))).toBe(false);
      expect(s.logs.lines.some((l) => l.includes('may or may not have been written; not resent'))).toBe(true);
    });
  });

  it('several lines in a row not sent make chat degraded on /healthz, with the reason, until a line gets through', async ({
    expect,
  }) => {
    await withStack({}, async (s) => {
      await said(s, 'warm up');
      for (let i = 0; i < 3; i++) {
        s.chatServer.dropNextApiMessage('msg_rejected');
        s.bot.chat.say(`rejected ${i}`);
      }
      await waitUntil(() => s.bot.health().chat === 'degraded', 5000, 'chat degraded');
      expect(s.bot.health().chatReason).toMatch(/last 3 chat lines of the bot were not sent \(Twitch: msg_rejected\)/);
      await said(s, 'through again');
      expect(s.bot.health().chat).toBe('connected');
    });
  });

  it('the Chat Bot badge: refused while the bot is no moderator (line sent without it), back once Twitch shows it as one', async ({
    expect,
  }) => {
    await withStack({ chat: { botIsMod: false } }, async (s) => {
      const plain = await said(s, 'no badge yet');
      expect(plain).toMatchObject({ via: 'api', chatBotBadge: false });
      expect(s.logs.lines.filter((l) => l.includes('Twitch refused the app token for chat'))).toHaveLength(1);
      s.chatServer.setBotMod(true);
      await said(s, 'echo shows the moderator badge');
      await waitUntil(() => s.bot.chat.isMod(), 5000, 'the bot knows it is a moderator');
      expect(await said(s, 'badge again')).toMatchObject({ chatBotBadge: true });
    });
  });

  it('a token without user:read:chat and user:write:chat is refused at start, naming them', async ({ expect }) => {
    await expect(withStack({ chat: { scopes: ['chat:read', 'chat:edit'] } }, async () => undefined)).rejects.toThrow(
      /TWITCH_TOKEN lacks the scopes user:read:chat user:write:chat/,
    );
  });
});
