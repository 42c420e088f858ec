/**
 * The EventSub WebSocket client against the sandbox EventSub server and the Helix sandbox's
 * subscription routes, over real sockets, on one manual clock (keepalive windows and backoffs
 * are moved by the test, never waited for): welcome then subscribe; a redelivered message handled
 * once; a silent socket caught by the keepalive deadline and a new session subscribed again (the
 * feature told of the gap); a session_reconnect switched over without a new subscription or a
 * gap; a dropped socket (close code or abrupt) resubscribed; Twitch's 429 "websocket transports
 * limit exceeded" waited out without opening socket after socket; a refused subscription left
 * refused (no reconnect loop); a revocation passed on. And the sandbox's own rules: a session
 * with no subscription closed with 4003, a client that sends anything closed with 4001.
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ManualClock } from '../src/shared/clock.js';
import type { EventSubTopic, TopicHandlers } from '../src/twitch/eventsub/topics.js';
import { BROADCASTER_ID, eventSubRig, until, type EventSubRig } from './support/eventsub-rig.js';

const rigs: EventSubRig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0)) await r.close();
});

async function rig(o: Parameters<typeof eventSubRig>[0]) {
  const r = await eventSubRig(o);
  rigs.push(r);
  return r;
}

const BITS: EventSubTopic = {
  type: 'channel.bits.use',
  version: '1',
  condition: { broadcaster_user_id: BROADCASTER_ID },
  account: 'broadcaster',
};

function bitsEvent(userId: string, bits: number): Record<string, unknown> {
  return {
    broadcaster_user_id: BROADCASTER_ID,
    broadcaster_user_login: 'streamer',
    broadcaster_user_name: 'streamer',
    user_id: userId,
    user_login: `u${userId}`,
    user_name: `U${userId}`,
    bits,
    type: 'cheer',
    message: null,
    power_up: null,
  };
}

/** A feature that records what it is told. */
function recorder() {
  const events: unknown[] = [];
  const gaps: { since: number; first: boolean }[] = [];
  const refused: string[] = [];
  const revoked: string[] = [];
  const handlers: TopicHandlers = {
    onEvent: (e) => void events.push(e),
    onSubscribed: (info) => void gaps.push(info.gap!),
    onRefused: (p) => void refused.push(p),
    onRevoked: (s) => void revoked.push(s),
  };
  return { events, gaps, refused, revoked, handlers };
}

const enabled = (r: EventSubRig) => r.es.subscriptions().filter((s) => s.status === 'enabled');

describe('EventSub client', () => {
  it('subscribes right after the welcome and hands each message id over once', async () => {
    const clock = new ManualClock(Date.now());
    const r = await rig({ clock });
    const f = recorder();
    r.client.register(BITS, f.handlers);
    await until(() => r.client.health().state === 'connected', 'connected');
    expect(enabled(r)).toHaveLength(1);
    expect(r.es.live()).toHaveLength(1);
    expect(r.es.live()[0]!.keepaliveSeconds).toBe(30); // asked for in the URL
    expect(f.gaps).toEqual([{ since: expect.any(Number), first: true }]);
    expect(r.es.publish('channel.bits.use', bitsEvent('2001', 100), { duplicate: true })).toBe(1);
    r.es.publish('channel.bits.use', bitsEvent('2002', 50));
    await until(() => f.events.length === 2 && r.client.duplicates === 1, 'two events, one duplicate');
    expect(f.events.map((e) => (e as { user_id: string }).user_id)).toEqual(['2001', '2002']);
    expect(r.client.health()).toMatchObject({
      state: 'connected',
      topics: [{ type: 'channel.bits.use', status: 'subscribed' }],
    });
  });

  it('a socket that goes quiet past the keepalive window is replaced: new session, subscribed again, the gap told', async () => {
    const clock = new ManualClock(Date.now());
    const r = await rig({ clock });
    const f = recorder();
    r.client.register(BITS, f.handlers);
    await until(() => r.client.health().state === 'connected', 'connected');
    const first = r.client.sessionId('broadcaster');
    const quietFrom = clock.now();
    r.es.silence();
    clock.advance(30_000); // within the window plus margin: still connected
    expect(r.client.health().state).toBe('connected');
    clock.advance(6_001); // 30 s + 6 s margin: the deadline passed
    expect(r.client.health().state).toBe('disconnected');
    expect(r.client.health().reason).toMatch(/no message within 36 s/);
    clock.advance(100); // the reconnect backoff
    await until(() => r.client.health().state === 'connected', 'reconnected');
    expect(r.client.sessionId('broadcaster')).not.toBe(first);
    expect(enabled(r)).toHaveLength(1);
    expect(enabled(r)[0]!.sessionId).toBe(r.client.sessionId('broadcaster'));
    expect(f.gaps).toEqual([
      { since: expect.any(Number), first: true },
      { since: quietFrom, first: false },
    ]);
    r.es.publish('channel.bits.use', bitsEvent('2003', 10));
    await until(() => f.events.length === 1, 'event on the new session');
  });

  it('session_reconnect: switches to the new socket without a new subscription or a gap', async () => {
    const clock = new ManualClock(Date.now());
    const r = await rig({ clock });
    const f = recorder();
    r.client.register(BITS, f.handlers);
    await until(() => r.client.health().state === 'connected', 'connected');
    const id = r.client.sessionId('broadcaster');
    r.es.reconnect();
    await until(() => r.es.connections === 2 && r.es.live()[0]!.socket !== undefined, 'the new socket');
    r.es.publish('channel.bits.use', bitsEvent('2001', 5));
    await until(() => f.events.length === 1, 'the event after the switch');
    expect(r.es.subscriptions()).toHaveLength(1); // no subscription made again
    expect(enabled(r)).toHaveLength(1);
    expect(r.client.sessionId('broadcaster')).toBe(id);
    expect(f.gaps).toHaveLength(1); // no gap told
    expect(r.client.health().state).toBe('connected');
    // The old socket is gone and the session lives on: the 4004 grace timer does not end it.
    clock.advance(31_000);
    await until(() => r.client.health().state === 'connected', 'still connected');
    expect(r.es.live()).toHaveLength(1);
  });

  it.each([
    ['a Twitch close code (4006 network error)', 4006],
    ['an abrupt drop (no close frame)', undefined],
  ])('a dropped socket (%s): a new session, the subscription made again, the feature told', async (_what, code) => {
    const clock = new ManualClock(Date.now());
    const r = await rig({ clock });
    const f = recorder();
    r.client.register(BITS, f.handlers);
    await until(() => r.client.health().state === 'connected', 'connected');
    r.es.drop(code === undefined ? {} : { code });
    await until(() => r.client.health().state === 'disconnected', 'disconnected');
    if (code !== undefined) expect(r.client.health().reason).toMatch(/4006 network error/);
    r.es.publish('channel.bits.use', bitsEvent('2001', 5)); // missed: not replayed
    clock.advance(100);
    await until(() => r.client.health().state === 'connected', 'reconnected');
    expect(f.gaps.map((g) => g.first)).toEqual([true, false]);
    expect(enabled(r)).toHaveLength(1);
    expect(r.es.live()).toHaveLength(1);
    expect(f.events).toHaveLength(0);
  });

  it("429 'websocket transports limit exceeded': closes its socket, waits the limit backoff, never opens socket after socket", async () => {
    const clock = new ManualClock(Date.now());
    const r = await rig({ clock });
    // Three other sockets of the same account and application hold subscriptions already.
    const others: WebSocket[] = [];
    for (let i = 0; i < 3; i++) {
      const ws = new WebSocket(`${r.es.url}?keepalive_timeout_seconds=600`);
      const welcome = await new Promise<string>((res) => ws.once('message', (d: Buffer) => res(d.toString('utf8'))));
      const session = (JSON.parse(welcome) as { payload: { session: { id: string } } }).payload.session.id;
      await r.broadcasterHelix.request('POST', '/eventsub/subscriptions', {
        body: {
          type: 'channel.channel_points_custom_reward_redemption.add',
          version: '1',
          condition: { broadcaster_user_id: BROADCASTER_ID, reward_id: `reward-${i}` },
          transport: { method: 'websocket', session_id: session },
        },
      });
      others.push(ws);
    }
    const f = recorder();
    r.client.register(BITS, f.handlers);
    await until(() => r.client.health().state === 'disconnected', 'refused by the limit');
    expect(r.client.health().reason).toMatch(
      /3 EventSub connections .*\(websocket transports limit exceeded\).* 30 s$/,
    );
    expect(r.es.connections).toBe(4);
    await until(() => r.es.live().length === 3, 'its socket closed');
    // Nothing more while the backoff runs, however long the test waits in real time.
    clock.advance(29_000);
    await new Promise((res) => setTimeout(res, 100));
    expect(r.es.connections).toBe(4);
    // A slot frees up; the next try succeeds.
    others[0]!.terminate();
    await until(() => r.es.live().length === 2, 'a slot free');
    clock.advance(1_000);
    await until(() => r.client.health().state === 'connected', 'connected after the backoff');
    expect(r.es.connections).toBe(5);
    expect(f.gaps).toHaveLength(1);
    for (const ws of others) ws.terminate();
  });

  it('a refused subscription stays refused: told once, the socket closed, no reconnect loop', async () => {
    const clock = new ManualClock(Date.now());
    const r = await rig({ clock, scopes: ['channel:manage:redemptions'] }); // no bits:read
    const f = recorder();
    const reg = r.client.register(BITS, f.handlers);
    await until(() => f.refused.length === 1, 'refused');
    expect(f.refused[0]).toMatch(
      /Twitch refused the channel\.bits\.use subscription: subscription missing proper authorization/,
    );
    expect(reg.status()).toBe('refused');
    await until(() => r.es.live().length === 0, 'socket closed');
    clock.advance(600_000);
    await new Promise((res) => setTimeout(res, 100));
    expect(r.es.connections).toBe(1);
    expect(r.client.health()).toMatchObject({
      state: 'disconnected',
      topics: [{ status: 'refused', problem: expect.stringMatching(/missing proper authorization/) }],
    });
  });

  it('a revocation is passed on and the topic is not subscribed again', async () => {
    const clock = new ManualClock(Date.now());
    const r = await rig({ clock });
    const f = recorder();
    const reg = r.client.register(BITS, f.handlers);
    await until(() => r.client.health().state === 'connected', 'connected');
    r.es.revoke(enabled(r)[0]!.id, 'authorization_revoked');
    await until(() => f.revoked.length === 1, 'revoked');
    expect(f.revoked).toEqual(['authorization_revoked']);
    expect(reg.status()).toBe('revoked');
    expect(r.es.subscriptions()).toHaveLength(1);
  });

  it('unregister deletes the subscription and closes the idle socket', async () => {
    const clock = new ManualClock(Date.now());
    const r = await rig({ clock });
    const reg = r.client.register(BITS, recorder().handlers);
    await until(() => r.client.health().state === 'connected', 'connected');
    await reg.unregister();
    await until(() => r.es.live().length === 0, 'socket closed');
    expect(enabled(r)).toHaveLength(0);
    expect(r.client.health().state).toBe('off');
  });
});

describe('sandbox EventSub server rules', () => {
  it('closes a session without a subscription after the keepalive window with 4003, and one whose client writes with 4001', async () => {
    const clock = new ManualClock(Date.now());
    const r = await rig({ clock });
    const unused = new WebSocket(`${r.es.url}?keepalive_timeout_seconds=10`);
    const welcome = await new Promise<string>((res) => unused.once('message', (d: Buffer) => res(d.toString('utf8'))));
    expect(JSON.parse(welcome)).toMatchObject({
      metadata: { message_type: 'session_welcome' },
      payload: { session: { keepalive_timeout_seconds: 10, status: 'connected' } },
    });
    const closed = new Promise<number>((res) => unused.once('close', (code: number) => res(code)));
    clock.advance(10_000);
    expect(await closed).toBe(4003);

    const chatty = new WebSocket(r.es.url);
    await new Promise((res) => chatty.once('message', res));
    const closed2 = new Promise<number>((res) => chatty.once('close', (code: number) => res(code)));
    chatty.send('hello');
    expect(await closed2).toBe(4001);
  });

  it('refuses a subscription on a session that is gone, and one of the same type and condition twice', async () => {
    const clock = new ManualClock(Date.now());
    const r = await rig({ clock });
    const ws = new WebSocket(r.es.url);
    await new Promise((res) => ws.once('message', res));
    const session = r.es.live()[0]!;
    const post = () =>
      r.broadcasterHelix.request('POST', '/eventsub/subscriptions', {
        body: { ...BITS, transport: { method: 'websocket', session_id: session.id } },
      });
    await post();
    await expect(post()).rejects.toMatchObject({ status: 409 });
    ws.terminate();
    await until(() => session.ended, 'session ended');
    await expect(post()).rejects.toMatchObject({
      status: 400,
      twitchMessage: 'websocket transport session does not exist or has already disconnected',
    });
  });
});
