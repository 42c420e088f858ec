/**
 * A winner's claim page over plain HTTP: logs `login` in through the sandbox's Twitch (its
 * authorize form, the callback, the session cookie carried by hand) and returns the page.
 */
import { expect } from 'vitest';

export async function claimPageAs(base: string, login: string): Promise<string> {
  const start = await fetch(`${base}/claim/login`, { redirect: 'manual' });
  const stateCookie = start.headers.getSetCookie()[0]!.split(';')[0]!;
  const authorize = new URL(start.headers.get('location')!);
  const form = new URLSearchParams(authorize.searchParams);
  form.set('login', login);
  const granted = await fetch(authorize.origin + authorize.pathname, {
    method: 'POST',
    body: form,
    redirect: 'manual',
  });
  const back = await fetch(granted.headers.get('location')!, { headers: { cookie: stateCookie }, redirect: 'manual' });
  expect(back.status).toBe(303);
  const session = back.headers
    .getSetCookie()
    .find((c) => c.startsWith('giftdrop_claim='))!
    .split(';')[0]!;
  return (await fetch(`${base}/claim`, { headers: { cookie: session } })).text();
}
