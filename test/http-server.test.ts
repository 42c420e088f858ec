/**
 * The bot's HTTP server on its own (startHttpServer), over real sockets: the 200 goes out only
 * once `onEvent` resolved (the event is safe), a rejection is a 503 said in one log line, an event
 * not safe by the deadline is a 503 while its work goes on; duplicates are answered without being
 * handed on, both signature schemes, no configured secret means nothing is accepted, and close()
 * waits for accepted work.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logging/index.js';
import { startHttpServer, type BotHttpServer, type HttpServerOptions } from '../src/http/server.js';
import { APP_SIGNATURE_HEADER, signWebhookBody, type WebhookEvent } from '../src/fourthwall/webhooks.js';
import { LogCapture } from './support/log-capture.js';
import { postWebhook, webhookEnvelope } from './support/e2e-stack.js';

const SECRET = 'shop-secret-for-http-tests';
const APP_KEY = 'app-key-for-http-tests';

let server: BotHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(o: Partial<HttpServerOptions> = {}) {
  const logs = new LogCapture();
  const events: WebhookEvent[] = [];
  const seen = new Set<string>();
  server = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    logger: createLogger({ level: 'debug', destination: logs, secrets: [SECRET, APP_KEY] }),
    secrets: { webhookSecret: SECRET },
    onEvent: (e) => void events.push(e),
    seenEvent: (id) => (seen.has(id) ? true : (seen.add(id), false)),
    health: () => ({ status: 'ok', mode: 'live', chat: 'connected', openDraws: 0 }),
    ...o,
  });
  return { url: `${server.url}/webhooks/fourthwall`, logs, events };
}

describe('startHttpServer', () => {
  it('answers 200 only once onEvent resolved (the event is safe); idle() and close() wait for the work', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const done: string[] = [];
    let handed = 0;
    const { url } = await start({
      onEvent: async (e) => {
        handed += 1;
        await gate;
        done.push(e.id);
      },
    });
    let answered: number | undefined;
    const posting = postWebhook(url, webhookEnvelope('GIFT_DRAW_ENDED_X', {}, 'weve_slow'), { secret: SECRET }).then(
      (res) => (answered = res.status),
    );
    // The request reached the handler and waits for it: no answer yet.
    await expect.poll(() => handed).toBe(1);
    let idle = false;
    const idling = server!.idle().then(() => (idle = true));
    await new Promise((r) => setImmediate(r));
    expect(answered).toBeUndefined();
    expect(idle).toBe(false);
    release();
    expect(await posting).toBe(200);
    expect(done).toEqual(['weve_slow']);
    await idling;
  });

  it('a rejected event is answered 503 with Retry-After and said in one log line; its redelivery gets the 200 once it is safe', async () => {
    let fail = true;
    const { url, logs } = await start({
      onEvent: async () => {
        if (fail) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
      },
    });
    const body = webhookEnvelope('SOMETHING', { private: 'do-not-log-me' }, 'weve_eio');
    const first = await postWebhook(url, body, { secret: SECRET });
    expect(first.status).toBe(503);
    expect(first.retryAfter).toBe('1');
    const said = logs.json().filter((l) => String(l['msg']).includes('not acknowledged'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ eventId: 'weve_eio', level: 50 });
    expect(String(said[0]!['msg'])).toContain('EIO: i/o error, fdatasync');
    expect(logs.text()).not.toContain('do-not-log-me');
    fail = false;
    expect((await postWebhook(url, body, { secret: SECRET })).status).toBe(200);
    expect((await fetch(`${server!.url}/healthz`)).status).toBe(200);
  });

  it('an event not safe by the deadline is answered 503 while its work goes on', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let finished = false;
    const { url, logs } = await start({ ackDeadlineMs: 100, onEvent: () => gate.then(() => void (finished = true)) });
    const res = await postWebhook(url, webhookEnvelope('SOMETHING', {}, 'weve_late'), { secret: SECRET });
    expect(res.status).toBe(503);
    expect(logs.json().find((l) => String(l['msg']).includes('not saved yet 100 ms after it arrived'))).toMatchObject({
      eventId: 'weve_late',
    });
    expect(finished).toBe(false);
    release();
    await server!.idle();
    expect(finished).toBe(true);
  });

  it('a duplicate event id gets 200 {duplicate:true} and is not handed on again', async () => {
    const { url, events } = await start();
    const body = webhookEnvelope('SOMETHING', { n: 1 }, 'weve_dup');
    const first = await postWebhook(url, body, { secret: SECRET });
    const second = await postWebhook(url, body, { secret: SECRET });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(JSON.parse(second.text)).toEqual({ ok: true, duplicate: true });
    await server!.idle();
    expect(events.map((e) => e.id)).toEqual(['weve_dup']);
  });

  it('accepts the app scheme when an app key is configured, and only the configured schemes', async () => {
    const { url, events } = await start({ secrets: { appHmacKey: APP_KEY } });
    const body = webhookEnvelope('SOMETHING', {}, 'weve_app');
    // the shop header signed with the shop secret means nothing here
    expect((await postWebhook(url, body, { secret: SECRET })).status).toBe(401);
    // the app header with the app key is accepted
    const ok = await postWebhook(url, body, { headers: { [APP_SIGNATURE_HEADER]: signWebhookBody(body, APP_KEY) } });
    expect(ok.status).toBe(200);
    await server!.idle();
    expect(events.map((e) => e.id)).toEqual(['weve_app']);
  });

  it('with no secret configured nothing is accepted', async () => {
    const { url, events, logs } = await start({ secrets: {} });
    expect((await postWebhook(url, webhookEnvelope('SOMETHING', {}), { secret: '' })).status).toBe(401);
    expect(events).toEqual([]);
    expect(logs.text()).toContain('no webhook secret or app HMAC key configured');
  });
});
