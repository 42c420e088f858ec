/**
 * The setup page's script, run in the streamer's browser (bundled by setup-page.ts). It signs in
 * as the operator pages do (COMMON "Operator auth"): the token from the URL fragment (`#token=...`,
 * which never leaves the browser) or from sessionStorage, sent as `Authorization: Bearer` on every
 * call; without one, a sign-in form naming the token file. It renders the rows of
 * `GET /setup/api/state` (each: ok or what to fix, and its form), posts each row's form as JSON,
 * polls while a Twitch login waits for the user, and offers "Go live" (sandbox) or "Apply" (live).
 * Every text from the server is set through textContent.
 */

/** The few browser APIs used here (the project's TypeScript has no DOM library). */
interface Elem {
  id: string;
  textContent: string | null;
  disabled: boolean;
  value: string;
  dataset: Record<string, string | undefined>;
  setAttribute(name: string, value: string): void;
  append(...children: Elem[]): void;
  prepend(...children: Elem[]): void;
  replaceChildren(...children: Elem[]): void;
  addEventListener(type: string, fn: (e: { preventDefault(): void }) => void): void;
  focus(): void;
}
declare const document: {
  getElementById(id: string): Elem | null;
  createElement(tag: string): Elem;
  body: Elem;
  activeElement: Elem | null;
};
declare const sessionStorage: {
  getItem(k: string): string | null;
  setItem(k: string, v: string): void;
  removeItem(k: string): void;
};
declare const history: { replaceState(data: null, unused: string, url: string): void };
declare const location: { hash: string; pathname: string };
declare const window: { setTimeout(fn: () => void, ms: number): number; clearTimeout(id: number | undefined): void };

interface Row {
  id: string;
  title: string;
  status: string;
  detail: string;
  fromEnv?: boolean;
  value?: string;
  pending?: { userCode: string; verificationUri: string; expiresAt: number };
  scopes?: { scope: string; words: string }[];
  group?: 'go-live' | 'more';
}
interface State {
  mode: 'sandbox' | 'live';
  rows: Row[];
  ready: boolean;
  missing: string[];
  changed: boolean;
  problems: string[];
}

/** The same key as the operator pages (src/web/operator/pages/client.ts): one sign-in for both. */
const KEY = 'giftdrop.dashboardToken';
const root = document.getElementById('setup')!;
const tokenFile = document.body.dataset['tokenFile'] ?? 'DATA_DIR/dashboard.token';

function takeToken(): string | undefined {
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem(KEY, decodeURIComponent(m[1]!));
    history.replaceState(null, '', location.pathname);
  }
  return sessionStorage.getItem(KEY) ?? undefined;
}

let token = takeToken();
let timer: number | undefined;
/** The row whose form was sent last (its fields are cleared once it is saved). */
let answered: string | undefined;
let goingLive = false;

async function api(
  path: string,
  body?: unknown,
  as: string | undefined = token,
): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`/setup/api/${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${as ?? ''}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = { error: text };
  }
  return { status: res.status, json };
}

function el(tag: string, attrs: Record<string, string> = {}, text?: string): Elem {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function signIn(message?: string): void {
  root.replaceChildren();
  const form = el('form', { id: 'signin' });
  form.append(
    el('p', {}, message ?? `Sign in with the dashboard token (in ${tokenFile}), or open the link the bot printed.`),
    el('input', { id: 'signin-token', type: 'password', autocomplete: 'off', 'aria-label': 'dashboard token' }),
    el('button', { type: 'submit' }, 'Sign in'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    token = document.getElementById('signin-token')!.value.trim();
    sessionStorage.setItem(KEY, token);
    void refresh();
  });
  root.append(form);
}

const FORMS: Record<
  string,
  { fields: { name: string; label: string; secret?: boolean }[]; action: string; button: string }
> = {
  fourthwall: {
    fields: [
      { name: 'username', label: 'API username' },
      { name: 'password', label: 'API password', secret: true },
    ],
    action: 'fourthwall',
    button: 'Check and save',
  },
  secret: { fields: [{ name: 'secret', label: 'Webhook secret', secret: true }], action: 'secret', button: 'Save' },
  'client-id': { fields: [{ name: 'clientId', label: 'Client ID' }], action: 'client-id', button: 'Check and save' },
  channel: { fields: [{ name: 'channel', label: 'Channel login' }], action: 'channel', button: 'Save' },
  'public-url': {
    fields: [{ name: 'url', label: 'https:// address' }],
    action: 'public-url',
    button: 'Check and save',
  },
};

function rowView(row: Row): Elem {
  const section = el('section', { id: `row-${row.id}`, 'data-status': row.status, class: `row ${row.status}` });
  const badge =
    {
      ok: 'ok',
      todo: 'to do',
      error: 'fix',
      pending: 'waiting',
      off: 'off',
      optional: 'optional',
      checking: 'checked at start',
    }[row.status] ?? row.status;
  section.append(el('h2', {}, row.title), el('span', { class: 'badge' }, badge));
  if (row.value) section.append(el('p', { class: 'value' }, row.value));
  section.append(el('p', { class: 'detail', id: `detail-${row.id}` }, row.detail));
  if (row.fromEnv) {
    section.append(el('p', { class: 'note' }, 'Set in .env or the environment: that value wins over this page.'));
    return section;
  }
  if (row.scopes?.length) {
    const list = el('ul', { class: 'scopes' });
    for (const s of row.scopes) list.append(el('li', {}, `${s.words} (${s.scope})`));
    section.append(el('p', { class: 'note' }, 'It asks Twitch to let giftdrop:'), list);
  }
  const form = FORMS[row.id];
  if (form) {
    const f = el('form', { id: `form-${row.id}` });
    for (const field of form.fields) {
      const input = el('input', {
        id: `${row.id}-${field.name}`,
        name: field.name,
        type: field.secret ? 'password' : 'text',
        autocomplete: 'off',
        'aria-label': field.label,
        placeholder: field.label,
      });
      f.append(input);
    }
    const button = el('button', { type: 'submit', id: `${row.id}-submit` }, form.button);
    f.append(button);
    f.addEventListener('submit', (e) => {
      e.preventDefault();
      const body: Record<string, string> = {};
      for (const field of form.fields) body[field.name] = document.getElementById(`${row.id}-${field.name}`)!.value;
      button.disabled = true;
      button.textContent = 'Checking...';
      void api(form.action, body).then(() => {
        answered = row.id;
        return refresh();
      });
    });
    section.append(f);
  }
  if (row.id === 'bot' || row.id === 'broadcaster') {
    if (row.pending) {
      const code = el('p', { class: 'code', id: `${row.id}-code` }, row.pending.userCode);
      const link = el(
        'a',
        { href: row.pending.verificationUri, target: '_blank', rel: 'noopener noreferrer', id: `${row.id}-open` },
        'Open Twitch to enter the code',
      );
      section.append(code, link);
    } else {
      const button = el(
        'button',
        { type: 'button', id: `${row.id}-login` },
        row.status === 'ok' ? 'Log in again' : 'Log in with Twitch',
      );
      button.addEventListener('click', () => {
        button.disabled = true;
        void api('login', { role: row.id }).then(() => refresh());
      });
      section.append(button);
    }
  }
  return section;
}

/**
 * What the streamer is typing survives a re-render (each answer and the polling while a Twitch
 * login waits rebuild the rows): the fields' values, except those of the row whose answer was just
 * saved (ok), and which field had the focus.
 */
function keepTyping(state: State): () => void {
  const typed: [string, string][] = [];
  const saved = state.rows.find((r) => r.id === answered && r.status === 'ok')?.id;
  answered = undefined;
  for (const row of state.rows) {
    const form = FORMS[row.id];
    if (!form || row.id === saved) continue;
    for (const field of form.fields) {
      const value = document.getElementById(`${row.id}-${field.name}`)?.value;
      if (value) typed.push([`${row.id}-${field.name}`, value]);
    }
  }
  const focused = document.activeElement?.id;
  return () => {
    for (const [id, value] of typed) {
      const input = document.getElementById(id);
      if (input) input.value = value;
    }
    if (focused) document.getElementById(focused)?.focus();
  };
}

function render(state: State): void {
  const restore = keepTyping(state);
  root.replaceChildren();
  const top = el(
    'p',
    { id: 'mode' },
    state.mode === 'sandbox'
      ? 'The bot is playing the sandbox demo. Fill in each row, then go live: no file to edit, no restart by hand.'
      : 'The bot is live. Change a row and apply: the bot restarts with it.',
  );
  root.append(top);
  for (const p of state.problems) root.append(el('p', { class: 'problem banner' }, p));
  // What going live needs, then "Go live", then what the bot can do besides (optional, any time later).
  const more = state.rows.filter((r) => r.group === 'more');
  for (const row of state.rows) if (row.group !== 'more') root.append(rowView(row));
  const go = el(
    'button',
    { type: 'button', id: 'apply' },
    state.mode === 'sandbox' ? 'Go live' : 'Apply and restart the bot',
  );
  go.disabled = !state.ready || (state.mode === 'live' && !state.changed) || goingLive;
  const why = el(
    'p',
    { id: 'apply-note', class: 'note' },
    state.ready
      ? state.mode === 'live' && !state.changed
        ? 'Nothing changed.'
        : ''
      : `Still to do: ${state.missing.join(', ')}.`,
  );
  go.addEventListener('click', () => {
    go.disabled = true;
    void api('apply', {}).then(
      ({ status, json }) => {
        const r = json as { ok?: boolean; token?: string; missing?: string[] };
        if (status !== 200 || !r.ok) {
          why.textContent = `Still to do: ${(r.missing ?? []).join(', ')}.`;
          return;
        }
        const before = token;
        if (r.token) {
          token = r.token;
          sessionStorage.setItem(KEY, r.token);
        }
        goingLive = true;
        why.textContent = 'Restarting the bot with your setup...';
        awaitLive(r.token ? before : undefined);
      },
      () => {
        // The answer was lost on the way (the listener closed as the bot restarted): wait for it anyway.
        goingLive = true;
        why.textContent = 'Restarting the bot with your setup...';
        awaitLive();
      },
    );
  });
  root.append(go, why);
  if (more.length) {
    root.append(el('h2', { id: 'more', class: 'group' }, 'What the bot can do besides (optional, any time later)'));
    for (const row of more) root.append(rowView(row));
  }
  restore();
}

/**
 * After Go live / Apply: the bot restarts; poll until it answers live again. `before`: the demo's
 * token when the answer brought the live bot's: while the demo still answers (closing an open draw
 * can take seconds) it refuses the new token, and that is no reason to ask the user to sign in.
 */
function awaitLive(before?: string): void {
  const check = (): void => {
    void api('state')
      .then(async ({ status, json }) => {
        const s = json as State;
        if (status === 401 && before !== undefined && (await api('state', undefined, before)).status === 200) {
          // still the demo, stopping: ask again in a second
          window.setTimeout(check, 1000);
          return;
        }
        if (status === 401) {
          // The live bot signs in with its own token (DATA_DIR/dashboard.token), which this page never got.
          goingLive = false;
          sessionStorage.removeItem(KEY);
          token = undefined;
          return signIn(
            'The bot is live. Sign in with the dashboard link it printed, or with the token in the dashboard.token file of its data folder.',
          );
        }
        if (status === 200 && s.mode === 'live' && !s.changed) {
          goingLive = false;
          render(s);
          const done = el('p', { id: 'live', class: 'ok banner' }, 'Live! The bot runs with your setup.');
          const dash = el(
            'a',
            { href: `/dashboard#token=${encodeURIComponent(token ?? '')}`, id: 'dashboard-link' },
            'Open the dashboard',
          );
          root.prepend(done, dash);
          return;
        }
        window.setTimeout(check, 1000);
      })
      .catch(() => window.setTimeout(check, 1000));
  };
  window.setTimeout(check, 1000);
}

async function refresh(): Promise<void> {
  if (goingLive) return;
  if (!token) return signIn();
  const { status, json } = await api('state');
  if (status === 401) {
    sessionStorage.removeItem(KEY);
    token = undefined;
    return signIn('That token was not accepted.');
  }
  const state = json as State;
  render(state);
  window.clearTimeout(timer);
  if (state.rows.some((r) => r.status === 'pending')) timer = window.setTimeout(() => void refresh(), 2000);
}

void refresh();

export {};
