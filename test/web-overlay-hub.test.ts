/**
 * The overlay's data path without a browser: the real giveaway engine (over the port fakes and the
 * real file repository) feeding a real OverlayHub, read by an SSE client over a real socket.
 * Thousands of `!enter` in one burst reach the client as a handful of frames, not one per entrant;
 * the newest names come newest first; after the draw the frames carry the winners' display names
 * and the fairness data but no link, gift id, user id or e-mail. Plus the text cleaning rules.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventEmitter } from 'node:events';
import { overlayKey, type OverlayState } from '../src/web/operator/overlay-view.js';
import { toOrderAlert } from '../src/shop/alerts.js';
import type { Order } from '../src/fourthwall/index.js';
import { OverlayHub } from '../src/web/operator/overlay-hub.js';
import { overlayName, overlayText } from '../src/web/operator/safe-text.js';
import { chatMsg, driveUntil, harness, purchase, removeDir, waitFor, type Harness } from './support/giveaway-fakes.js';

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function serve(hub: OverlayHub): Promise<string> {
  const server: Server = createServer((req, res) => hub.handleEvents(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(
    () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function follow(url: string): { frames: OverlayState[]; raw: string[] } {
  const out = { frames: [] as OverlayState[], raw: [] as string[] };
  const req = request(`${url}/overlay/events`, (res) => {
    res.setEncoding('utf8');
    let buf = '';
    res.on('data', (chunk: string) => {
      buf += chunk;
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (!frame.startsWith('event: state')) continue;
        out.raw.push(frame);
        out.frames.push(
          JSON.parse(
            frame
              .split('\n')
              .find((l) => l.startsWith('data: '))!
              .slice(6),
          ) as OverlayState,
        );
      }
    });
  });
  req.on('error', () => undefined);
  req.end();
  cleanup.push(async () => void req.destroy());
  return out;
}

describe('overlay hub', () => {
  it('batches a burst of !enter into a few frames and never sends a link', async () => {
    const h: Harness = await harness({ settings: { giftFlow: 'purchase', reminders: { ackEverySeconds: 0 } } });
    cleanup.push(async () => {
      await h.shutdown();
      await removeDir(h.dir);
    });
    const hub = new OverlayHub({ engine: h.svc, clock: h.clock, enter: '!enter', winnersSeconds: 60, batchMs: 100 });
    cleanup.push(async () => hub.close());
    const client = follow(await serve(hub));
    await waitFor(() => client.frames.length === 1, 'first frame');
    expect(client.frames[0]!.draws).toEqual([]);

    await h.svc.handleGiftPurchase(purchase('p1', 2));
    await waitFor(() => client.frames.at(-1)!.draws.length === 1, 'draw frame');
    const before = client.frames.length;
    for (let i = 0; i < 2000; i++) h.svc.enter(chatMsg(`viewer${i}`, { userId: `u${i}` }));
    await waitFor(() => client.frames.at(-1)!.draws[0]!.entrants === 2000, 'count 2000', 10_000);
    expect(client.frames.length - before).toBeLessThanOrEqual(2);
    const d = client.frames.at(-1)!.draws[0]!;
    expect(d.stage).toBe('open');
    // (the fake chat's display names are the upper-cased logins)
    expect(d.joined).toBe('Just joined: VIEWER1999, VIEWER1998, VIEWER1997');
    expect(d.count).toBe('2000 entered');
    expect(d.headline).toBe('Type !enter to win!');
    expect(d.subtitle).toBe('2 winners · gifted by kind_supporter');
    expect(hub.stats().frames).toBe(client.frames.length - 1);

    // close and finish: the winners' names, nothing else about them, and no fairness hash
    await driveUntil(h.clock, () => h.svc.openDrawCount() === 0);
    await h.svc.whenIdle();
    await waitFor(() => client.frames.at(-1)!.draws[0]?.stage === 'winners', 'winners frame');
    const rec = (await h.repo.listDraws())[0]!;
    const w = client.frames.at(-1)!.draws[0]!;
    expect(w.winners.map((x) => x.name)).toEqual(rec.winners.map((x) => x.displayName));
    expect(w.headline).toBe(rec.winners.length === 1 ? 'Winner' : 'Winners');
    expect(w.resultAt).toBeTypeOf('number');
    const all = client.raw.join('\n');
    // no commitment, digest, seed or draw id: no run of 16 hex digits anywhere, the key is opaque
    expect(all).not.toMatch(/[0-9a-f]{16}/i);
    expect(all).not.toContain(rec.id);
    expect(w.key).toBe(overlayKey(rec.id));
    for (const winner of rec.winners) {
      expect(winner.giftId).toBeTruthy();
      expect(all).not.toContain(winner.giftId!);
      expect(all).not.toContain(`"${winner.userId}"`);
    }
    expect(all).not.toMatch(/https?:|redeem|gft_/);
  });

  it('shows the running draws first, then at most maxResults results newest first; each leaves after winnersSeconds', async () => {
    const h: Harness = await harness({ settings: { giftFlow: 'purchase', reminders: { ackEverySeconds: 0 } } });
    cleanup.push(async () => {
      await h.shutdown();
      await removeDir(h.dir);
    });
    const hub = new OverlayHub({
      engine: h.svc,
      clock: h.clock,
      enter: '!enter',
      winnersSeconds: 3600,
      maxResults: 2,
      batchMs: 10,
    });
    cleanup.push(async () => hub.close());
    const keys = () => hub.state().draws.map((d) => `${d.key}:${d.stage}`);
    const key = (id: string | undefined) => overlayKey(id!);
    const announcedAt = new Map<string, number>();
    h.svc.events.on('winners', (r) => announcedAt.set(r.id, h.clock.now()));
    const ids: string[] = [];
    const openOne = async (i: number) => {
      await h.svc.handleGiftPurchase(purchase(`p${i}`, 1));
      const id = h.svc.drawViews().find((v) => v.active)!.record.id;
      ids.push(id);
      h.svc.enter(chatMsg(`viewer${i}`, { userId: `u${i}` }));
      return id;
    };
    const drawIt = async () => {
      await driveUntil(h.clock, () => h.svc.openDrawCount() === 0);
      await h.svc.whenIdle();
      h.clock.advance(10_000);
    };
    // three draws in a row, each to its winners: the oldest has left, at most two are shown
    for (let i = 0; i < 3; i++) {
      await openOne(i);
      await drawIt();
    }
    expect(keys()).toEqual([`${key(ids[2])}:winners`, `${key(ids[1])}:winners`]);
    // a fourth, open: first, the two newest results after it
    const open = await openOne(3);
    expect(keys()).toEqual([`${key(open)}:open`, `${key(ids[2])}:winners`, `${key(ids[1])}:winners`]);
    await drawIt();
    expect(keys()).toEqual([`${key(ids[3])}:winners`, `${key(ids[2])}:winners`]);
    // each result leaves winnersSeconds after its winners were announced (and an older one does not come back)
    h.clock.advance(announcedAt.get(ids[2]!)! + 3_600_000 + 1 - h.clock.now());
    expect(keys()).toEqual([`${key(ids[3])}:winners`]);
    h.clock.advance(announcedAt.get(ids[3]!)! + 3_600_000 + 1 - h.clock.now());
    expect(keys()).toEqual([]);
  });

  it('builds no frame while no overlay is connected; one that connects gets the state then', async () => {
    const h: Harness = await harness({ settings: { giftFlow: 'purchase', reminders: { ackEverySeconds: 0 } } });
    cleanup.push(async () => {
      await h.shutdown();
      await removeDir(h.dir);
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let hub: OverlayHub;
    try {
      hub = new OverlayHub({ engine: h.svc, clock: h.clock, enter: '!enter', winnersSeconds: 60, batchMs: 100 });
      cleanup.push(async () => hub.close());
      await h.svc.handleGiftPurchase(purchase('p1', 2));
      for (let i = 0; i < 300; i++) h.svc.enter(chatMsg(`viewer${i}`, { userId: `u${i}` }));
      vi.advanceTimersByTime(1_000); // every batch window the burst marked has passed
      expect(hub.stats().frames).toBe(0);
    } finally {
      vi.useRealTimers();
    }
    const client = follow(await serve(hub));
    await waitFor(() => client.frames.length === 1, 'first frame');
    expect(client.frames[0]!.draws[0]!.entrants).toBe(300);
  });

  it("shows supporter alerts for alertSeconds in the overlay's words (the chat's safe view: no e-mail, address or order id); a setting turns them off", async () => {
    const h: Harness = await harness({});
    cleanup.push(async () => {
      await h.shutdown();
      await removeDir(h.dir);
    });
    const alerts = new EventEmitter();
    const hub = new OverlayHub({
      engine: h.svc,
      clock: h.clock,
      enter: '!enter',
      winnersSeconds: 60,
      alerts,
      alertSeconds: 5,
      batchMs: 10,
    });
    const off = new OverlayHub({
      engine: h.svc,
      clock: h.clock,
      enter: '!enter',
      winnersSeconds: 60,
      alerts,
      showAlerts: false,
      batchMs: 10,
    });
    cleanup.push(async () => (hub.close(), off.close()));
    const order = {
      id: 'ord_0f3c9a8e2b7d4c1a9e8f7a6b5c4d3e2f',
      friendlyId: 'KX7Q2M',
      email: 'fan@example.com',
      username: 'merch_fan',
      offers: [{ name: 'Giftdrop Hoodie' }, { name: 'Giftdrop Mug' }],
      amounts: { total: { value: 60, currency: 'USD' } },
      shipping: { address: { name: 'Real Name', address1: '1 Main St' } },
    } as unknown as Order;
    alerts.emit('alert', toOrderAlert(order, true, new Date(h.clock.now()).toISOString()));
    alerts.emit('alert', toOrderAlert({ ...order, username: undefined }, false, new Date(h.clock.now()).toISOString()));
    const shown = hub.state().alerts;
    expect(shown.map((a) => [a.title, a.line])).toEqual([
      ['New order', 'merch_fan bought Giftdrop Hoodie and Giftdrop Mug · $60.00'],
      ['New order', 'someone bought Giftdrop Hoodie and Giftdrop Mug'],
    ]);
    const text = JSON.stringify(hub.state());
    for (const secret of ['fan@example.com', 'ord_', 'KX7Q2M', 'Real Name', 'Main St'])
      expect(text).not.toContain(secret);
    expect(off.state().alerts).toEqual([]);
    h.clock.advance(5_100);
    expect(hub.state().alerts).toEqual([]);
  });

  it('cleans names and text: no links, addresses, tokens or control characters', () => {
    expect(overlayText('see https://x.example/gifts/gft_1?token=abc now')).toBe('see [link] now');
    expect(overlayText('mail me: someone@example.com')).toBe('mail me: [link]');
    expect(overlayText('go to www.evil.tv or shop.example.com/x')).toBe('go to [link] or [link]');
    expect(overlayText('key abcdefghijklmnopqrstuvwxyz0123')).toBe('key […]');
    expect(overlayName('\u202eevil\u0007name\n', 'login')).toBe('evilname');
    expect(overlayName('\u200b', 'fallback_login')).toBe('fallback_login');
    expect(overlayName('<svg/onload=alert(1)>', 'x')).toBe('<svg/onload=alert(1)>'); // escaped by the DOM (textContent)
    expect(overlayText('ab '.repeat(100), 10)).toHaveLength(10);
  });
});
