/**
 * A simulated winner on the claim page, for the sandbox demo: logs in through the local Twitch's
 * authorize page exactly as a browser would (the state cookie carried by hand, the single-use
 * code, the session cookie), reads their page, and redeems their prize on the local shop's redeem
 * page (a POST, which places the order and sends ORDER_PLACED). Returns how many links the page
 * showed; never returns or prints a link.
 */

/** Logs in as `login` on `<base>/claim` and redeems every prize the page shows; resolves with their count. */
export async function claimAndRedeem(base: string, login: string): Promise<number> {
  const start = await fetch(`${base}/claim/login`, { redirect: 'manual' });
  const stateCookie = start.headers.getSetCookie()[0]?.split(';')[0];
  const authorize = start.headers.get('location');
  if (!stateCookie || !authorize) throw new Error(`the claim page did not start a login (HTTP ${start.status})`);
  const auth = new URL(authorize);
  const form = new URLSearchParams(auth.searchParams);
  form.set('login', login);
  const granted = await fetch(auth.origin + auth.pathname, { method: 'POST', body: form, redirect: 'manual' });
  const callback = granted.headers.get('location');
  if (!callback) throw new Error(`the local Twitch did not log ${login} in (HTTP ${granted.status})`);
  const back = await fetch(callback, { headers: { cookie: stateCookie }, redirect: 'manual' });
  const session = back.headers
    .getSetCookie()
    .find((c) => c.startsWith('giftdrop_claim='))
    ?.split(';')[0];
  if (!session) throw new Error(`the claim page refused the login (HTTP ${back.status})`);
  const page = await (await fetch(`${base}/claim`, { headers: { cookie: session } })).text();
  const links = [...page.matchAll(/<a class="btn redeem" href="([^"]+)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
  for (const link of links) {
    const res = await fetch(link, { method: 'POST' });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`the shop's redeem page answered HTTP ${res.status}`);
  }
  return links.length;
}
