/**
 * The operator pages' one door to the bot (browser side, an ES module served as
 * `/dashboard/client.js` and `/overlay/client.js`): the one place that keeps the dashboard token,
 * the one authorised fetch, and the one event-stream reader (issue 46, "no ambient credential").
 *
 * Why no cookie: a cookie set by 127.0.0.1:<port> is sent to EVERY port of 127.0.0.1 (cookies are
 * not separated by port; SameSite does not help, it is the same site), so any other local service
 * the streamer's browser visits would receive it. The token instead lives in sessionStorage,
 * which is scoped to the origin (scheme, host AND port) and to the tab: a page on another port
 * cannot read it, and nothing sends it by itself; every API call carries it explicitly as
 * `Authorization: Bearer <token>`, and event streams are read with `fetch()` (EventSource cannot
 * send a header). sessionStorage rather than localStorage: the token leaves with the tab, so a
 * service that later listens on the same port in another browser session finds nothing.
 *
 * Contract (exports):
 * - `takeTokenFromAddress()`: a token in the address, `#token=...` (the fragment never leaves the
 *   browser; the console prints the dashboard URL with it) or the legacy `?token=...`, is moved into
 *   storage and stripped from the address at once (history.replaceState); true when one was found.
 * - `hasToken()`, `signIn(token)`, `signOut()`: the stored token.
 * - `authFetch(path, init)`: fetch with the token as `Authorization: Bearer`, never cookies
 *   (`credentials: 'omit'`), never cached; a 401 forgets the token and dispatches
 *   `giftdrop:signed-out` on window (the page shows its sign-in form) before resolving.
 * - `readEventStream(path, onEvent, { fetcher, retryMs, signal })`: follows a `text/event-stream`
 *   with `fetcher` (default plain fetch; the dashboard passes authFetch), calling
 *   `onEvent(name, data)` per event, and reconnects after the stream ends or fails (the server's
 *   `retry:` or `retryMs`, 3 s by default); a 401 stops it. Returns `{ close() }`.
 * No page logic here; nothing runs on import.
 */

export const OPERATOR_CLIENT_JS = `
const KEY = 'giftdrop.dashboardToken';

function store() {
  try { return window.sessionStorage; } catch { return undefined; }
}

export function hasToken() {
  return !!(store() && store().getItem(KEY));
}

export function signIn(token) {
  const t = String(token || '').trim();
  if (t && store()) store().setItem(KEY, t);
  return !!t;
}

export function signOut() {
  if (store()) store().removeItem(KEY);
}

export function takeTokenFromAddress() {
  const hash = new URLSearchParams(location.hash.replace(/^#/, ''));
  const query = new URLSearchParams(location.search);
  const token = hash.get('token') || query.get('token');
  if (!hash.has('token') && !query.has('token')) return false;
  hash.delete('token');
  query.delete('token');
  const q = query.toString();
  const h = hash.toString();
  history.replaceState(null, '', location.pathname + (q ? '?' + q : '') + (h ? '#' + h : ''));
  return signIn(token);
}

export async function authFetch(path, init) {
  const headers = new Headers((init && init.headers) || {});
  const token = store() ? store().getItem(KEY) : null;
  if (token) headers.set('authorization', 'Bearer ' + token);
  const res = await fetch(path, Object.assign({}, init, { headers, credentials: 'omit', cache: 'no-store' }));
  if (res.status === 401) {
    signOut();
    window.dispatchEvent(new CustomEvent('giftdrop:signed-out', { detail: { hadToken: !!token } }));
  }
  return res;
}

export function readEventStream(path, onEvent, options) {
  const o = options || {};
  const fetcher = o.fetcher || ((p, init) => fetch(p, Object.assign({ credentials: 'omit', cache: 'no-store' }, init)));
  let retry = o.retryMs || 3000;
  let closed = false;
  let controller;
  const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  async function follow() {
    controller = new AbortController();
    const res = await fetcher(path, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    if (res.status === 401) { closed = true; return; }
    if (!res.ok || !res.body) throw new Error('event stream: HTTP ' + res.status);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let name = '';
    let data = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let nl;
      while ((nl = buffer.indexOf('\\n')) >= 0) {
        const line = buffer.slice(0, nl).replace(/\\r$/, '');
        buffer = buffer.slice(nl + 1);
        if (line === '') {
          if (data.length) onEvent(name || 'message', data.join('\\n'));
          name = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') name = val;
        else if (field === 'data') data.push(val);
        else if (field === 'retry' && /^\\d+$/.test(val)) retry = Number(val);
      }
    }
  }
  (async () => {
    while (!closed) {
      try { await follow(); } catch { /* reconnect below */ }
      if (!closed) await wait(retry);
    }
  })();
  if (o.signal) o.signal.addEventListener('abort', () => { closed = true; if (controller) controller.abort(); });
  return { close() { closed = true; if (controller) controller.abort(); } };
}
`;
