/**
 * The Helix sandbox's Send Chat Message (`POST /helix/chat/messages`, sandbox/helix/chat-messages.ts)
 * over real HTTP on 127.0.0.1, on a manual clock: Twitch's token rules (user token with
 * user:write:chat and the sender's own id; an app token from the client credentials grant with
 * user:bot and channel:bot or moderator status, which gives the Chat Bot badge, for_source_only
 * for app tokens only), its answers (`is_sent`, `drop_reason { code, message }`), and the sender's
 * chat limits as IRC has them (20 per 30 s and 1 s between lines unless moderator, 100 per 30 s
 * as moderator, duplicates, slow mode; the same rules object judges IRC lines), each drop
 * recorded in the transcript.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer, type ChatServerOptions } from '../src/sandbox/chat/index.js';
import { SandboxHelix } from '../src/sandbox/helix/index.js';
import { chatMessagesRoute } from '../src/sandbox/helix/chat-messages.js';
import { ManualClock } from '../src/shared/clock.js';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function rig(opts: ChatServerOptions = {}) {
  const clock = new ManualClock(Date.now());
  const chat = await startChatServer({
    clock,
    scopes: ['chat:read', 'chat:edit', 'user:read:chat', 'user:write:chat'],
    ...opts,
  });
  closers.push(() => chat.close());
  const helix = new SandboxHelix({ auth: chat.tokens, clock });
  helix.route(chatMessagesRoute(chat, () => chat.tokens.scopes));
  chat.mount((req, res) => helix.handle(req, res));
  const api = chat.authUrl.replace(/\/oauth2$/, '/helix');
  const post = async (body: Record<string, unknown>, token = chat.token) => {
    const res = await fetch(`${api}/chat/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'client-id': chat.clientId, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      body: (await res.json()) as {
        data?: { message_id: string; is_sent: boolean; drop_reason: { code: string; message: string } | null }[];
        message?: string;
      },
    };
  };
  const say = (message: string, token?: string, extra: Record<string, unknown> = {}) =>
    post({ broadcaster_id: chat.channelId, sender_id: chat.botUserId, message, ...extra }, token);
  return { clock, chat, helix, post, say };
}

async function appToken(chat: ChatServer): Promise<string> {
  const res = await fetch(`${chat.authUrl}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      client_id: chat.clientId,
      client_secret: chat.clientSecret,
      grant_type: 'client_credentials',
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

describe('Send Chat Message in the Helix sandbox', () => {
  it('a user token sends as the bot: is_sent true with the message id, in the transcript and to IRC clients', async () => {
    const { chat, say } = await rig();
    const r = await say('hello from the API');
    expect(r.status).toBe(200);
    expect(r.body.data![0]).toMatchObject({ is_sent: true, drop_reason: null });
    const entry = chat.transcript.find((e) => e.kind === 'bot')!;
    expect(entry).toMatchObject({
      text: 'hello from the API',
      via: 'api',
      chatBotBadge: false,
      messageId: r.body.data![0]!.message_id,
    });
    expect(entry).not.toHaveProperty('forSourceOnly');
  });

  it('refuses what Twitch refuses: another sender, a missing scope, for_source_only with a user token, a bad body, another channel, over 500 characters', async () => {
    const { chat, post, say } = await rig();
    expect((await post({ broadcaster_id: chat.channelId, sender_id: '424242', message: 'x' })).status).toBe(401);
    expect((await say('x', chat.token, { for_source_only: true })).status).toBe(400);
    expect((await post({ broadcaster_id: chat.channelId, sender_id: chat.botUserId })).status).toBe(400);
    expect((await post({ broadcaster_id: '999999', sender_id: chat.botUserId, message: 'x' })).status).toBe(400);
    const long = await say('y'.repeat(501));
    expect(long).toMatchObject({ status: 422, body: { message: 'The message is too large.' } });
    expect((await say('🎁'.repeat(500))).status).toBe(200); // 500 characters (code points) fit
    expect((await say('x', 'not-a-token')).status).toBe(401);
    const { chat: noScope, say: sayNoScope } = await rig({ scopes: ['chat:read', 'chat:edit'] });
    expect(await sayNoScope('x')).toMatchObject({ status: 401, body: { message: 'Missing scope: user:write:chat' } });
    expect(noScope.transcript.filter((e) => e.via === 'api')).toEqual([]);
    expect(chat.transcript.filter((e) => e.kind === 'bot')).toHaveLength(1);
  });

  it('an app token (client credentials) sends with the Chat Bot badge only with user:bot and channel:bot or moderator status', async () => {
    const { chat, say } = await rig({ scopes: ['user:read:chat', 'user:write:chat', 'user:bot'] });
    const app = await appToken(chat);
    const refused = await say('badge?', app);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/channel:bot/);
    chat.channelBotGranted = true;
    const sent = await say('with the badge', app);
    expect(sent.body.data![0]!.is_sent).toBe(true);
    expect(chat.transcript.find((e) => e.kind === 'bot')).toMatchObject({
      text: 'with the badge',
      chatBotBadge: true,
      forSourceOnly: true,
    });
    // moderator status instead of channel:bot
    chat.channelBotGranted = false;
    chat.setBotMod(true);
    expect((await say('as a mod', app, { for_source_only: false })).body.data![0]!.is_sent).toBe(true);
    expect(chat.transcript.filter((e) => e.kind === 'bot').at(-1)).toMatchObject({
      forSourceOnly: false,
      chatBotBadge: true,
    });
    // an app token without the bot's user:bot
    const { chat: noBot, say: sayNoBot } = await rig({ botIsMod: true });
    expect(await sayNoBot('x', await appToken(noBot))).toMatchObject({ status: 403 });
    // an expired app token
    chat.tokens.appTokens!.expireAll();
    expect((await say('late', app)).status).toBe(401);
  });

  it("drops with Twitch's reasons: the sender's 20 per 30 s, 1 s between lines, duplicates, slow mode, a forced AutoMod drop", async () => {
    const { clock, chat, say } = await rig();
    const first = await say('one');
    expect(first.body.data![0]!.is_sent).toBe(true);
    const tooSoon = await say('two');
    expect(tooSoon.body.data![0]).toEqual({
      message_id: '',
      is_sent: false,
      drop_reason: { code: 'msg_ratelimit', message: expect.stringContaining('too quickly') },
    });
    clock.advance(1100);
    expect((await say('one')).body.data![0]!.drop_reason?.code).toBe('msg_duplicate');
    // 20 attempts in the window (dropped ones count, as on Twitch): the next is rate limited even after 1 s gaps
    for (let i = 0; i < 17; i++) {
      clock.advance(1100);
      await say(`line ${i}`);
    }
    clock.advance(1100);
    expect((await say('twenty-first')).body.data![0]!.drop_reason?.code).toBe('msg_ratelimit');
    clock.advance(30_000);
    expect((await say('after the window')).body.data![0]!.is_sent).toBe(true);
    chat.setRoomState({ slow: 10 });
    clock.advance(2000);
    expect((await say('slow')).body.data![0]!.drop_reason).toMatchObject({
      code: 'msg_slowmode',
      message: expect.stringMatching(/8 seconds/),
    });
    chat.setRoomState({ slow: 0 });
    chat.dropNextApiMessage('msg_rejected');
    clock.advance(2000);
    expect((await say('held by automod')).body.data![0]!.drop_reason?.code).toBe('msg_rejected');
    const notices = chat.transcript.filter((e) => e.kind === 'notice' && e.via === 'api').map((e) => e.msgId);
    expect(notices).toEqual(['msg_ratelimit', 'msg_duplicate', 'msg_ratelimit', 'msg_slowmode', 'msg_rejected']);
  });

  it('a moderator bot has 100 per 30 s and no gap, like over IRC', async () => {
    const { chat, say } = await rig({ botIsMod: true });
    const answers = [];
    for (let i = 0; i < 101; i++) answers.push((await say(`m${i}`)).body.data![0]!);
    expect(answers.slice(0, 100).every((a) => a.is_sent)).toBe(true);
    expect(answers[100]!.drop_reason?.code).toBe('msg_ratelimit');
    expect(chat.botMessages()).toHaveLength(100);
  });
});
