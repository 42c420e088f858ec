/**
 * Dashboard sessions over real sockets against the whole local stack (the real bot): `?token=`
 * starts a random server-side session (the cookie is named for the port, HttpOnly, SameSite=Strict,
 * with Max-Age, a fresh value per sign-in, never derived from the token); the session opens the
 * APIs; a cookie under another port's name does not; after `POST /dashboard/api/logout`, or once
 * the session expired on the bot's clock (12 h), the same cookie gets 401.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../src/shared/clock.js';
import { SESSION_TTL_MS } from '../src/web/operator/dashboard-auth.js';
import { startLinkStack, type LinkStack } from './support/e2e-link-stack.js';

let offset = 0;
const clock: Clock = { now: () => Date.now() + offset, setTimeout: (fn, ms) => systemClock.setTimeout(fn, ms) };
let s: LinkStack;

beforeAll(async () => {
  s = await startLinkStack({ clock });
}, 60_000);
afterAll(async () => {
  await s?.close(true);
});

async function signIn(): Promise<{ cookie: string; header: string }> {
  const res = await fetch(`${s.bot.http.localUrl}/dashboard?token=${encodeURIComponent(s.bot.pages.token.token)}`, { redirect: 'manual' });
  expect(res.status).toBe(303);
  const header = res.headers.get('set-cookie')!;
  return { cookie: header.split(';')[0]!, header };
}

const state = (cookie: string) => fetch(`${s.bot.http.localUrl}/dashboard/api/state`, { headers: { cookie } }).then((r) => r.status);

describe('dashboard sessions', () => {
  it('are random, server-side, port-bound cookies', async () => {
    const a = await signIn();
    const b = await signIn();
    expect(a.cookie).toMatch(new RegExp(`^giftdrop_dashboard_${s.bot.http.localPort}=[A-Za-z0-9_-]{43}$`));
    expect(a.cookie).not.toBe(b.cookie);
    expect(a.cookie).not.toContain(s.bot.pages.token.token);
    expect(a.header).toMatch(/HttpOnly/);
    expect(a.header).toMatch(/SameSite=Strict/);
    expect(a.header).toMatch(new RegExp(`Max-Age=${SESSION_TTL_MS / 1000}`));
    expect(await state(a.cookie)).toBe(200);
    expect(await state(b.cookie)).toBe(200);
    // the same value under another port's name is not a session here
    expect(await state(a.cookie.replace(`_${s.bot.http.localPort}=`, '_1=')) ).toBe(401);
    // a made-up id is not one either
    expect(await state(`giftdrop_dashboard_${s.bot.http.localPort}=${'A'.repeat(43)}`)).toBe(401);
  });

  it('a logged-out session gets 401 (others stay signed in)', async () => {
    const a = await signIn();
    const b = await signIn();
    const out = await fetch(`${s.bot.http.localUrl}/dashboard/api/logout`, { method: 'POST', headers: { cookie: a.cookie, 'content-type': 'application/json' }, body: '{}' });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(new RegExp(`^giftdrop_dashboard_${s.bot.http.localPort}=; .*Max-Age=0`));
    expect(await state(a.cookie)).toBe(401);
    expect(await state(b.cookie)).toBe(200);
    // logout is a state change: a GET does not do it
    expect((await fetch(`${s.bot.http.localUrl}/dashboard/api/logout`, { headers: { cookie: b.cookie } })).status).not.toBe(200);
    expect(await state(b.cookie)).toBe(200);
  });

  it('an expired session gets 401; the token signs in again', async () => {
    const a = await signIn();
    expect(await state(a.cookie)).toBe(200);
    offset += SESSION_TTL_MS - 1000;
    expect(await state(a.cookie)).toBe(200);
    offset += 1000;
    expect(await state(a.cookie)).toBe(401);
    const again = await signIn();
    expect(await state(again.cookie)).toBe(200);
    // the bearer token itself still works for scripts
    expect((await fetch(`${s.bot.http.localUrl}/dashboard/api/state`, { headers: { authorization: `Bearer ${s.bot.pages.token.token}` } })).status).toBe(200);
  });
});
