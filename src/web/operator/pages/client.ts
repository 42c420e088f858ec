/**
 * The operator pages' one door to the bot (browser side; bundled alone as an ES module and served
 * as `/dashboard/client.js` and `/overlay/client.js`, which the page scripts import): the one place
 * that keeps the dashboard token, the one authorised fetch, and the one event-stream reader
 * (issue 46, "no ambient credential").
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
 * - `getJson<T>(path)`: authFetch's JSON body, typed by the caller with the API's own type.
 * - `readEventStream(path, onEvent, { fetcher, retryMs, signal })`: follows a `text/event-stream`
 *   with `fetcher` (default plain fetch; the dashboard passes authFetch), calling
 *   `onEvent(name, data)` per event, and reconnects after the stream ends or fails (the server's
 *   `retry:` or `retryMs`, 3 s by default); a 401 stops it. Returns `{ close() }`.
 * No page logic here; nothing runs on import.
 */

const KEY = 'giftdrop.dashboardToken';

function store(): Storage | undefined {
  try {
    return window.sessionStorage;
  } catch {
    return undefined;
  }
}

export function hasToken(): boolean {
  return !!store()?.getItem(KEY);
}

export function signIn(token: string): boolean {
  const t = String(token || '').trim();
  if (t) store()?.setItem(KEY, t);
  return !!t;
}

export function signOut(): void {
  store()?.removeItem(KEY);
}

export function takeTokenFromAddress(): boolean {
  const hash = new URLSearchParams(location.hash.replace(/^#/, ''));
  const query = new URLSearchParams(location.search);
  if (!hash.has('token') && !query.has('token')) return false;
  const token = hash.get('token') || query.get('token') || '';
  hash.delete('token');
  query.delete('token');
  const q = query.toString();
  const h = hash.toString();
  history.replaceState(null, '', location.pathname + (q ? `?${q}` : '') + (h ? `#${h}` : ''));
  return signIn(token);
}

export async function authFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers ?? {});
  const token = store()?.getItem(KEY) ?? null;
  if (token) headers.set('authorization', `Bearer ${token}`);
  const res = await fetch(path, { ...init, headers, credentials: 'omit', cache: 'no-store' });
  if (res.status === 401) {
    signOut();
    window.dispatchEvent(new CustomEvent('giftdrop:signed-out', { detail: { hadToken: !!token } }));
  }
  return res;
}

/** Thrown by getJson for a 401: the page has shown its sign-in form. */
export class SignedOut extends Error {
  constructor() {
    super('signed out');
  }
}

/** The JSON answer of a GET, as the API's type `T` says (`SignedOut` on a 401). */
export async function getJson<T>(path: string): Promise<T> {
  const res = await authFetch(path);
  if (res.status === 401) throw new SignedOut();
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

export interface EventStreamOptions {
  fetcher?: (path: string, init: RequestInit) => Promise<Response>;
  retryMs?: number;
  signal?: AbortSignal;
}

export function readEventStream(
  path: string,
  onEvent: (name: string, data: string) => void,
  options: EventStreamOptions = {},
): { close(): void } {
  const fetcher =
    options.fetcher ??
    ((p: string, init: RequestInit) => fetch(p, { credentials: 'omit', cache: 'no-store', ...init }));
  let retry = options.retryMs ?? 3000;
  let closed = false;
  let controller: AbortController | undefined;
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  async function follow(): Promise<void> {
    controller = new AbortController();
    const res = await fetcher(path, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    if (res.status === 401) {
      closed = true;
      return;
    }
    if (!res.ok || !res.body) throw new Error(`event stream: HTTP ${res.status}`);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let name = '';
    let data: string[] = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, '');
        buffer = buffer.slice(nl + 1);
        if (line === '') {
          if (data.length) onEvent(name || 'message', data.join('\n'));
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
        else if (field === 'retry' && /^\d+$/.test(val)) retry = Number(val);
      }
    }
  }
  void (async () => {
    while (!closed) {
      try {
        await follow();
      } catch {
        /* reconnect below */
      }
      if (!closed) await wait(retry);
    }
  })();
  const close = () => {
    closed = true;
    controller?.abort();
  };
  options.signal?.addEventListener('abort', close);
  return { close };
}
