/**
 * The dashboard's script (browser side; bundled by ../page-scripts.ts and served as
 * `/dashboard/app.js`), typed against the API it calls (../dashboard-api.ts): a field renamed
 * there fails `npm run typecheck` here.
 *
 * Contract: every viewer- or shop-supplied string is rendered with textContent (dom.ts); every API
 * call goes through client.ts (`authFetch`/`getJson`: the token from this tab's sessionStorage as
 * `Authorization: Bearer`, no cookie); the token comes from the address (`#token=`, or the legacy
 * `?token=`, stripped at once) or from the sign-in form (#signin), which names where the token is
 * and is shown instead of the page whenever no token is kept or the bot refused it (401); "Sign
 * out" forgets it. Actions are POSTs with a JSON body to `/dashboard/api/<action>`, and the
 * engine's answer is shown in #answer; #reach says when the claim page or the whispers are off and
 * what turns each on (`state.reach`, the setup page's words). What applies comes from the API, never re-derived here:
 * the draw actions (`state.actions`: End while a draw takes entries, Cancel while a link giveaway
 * is open or in its claim window, Retry while winners wait for their links, the picker and Start
 * while no link giveaway runs), Reroll on a winner only where the engine would accept it
 * (`rerollRefusal` null), each prize's state in the claim page's words (`prize.text`), and why a
 * pick was set aside in the chat line's words (`setAside[].why`). A destructive action (Reroll,
 * Cancel) asks once: the first click turns the button into "Confirm ..." beside "Keep"; only the
 * second acts. The page polls `/dashboard/api/state` every second and the History every 5 s (and
 * whenever the draws change, before they are shown, so it never says "drawing" beside winners
 * listed). One time format across the page (`when`). Laid out for a phone beside OBS as well as a
 * desktop: at 390 px nothing overflows and the tables read as cards (the stylesheet; each cell
 * carries its column's name).
 */
import type {
  ActionAnswer,
  DashboardDraw,
  DashboardState,
  DashboardWinner,
  EntrantsAnswer,
  HistoryAnswer,
  HistoryRow,
  PrizesAnswer,
  ProductsAnswer,
  StreamAnswer,
  TranscriptAnswer,
} from '../dashboard-api.js';
import { authFetch, getJson, hasToken, SignedOut, signIn, signOut, takeTokenFromAddress } from './client.js';
import { byId, el } from './dom.js';

let selectedProduct = '';
/** The destructive action waiting for its confirming click (survives the re-renders). */
let confirming: { key: string; until: number } | null = null;
/** What the draws in memory looked like at the last render (the History reloads when it changes). */
let drawsSeen = '';

// Addresses, hashes, hex and ids (no word boundaries) go in .hex, the only text that may wrap anywhere.
const HEX = /(https?:[/][/][^ ]+|[0-9a-f]{16,}|[a-z]+_[0-9A-Za-z_-]{12,})/;
function withHex<K extends keyof HTMLElementTagNameMap>(tag: K, cls: string, text: string): HTMLElementTagNameMap[K] {
  const e = el(tag, cls);
  text.split(HEX).forEach((part, i) => part && e.append(i % 2 ? el('code', 'hex', part) : part));
  return e;
}
// One time format for the whole page: "Nov 27, 13:46:06" in the viewer's locale (never split).
const WHEN = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});
function when(t: string | number | null | undefined): string {
  return t ? WHEN.format(new Date(t)) : '';
}
function time(t: string | number | null | undefined): HTMLElement {
  return el('span', 'when', when(t));
}
/** A draw's id: kept on one line (shortened with … when it does not fit), never broken mid-token. */
function drawId(id: string): HTMLElement {
  const e = el('code', 'id', id);
  e.title = id;
  return e;
}
/** A table cell with its column's name (shown beside the value when the table reads as cards). */
function cell(label: string, ...content: (Node | string | number)[]): HTMLTableCellElement {
  const td = el('td');
  td.dataset['label'] = label;
  td.append(...content.map((c) => (typeof c === 'number' ? String(c) : c)));
  return td;
}

function showAnswer(ok: boolean, message: string): void {
  const a = byId('answer');
  a.hidden = false;
  a.className = ok ? '' : 'bad';
  a.textContent = message;
}

function failed(err: unknown): void {
  if (err instanceof SignedOut) return; // the sign-in form is showing
  showAnswer(false, err instanceof Error ? err.message : String(err));
}

async function act(action: string, body: Record<string, unknown> = {}): Promise<void> {
  try {
    const res = await authFetch(`/dashboard/api/${action}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status === 401) return;
    const out = (await res.json()) as ActionAnswer;
    showAnswer(out.ok, out.message || (out.ok ? 'Done.' : 'Refused.'));
  } catch (err) {
    failed(err);
  }
  void refresh();
  void loadHistory();
}

function copyButton(text: string): HTMLButtonElement {
  const b = el('button', 'small ghost', 'Copy');
  b.type = 'button';
  b.addEventListener('click', () => {
    navigator.clipboard.writeText(text).then(
      () => (b.textContent = 'Copied'),
      () => (b.textContent = 'Select + copy'),
    );
  });
  return b;
}

interface KeepButton extends HTMLButtonElement {
  refresh(): void;
}

/**
 * A destructive action's button: the first click asks ("Confirm ..." beside "Keep"), the second
 * acts. The question stays through the page's re-renders for 10 s (keyed by `key`).
 */
function confirmed(button: HTMLButtonElement, key: string, question: string, run: () => void): KeepButton {
  const asking = () => !!confirming && confirming.key === key && confirming.until > Date.now();
  const label = button.textContent ?? '';
  const keep = el('button', 'small ghost', 'Keep') as KeepButton;
  keep.type = 'button';
  keep.dataset['keep'] = key;
  const show = () => {
    const on = asking();
    button.textContent = on ? question : label;
    button.classList.toggle('confirm', on);
    keep.hidden = !on;
  };
  button.addEventListener('click', () => {
    if (!asking()) {
      confirming = { key, until: Date.now() + 10_000 };
      show();
      return;
    }
    confirming = null;
    button.disabled = true;
    show();
    run();
  });
  keep.addEventListener('click', () => {
    confirming = null;
    show();
  });
  keep.refresh = show;
  show();
  return keep;
}

function winnerRow(d: DashboardDraw, w: DashboardWinner): HTMLElement {
  const row = el('div', 'winner');
  row.append(el('strong', '', w.displayName), el('span', 'muted', `@${w.login}`));
  if (w.claimed === false) row.append(el('span', 'muted', 'not claimed yet'));
  if (w.claimed === true) row.append(el('span', '', 'claimed ✔'));
  if (w.accountCheck === 'checked') row.append(el('span', 'checked', 'checked with Twitch ✔'));
  if (w.accountCheck === 'unchecked') row.append(el('span', 'muted', 'could not be checked with Twitch (let in)'));
  // The prize's state in the claim page's words (the API's prize: delivery/state.ts prizeState).
  if (w.prize) row.append(el('span', w.prize.waiting ? 'muted prize-state' : 'checked prize-state', w.prize.text));
  if (w.note) row.append(el('span', 'muted', w.note));
  if (w.link) row.append(el('span', 'link', w.link), copyButton(w.link));
  // Offered only where the engine would accept it (giveaway/reroll.ts winnerRefusal).
  if (w.rerollRefusal === null) {
    const rr = el('button', 'small ghost', 'Reroll');
    rr.type = 'button';
    rr.dataset['reroll'] = w.login;
    const keep = confirmed(
      rr,
      `reroll:${d.id}:${w.login}`,
      `Confirm: replace @${w.login}`,
      () => void act('reroll', { login: w.login, drawId: d.id }),
    );
    row.append(rr, keep);
  }
  return row;
}

function setAsideList(d: DashboardDraw): HTMLElement {
  const box = el('details', 'set-aside');
  const n = d.setAside.length;
  box.append(el('summary', 'muted', `${n} pick${n === 1 ? '' : 's'} set aside by the account rules`));
  const ul = el('ul', 'log');
  for (const a of d.setAside) {
    // When Twitch gave the answer: one looked up while entries were open predates the freeze (said so).
    const answered = a.beforeFreeze
      ? `Twitch answered at ${when(a.at)}, while entries were open; the rule was applied to that answer when the list was frozen at ${when(d.frozenAt)}`
      : `Twitch answered at ${when(a.at)}`;
    ul.append(el('li', '', `@${a.login}: ${a.why} (${answered})`));
  }
  box.append(ul);
  return box;
}

function drawBlock(d: DashboardDraw, now: number): HTMLElement {
  const box = el('div', 'draw');
  box.dataset['id'] = d.id;
  box.append(el('div', 'title', d.prize + (d.gifts > 1 ? ` × ${d.gifts}` : '')));
  const left = d.phase === 'open' ? `${Math.max(0, Math.ceil((Date.parse(d.closesAt) - now) / 1000))} s left` : '';
  const entrants = `${d.entrants} ${d.entrants === 1 ? 'entrant' : 'entrants'}`;
  const status = d.status === 'failed' ? 'failed' : d.phase;
  const facts = el('div', 'muted facts', [d.kind, status, entrants, left].filter(Boolean).join(' · '));
  if (d.claimDeadline && d.phase === 'claim') facts.append(' · claim until ', time(d.claimDeadline));
  const idLine = el('div', 'muted');
  idLine.append(drawId(d.id));
  box.append(facts, idLine);
  for (const w of d.winners) box.append(winnerRow(d, w));
  if (d.winners.length === 0 && d.status === 'failed') box.append(el('div', 'nobody', 'Nobody won this draw.'));
  if (d.setAside.length) box.append(setAsideList(d));
  if (d.failure) box.append(el('div', 'muted', `failed: ${d.failure}`));
  return box;
}

const cancelKeep = confirmed(byId<HTMLButtonElement>('cancel'), 'cancel', 'Confirm: cancel the link giveaway', () => {
  void act('cancel').then(() => (byId<HTMLButtonElement>('cancel').disabled = false));
});
byId('cancel').after(cancelKeep);

/** What the last #reach shows (it is rebuilt only when that changes). */
let reachShown = '';

/** The claim page or the whispers when off: what turns each on (the setup page's words, from the API). */
function renderReach(reach: NonNullable<DashboardState['reach']>): void {
  const off = reach.filter((r) => r.status === 'off');
  const key = JSON.stringify(off);
  if (key === reachShown) return;
  reachShown = key;
  const box = byId('reach');
  box.hidden = off.length === 0;
  // One line each (the streamer reads it on a phone beside OBS too); what turns it on, one click away.
  box.replaceChildren(
    ...off.map((r) => {
      const d = el('details');
      d.dataset['reach'] = r.id;
      d.append(el('summary', '', `${r.title} is off: what turns it on`), el('p', '', r.detail));
      return d;
    }),
  );
  if (off.length) {
    const setup = el('a', '', 'Open the setup page');
    setup.href = '/setup';
    const p = el('p');
    p.append(setup);
    box.append(p);
  }
}

function renderState(s: DashboardState): void {
  const transport = s.chatTransport === 'eventsub' ? ' over EventSub' : s.chatTransport === 'irc' ? ' over IRC' : '';
  byId('status').textContent =
    `${s.mode} · chat ${s.chat}${transport}${s.chatReason ? ` (${s.chatReason})` : ''}` +
    (s.eventsub ? ` · EventSub ${s.eventsub}${s.eventsubReason ? ` (${s.eventsubReason})` : ''}` : '') +
    (s.channelPoints
      ? ` · channel points: ${s.channelPoints.entered} entered, ${s.channelPoints.refunded} refunded`
      : '') +
    ` · #${s.channel}`;
  const problems = s.problems ?? [];
  byId('problems').hidden = problems.length === 0;
  byId('problems').textContent = problems.join(' ');
  renderReach(s.reach ?? []);
  const open = s.draws.filter((d) => d.active);
  const recent = s.draws.filter((d) => !d.active && (d.winners.length || d.status === 'failed'));
  byId('open').replaceChildren(
    ...(open.length ? open.map((d) => drawBlock(d, s.now)) : [el('p', 'muted', 'No draw is open.')]),
  );
  const can = s.actions;
  const end = byId('end');
  end.hidden = !can.end;
  end.textContent = can.end > 1 ? `End all ${can.end} open draws now and draw` : 'End now and draw';
  byId('cancel').hidden = !can.cancel;
  if (!can.cancel && confirming?.key === 'cancel') confirming = null;
  cancelKeep.refresh();
  if (!can.cancel) cancelKeep.hidden = true;
  byId('retry').hidden = !can.retry;
  byId('recent').replaceChildren(
    ...(recent.length ? recent.map((d) => drawBlock(d, s.now)) : [el('p', 'muted', 'No winners yet.')]),
  );
  // One link giveaway at a time (the engine refuses a second): no picker while one runs.
  byId('products').hidden = !can.start;
  byId('start-form').hidden = !can.start;
  byId('start-busy').hidden = can.start;
  byId('start-busy').textContent = can.running
    ? `A link giveaway is running (${can.running}): end or cancel it to start another.`
    : '';
  byId('entrants-box').hidden = open.length === 0;
  const sel = byId<HTMLSelectElement>('entrant-draw');
  const want = open.map((d) => d.id).join(',');
  if (sel.dataset['ids'] !== want) {
    const keep = sel.value;
    sel.replaceChildren(
      ...open.map((d) => {
        const o = el(
          'option',
          '',
          `${d.prize} (${d.kind === 'link-giveaway' ? 'link giveaway' : 'gift draw'}, ${when(d.openedAt)})`,
        );
        o.value = d.id;
        return o;
      }),
    );
    sel.dataset['ids'] = want;
    if (open.some((d) => d.id === keep)) sel.value = keep;
  }
}

async function refresh(): Promise<void> {
  try {
    const s = await getJson<DashboardState>('/dashboard/api/state');
    // A draw changed (opened, drawn, rerolled...): the History is loaded BEFORE the lists show it,
    // so it never says "drawing" beside winners already listed.
    const seen = s.draws
      .map((d) => `${d.id}:${d.status}:${d.phase}:${d.winners.map((w) => w.login).join('+')}`)
      .join('|');
    if (seen !== drawsSeen) {
      drawsSeen = seen;
      await loadHistory();
    }
    renderState(s);
    await loadEntrants();
    await loadPrizes();
    const t = await getJson<TranscriptAnswer>('/dashboard/api/transcript');
    byId('transcript').replaceChildren(
      ...t.bot
        .slice()
        .reverse()
        .map((l) => line(l.at, l.text)),
    );
    byId('winner-chat').replaceChildren(...t.winners.map((l) => line(l.at, `[${l.prize}] ${l.name}: ${l.text}`)));
  } catch (err) {
    failed(err);
  }
}

function line(at: number | string, text: string): HTMLLIElement {
  const li = el('li');
  li.append(time(at), ' ', withHex('span', '', text));
  return li;
}

async function loadPrizes(): Promise<void> {
  const p = await getJson<PrizesAnswer>('/dashboard/api/prizes');
  byId('prize-count').textContent = p.prizes.length ? `(${p.prizes.length})` : '(none)';
  byId<HTMLTableElement>('prizes').tBodies[0]!.replaceChildren(
    ...p.prizes.map((x) => {
      const tr = el('tr');
      tr.dataset['draw'] = x.drawId;
      tr.dataset['user'] = x.userId;
      const buttons: Node[] = [];
      if (x.link) buttons.push(copyButton(x.link));
      if (!x.delivery.remindedAt) {
        const b = el('button', 'small ghost', 'Remind');
        b.type = 'button';
        b.addEventListener('click', () => void act('remind', { drawId: x.drawId, userId: x.userId }));
        buttons.push(b);
      } else buttons.push(el('span', 'muted', `reminded (${x.delivery.remindedBy ?? '?'})`));
      const state = el('td', 'state', x.label + (x.delivery.whisperProblem ? ' (whisper refused)' : ''));
      state.dataset['label'] = 'state';
      tr.append(
        cell('winner', `${x.displayName} @${x.login}${x.replaced ? ' (replaced: keeps the link they saw)' : ''}`),
        cell('prize', x.product),
        state,
        cell('since', time(x.delivery.announcedAt)),
        cell('', ...buttons),
      );
      return tr;
    }),
  );
}

async function loadEntrants(): Promise<void> {
  const id = byId<HTMLSelectElement>('entrant-draw').value;
  const body = byId<HTMLTableElement>('entrants').tBodies[0]!;
  if (!id) {
    body.replaceChildren();
    byId('entrant-count').textContent = '';
    return;
  }
  const q = byId<HTMLInputElement>('entrant-search').value;
  const r = await getJson<EntrantsAnswer>(
    `/dashboard/api/entrants?draw=${encodeURIComponent(id)}&q=${encodeURIComponent(q)}`,
  );
  // With account rules, 'eligible' is the chat rules' verdict: Twitch checks the rest at the close.
  const a = r.accountRules;
  byId('entrant-count').textContent =
    `${r.total} entered, ${r.eligible} eligible${a ? ' by the chat rules' : ''}${q ? `, ${r.matched} match` : ''}` +
    (a ? `; checked ${a.checked}: ${a.rules}` : '');
  const verdict = a ? 'eligible by the chat rules' : 'eligible';
  byId('entrant-verdict').textContent = verdict;
  body.replaceChildren(
    ...r.entrants.map((e) => {
      const tr = el('tr');
      tr.append(
        cell('name', e.displayName),
        cell('login', e.login),
        cell('tickets', e.weight),
        cell(verdict, e.eligible ? 'yes' : `no: ${e.why ?? ''}`),
      );
      return tr;
    }),
  );
}

function historyQuery(): string {
  return `?q=${encodeURIComponent(byId<HTMLInputElement>('history-search').value)}&status=${encodeURIComponent(byId<HTMLSelectElement>('history-status').value)}`;
}

function historyRow(d: HistoryRow): HTMLTableRowElement {
  const tr = el('tr');
  tr.dataset['id'] = d.id;
  const winners = d.winners.map((w) => w.displayName).join(', ') || (d.status === 'failed' ? 'nobody' : '');
  const status = el('span', `status ${d.status}`, d.status);
  tr.append(
    cell('closed', time(d.closedAt)),
    cell('kind', d.kind),
    cell('prize', d.offer.name),
    cell('status', status, ...(d.failure ? [el('span', 'muted failure', ` (${d.failure.reason})`)] : [])),
    cell('entrants', d.entrants),
    cell('winners', winners),
    cell('verify', d.verify),
  );
  return tr;
}

async function loadHistory(): Promise<void> {
  try {
    const q = historyQuery();
    byId<HTMLAnchorElement>('csv').href = `/dashboard/api/history.csv${q}`;
    byId<HTMLAnchorElement>('json').href = `/dashboard/api/history.json${q}`;
    const h = await getJson<HistoryAnswer>(`/dashboard/api/history${q}`);
    byId<HTMLTableElement>('history').tBodies[0]!.replaceChildren(...h.draws.map(historyRow));
  } catch (err) {
    failed(err);
  }
}

async function loadProducts(): Promise<void> {
  try {
    const p = await getJson<ProductsAnswer>('/dashboard/api/products');
    byId('products').replaceChildren(
      ...p.products.map((x) => {
        const b = el('button', `product${x.stock === 0 ? ' out' : ''}`);
        b.type = 'button';
        b.dataset['id'] = x.id;
        if (x.image) {
          const img = el('img');
          img.alt = '';
          img.src = x.image;
          b.append(img);
        }
        b.append(
          el('div', 'name', x.name),
          el(
            'div',
            'muted',
            x.stock === 'unlimited' ? 'unlimited' : x.stock === null ? 'stock ?' : `${x.stock} in stock`,
          ),
        );
        b.addEventListener('click', () => {
          selectedProduct = x.id;
          for (const o of Array.from(byId('products').children)) o.classList.toggle('selected', o === b);
        });
        return b;
      }),
    );
  } catch (err) {
    if (!(err instanceof SignedOut)) showAnswer(false, `Products: ${err instanceof Error ? err.message : String(err)}`);
  }
}

// The stream state Fourthwall reports, and the one button that changes it (both while unknown).
const STREAM_WORDS: Record<string, string> = { ONLINE: 'live', OFFLINE: 'offline' };
async function loadStreaming(): Promise<void> {
  let status = 'UNKNOWN';
  try {
    status = (await getJson<StreamAnswer>('/dashboard/api/stream')).streaming.status;
  } catch {
    /* shown as unknown */
  }
  byId('streaming').textContent = `stream: ${STREAM_WORDS[status] ?? 'unknown'}`;
  byId('go-live').hidden = status === 'ONLINE';
  byId('go-offline').hidden = status === 'OFFLINE';
}

byId('start-form').addEventListener('submit', (e) => {
  e.preventDefault();
  if (!selectedProduct) {
    showAnswer(false, 'Pick a product first.');
    return;
  }
  void act('start', {
    product: selectedProduct,
    winners: Number(byId<HTMLInputElement>('start-winners').value),
    seconds: Number(byId<HTMLInputElement>('start-seconds').value),
  });
});
byId('end').addEventListener('click', () => void act('end'));
byId('retry').addEventListener('click', () => void act('retry'));
byId('go-live').addEventListener('click', () => void act('stream', { action: 'live' }).then(loadStreaming));
byId('go-offline').addEventListener('click', () => void act('stream', { action: 'offline' }).then(loadStreaming));
byId('logout').addEventListener('click', () => {
  signOut();
  showSignIn('');
});
// A download is an API call too (it needs the token header): fetched, then saved from a blob.
for (const id of ['csv', 'json'] as const) {
  byId<HTMLAnchorElement>(id).addEventListener('click', (e) => {
    e.preventDefault();
    void (async () => {
      const res = await authFetch(byId<HTMLAnchorElement>(id).getAttribute('href') ?? '');
      if (!res.ok) {
        showAnswer(false, `Download failed (HTTP ${res.status}).`);
        return;
      }
      const url = URL.createObjectURL(await res.blob());
      const a = el('a');
      a.href = url;
      a.download = `giftdrop-history.${id}`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    })();
  });
}
byId('entrant-search').addEventListener('input', () => void loadEntrants().catch(failed));
byId('entrant-draw').addEventListener('change', () => void loadEntrants().catch(failed));
byId('history-search').addEventListener('input', () => void loadHistory());
byId('history-status').addEventListener('change', () => void loadHistory());

// Signed in: the page (and its polling); signed out: the form naming where the token is.
let timers: ReturnType<typeof setInterval>[] = [];
function showSignIn(problem: string): void {
  timers.forEach(clearInterval);
  timers = [];
  byId('app').hidden = true;
  byId('signin').hidden = false;
  byId('signin-problem').hidden = !problem;
  byId('signin-problem').textContent = problem;
  byId('signin-token').focus();
}
function showApp(): void {
  byId('signin').hidden = true;
  byId('app').hidden = false;
  void refresh();
  void loadHistory();
  void loadProducts();
  void loadStreaming();
  timers = [setInterval(() => void refresh(), 1000), setInterval(() => void loadHistory(), 5000)];
}
window.addEventListener('giftdrop:signed-out', (e) => {
  const hadToken = (e as CustomEvent<{ hadToken: boolean }>).detail.hadToken;
  if (!byId('app').hidden || hadToken) showSignIn('The bot refused that token: sign in with the one it uses now.');
});
byId('signin-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const input = byId<HTMLInputElement>('signin-token');
  if (!signIn(input.value)) return;
  input.value = '';
  void authFetch('/dashboard/api/state').then((res) => {
    if (res.ok) showApp();
  });
});

takeTokenFromAddress();
if (hasToken()) showApp();
else showSignIn('');
