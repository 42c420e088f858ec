/**
 * The dashboard page (`GET /dashboard`), its stylesheet and its script, as strings served by the
 * bot (no build step, no CDN).
 *
 * Contract: every viewer- or shop-supplied string is rendered with textContent; every API call
 * goes through `authFetch` (operator-client.ts: the token from this tab's sessionStorage as
 * `Authorization: Bearer`, no cookie); the token comes from the address (`#token=`, or the legacy
 * `?token=`, stripped at once) or from the sign-in form (#signin), which names where the token is
 * (`dashboardHtml(where)`: the token file's path or GIFTDROP_DASHBOARD_TOKEN) and is shown instead
 * of the page whenever no token is kept or the bot refused it (401); "Sign out" forgets it.
 * Actions are POSTs with a JSON body to `/dashboard/api/<action>` and the engine's answer is shown
 * in #answer; with account rules in force the entrant
 * count and column say the eligible verdict is the chat rules' and name the rules Twitch checks
 * at the close; the page polls `/dashboard/api/state` every second and the lists on demand. No
 * inline script or style (the CSP forbids them). Only the actions that apply are shown
 * (`applicable`, mirroring the engine's own refusals): "End now and draw" while a draw takes
 * entries, "Cancel link giveaway" while a link giveaway is open or in its claim window, "Retry
 * links" while a link giveaway or gift purchase failed with winners still without links,
 * "Reroll" on a winner only where the engine says it would accept it (the state's
 * `rerollRefusal`, giveaway/reroll.ts: never a redeemed prize, never one the shop closed
 * (cancelled, changed to a promotion or a gift card: "prize no longer redeemable" is shown
 * instead), never twice for one winner, never a gift draw settled at Fourthwall), the product picker and "Start giveaway" only while no link
 * giveaway runs, the one stream button that changes the stream state Fourthwall reports, and the
 * Entrants picker only while a draw is in progress. A destructive action (Reroll, Cancel) asks
 * once: the first click turns the button into "Confirm ..." beside "Keep"; only the second acts.
 * One time format across the page (`when`). The History is reloaded whenever the draws in
 * memory change, and the API tells the draws it holds as the engine has them, so it never lags
 * behind "Recent winners".
 */

import { escapeHtml } from '../../../shared/html.js';

/** The page; `tokenWhere` (a file path or a setting's name, never the token) is named by the sign-in form. */
export function dashboardHtml(tokenWhere: string): string {
  return DASHBOARD_HTML.replace('{{TOKEN_WHERE}}', escapeHtml(tokenWhere));
}

const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>giftdrop dashboard</title>
<link rel="stylesheet" href="/dashboard/app.css">
<script type="module" src="/dashboard/app.js"></script>
</head>
<body>
<section id="signin" hidden>
  <h1>giftdrop dashboard</h1>
  <p>Sign in with the dashboard token. It is in <code id="token-where">{{TOKEN_WHERE}}</code>; the link the bot prints when it starts signs in by itself.</p>
  <p id="signin-problem" class="bad" role="alert" hidden></p>
  <form id="signin-form" class="actions">
    <label>token <input id="signin-token" type="password" autocomplete="off" spellcheck="false" required></label>
    <button id="signin-button" type="submit">Sign in</button>
  </form>
  <p class="muted">The token stays in this tab only (it is sent to this bot and nowhere else) and is forgotten when you close the tab or sign out.</p>
</section>
<div id="app" hidden>
<header>
  <h1>giftdrop</h1>
  <span id="status" class="pill"></span>
  <span id="streaming" class="pill">stream: ?</span>
  <button id="go-live" type="button" hidden>Mark stream live</button>
  <button id="go-offline" type="button" hidden>Mark stream offline</button>
  <button id="logout" type="button">Sign out</button>
</header>
<div id="answer" role="status" hidden></div>
<div id="problems" role="alert" hidden></div>
<main>
<section>
  <h2>Open draws</h2>
  <div id="open"><p class="muted">No draw is open.</p></div>
  <div class="actions">
    <button id="end" type="button" hidden>End now and draw</button>
    <button id="cancel" type="button" hidden>Cancel link giveaway</button>
    <button id="retry" type="button" hidden>Retry links</button>
  </div>
  <div id="entrants-box" hidden>
  <h3>Entrants <span id="entrant-count" class="muted"></span></h3>
  <div class="actions"><select id="entrant-draw"></select><input id="entrant-search" type="search" placeholder="search entrants"></div>
  <div class="scroll"><table id="entrants"><thead><tr><th>name</th><th>login</th><th>tickets</th><th id="entrant-verdict">eligible</th></tr></thead><tbody></tbody></table></div>
  </div>
</section>
<section>
  <h2>Start a link giveaway</h2>
  <p id="start-busy" class="muted" hidden></p>
  <div id="products" class="products"></div>
  <form id="start-form" class="actions">
    <label>winners <input id="start-winners" type="number" min="1" value="1"></label>
    <label>seconds <input id="start-seconds" type="number" min="5" value="60"></label>
    <button id="start" type="submit">Start giveaway</button>
  </form>
</section>
<section>
  <h2>Prizes waiting <span id="prize-count" class="muted"></span></h2>
  <p class="muted">Winners whose prize is not redeemed yet. A whisper is never proof it arrived: a prize stays here until Fourthwall says it was redeemed, or that it can no longer be (cancelled, or changed to a promotion or a gift card).</p>
  <div class="scroll"><table id="prizes"><thead><tr><th>winner</th><th>prize</th><th>state</th><th>since</th><th>link</th><th></th></tr></thead><tbody></tbody></table></div>
</section>
<section>
  <h2>Recent winners</h2>
  <div id="recent"><p class="muted">No winners yet.</p></div>
  <h3>What the winners said</h3>
  <ul id="winner-chat" class="log"></ul>
</section>
<section>
  <h2>History</h2>
  <div class="actions">
    <input id="history-search" type="search" placeholder="filter: id, prize, winner">
    <select id="history-status"><option value="">any status</option><option>finished</option><option>cancelled</option><option>failed</option><option>open</option><option>drawing</option></select>
    <a id="csv" href="/dashboard/api/history.csv" download>Download CSV</a>
    <a id="json" href="/dashboard/api/history.json" download>Download JSON</a>
  </div>
  <div class="scroll"><table id="history"><thead><tr><th>closed</th><th>kind</th><th>prize</th><th>status</th><th>entrants</th><th>winners</th><th>verify</th></tr></thead><tbody></tbody></table></div>
</section>
<section>
  <h2>Bot's chat lines</h2>
  <ul id="transcript" class="log"></ul>
</section>
</main>
</div>
</body>
</html>
`;

export const DASHBOARD_CSS = `
body { margin: 0; font: 15px/1.4 system-ui, "Segoe UI", Roboto, sans-serif; background: #f6f5fb; color: #1c1633;
  overflow-wrap: break-word; word-break: normal; hyphens: manual; }
header { display: flex; gap: 12px; align-items: center; padding: 12px 20px; background: #1c1633; color: #fff; flex-wrap: wrap; }
header h1 { margin: 0 12px 0 0; font-size: 22px; }
.pill { padding: 2px 10px; border-radius: 999px; background: rgba(255,255,255,.15); }
main { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(520px, 100%), 1fr)); gap: 16px; padding: 16px 20px; }
section { background: #fff; border-radius: 12px; padding: 12px 18px; box-shadow: 0 1px 4px rgba(0,0,0,.08); min-width: 0; }
[hidden] { display: none !important; }
.scroll { overflow-x: auto; }
@media (max-width: 600px) { main { padding: 10px 8px; } section { padding: 10px 12px; } header { padding: 10px 12px; } }
h2 { margin: 4px 0 10px; font-size: 18px; } h3 { font-size: 15px; margin: 14px 0 6px; }
button, select, input { font: inherit; padding: 5px 10px; border-radius: 8px; border: 1px solid #b9b3d6; background: #fff; }
button { background: #6d28d9; color: #fff; border: none; cursor: pointer; } button:hover { background: #5b21b6; }
button.small { padding: 2px 8px; font-size: 13px; } button.ghost { background: #ede9fe; color: #3b0764; }
button.confirm { background: #b91c1c; color: #fff; } button:disabled { opacity: .5; cursor: default; }
.actions { display: flex; gap: 8px; flex-wrap: wrap; align-items: center; margin: 8px 0; }
#signin { max-width: 560px; margin: 40px auto; } #signin code { font: 13px ui-monospace, Menlo, monospace; overflow-wrap: anywhere; }
#signin .bad { background: #fee2e2; padding: 8px 14px; border-radius: 8px; }
#answer { margin: 10px 20px 0; padding: 8px 14px; border-radius: 8px; background: #dcfce7; }
#answer.bad { background: #fee2e2; }
#problems { margin: 10px 20px 0; padding: 8px 14px; border-radius: 8px; background: #fee2e2; font-weight: 600; }
.draw { border: 1px solid #e4e0f5; border-radius: 10px; padding: 8px 12px; margin-bottom: 8px; }
.draw .title { font-weight: 700; } .muted { color: #6b6590; } .checked { color: #1f7a3a; }
.winner { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin: 4px 0; }
.link { font-family: ui-monospace, Menlo, monospace; font-size: 12px; background: #f3f0ff; padding: 2px 6px; border-radius: 6px; overflow-wrap: anywhere; min-width: 0; }
table { width: 100%; border-collapse: collapse; font-size: 14px; } th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid #eee; vertical-align: top; }
.products { display: grid; grid-template-columns: repeat(auto-fill, minmax(120px, 1fr)); gap: 8px; }
.product { border: 2px solid #e4e0f5; border-radius: 10px; padding: 6px; cursor: pointer; text-align: center; background: #fff; color: inherit; }
.product img { width: 100%; height: 80px; object-fit: contain; } .product.selected { border-color: #6d28d9; background: #f3f0ff; }
.product.out { opacity: .5; }
.log { list-style: none; padding: 0; margin: 0; max-height: 260px; overflow: auto; font-size: 14px; }
.log li { padding: 2px 0; border-bottom: 1px dotted #eee; }
.hex { font: 12px ui-monospace, Menlo, monospace; overflow-wrap: anywhere; }
`;

export const DASHBOARD_JS = `
import { authFetch, hasToken, signIn, signOut, takeTokenFromAddress } from './client.js';
const $ = (id) => document.getElementById(id);
let selectedProduct = '';
let state = { draws: [] };
/** From the history: a giveaway still waits for its links (also one no longer in memory). */
let linksWaiting = false;
/** The destructive action waiting for its confirming click: { key, until } (survives the re-renders). */
let confirming = null;
/** What the draws in memory looked like at the last render (the History reloads when it changes). */
let drawsSeen = '';

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
// Addresses, hashes, hex and ids (no word boundaries) go in .hex, the only text that may wrap anywhere.
const HEX = /(https?:[/][/][^ ]+|[0-9a-f]{16,}|[a-z]+_[0-9a-f]{12,})/;
function withHex(tag, cls, text) {
  const e = el(tag, cls);
  String(text).split(HEX).forEach((part, i) => part && e.append(i % 2 ? el('code', 'hex', part) : part));
  return e;
}
// One time format for the whole page: "Nov 27, 13:46:06" in the viewer's locale.
const WHEN = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
function when(t) { return t ? WHEN.format(new Date(t)) : ''; }

async function getJson(path) {
  const res = await authFetch(path);
  if (res.status === 401) throw new Error('Not signed in.');
  return res.json();
}

function showAnswer(ok, message) {
  const a = $('answer');
  a.hidden = false;
  a.className = ok ? '' : 'bad';
  a.textContent = message;
}

async function act(action, body) {
  try {
    const res = await authFetch('/dashboard/api/' + action, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body || {}),
    });
    const out = await res.json();
    showAnswer(!!out.ok, out.message || (out.ok ? 'Done.' : 'Refused.'));
  } catch (err) {
    showAnswer(false, String(err && err.message || err));
  }
  refresh();
  loadHistory();
}

function copyButton(text) {
  const b = el('button', 'small ghost', 'Copy');
  b.type = 'button';
  b.addEventListener('click', async () => {
    try { await navigator.clipboard.writeText(text); b.textContent = 'Copied'; }
    catch { b.textContent = 'Select + copy'; }
  });
  return b;
}

/**
 * A destructive action's button: the first click asks ("Confirm ..." beside "Keep"), the second
 * acts. The question stays through the page's re-renders for 10 s (keyed by \`key\`).
 */
function confirmed(button, key, question, run) {
  const asking = () => confirming && confirming.key === key && confirming.until > Date.now();
  const label = button.textContent;
  const keep = el('button', 'small ghost', 'Keep');
  keep.type = 'button';
  keep.dataset.keep = key;
  const show = () => {
    const on = asking();
    button.textContent = on ? question : label;
    button.classList.toggle('confirm', on);
    keep.hidden = !on;
  };
  button.addEventListener('click', () => {
    if (!asking()) { confirming = { key, until: Date.now() + 10000 }; show(); return; }
    confirming = null;
    button.disabled = true;
    show();
    run();
  });
  keep.addEventListener('click', () => { confirming = null; show(); });
  keep.refresh = show;
  show();
  return keep;
}

const REDEEMED = 'redeemed';
const NOT_REDEEMABLE = 'not-redeemable';
const GIFT_OUT = 'gift-out';

function winnerRow(d, w) {
  const row = el('div', 'winner');
  row.append(el('strong', '', w.displayName), el('span', 'muted', '@' + w.login));
  if (w.claimed === false) row.append(el('span', 'muted', 'not claimed yet'));
  if (w.claimed === true) row.append(el('span', '', 'claimed ✔'));
  if (w.accountCheck === 'checked') row.append(el('span', 'checked', 'checked with Twitch ✔'));
  if (w.accountCheck === 'unchecked') row.append(el('span', 'muted', 'could not be checked with Twitch (let in)'));
  if (w.rerollRefusal === REDEEMED) row.append(el('span', 'checked', 'prize redeemed ✔'));
  if (w.rerollRefusal === NOT_REDEEMABLE) row.append(el('span', 'muted', 'prize no longer redeemable (closed at Fourthwall)'));
  if (w.rerollRefusal === GIFT_OUT) row.append(el('span', 'muted', 'gift link already out: it stays theirs (a gift cannot be issued again)'));
  if (w.link) { row.append(el('span', 'link', w.link), copyButton(w.link)); }
  // Offered only where the engine would accept it (giveaway/reroll.ts winnerRefusal).
  if (w.rerollRefusal === null) {
    const rr = el('button', 'small ghost', 'Reroll');
    rr.type = 'button';
    rr.dataset.reroll = w.login;
    const keep = confirmed(rr, 'reroll:' + d.id + ':' + w.login, 'Confirm: replace @' + w.login, () => act('reroll', { login: w.login, drawId: d.id }));
    row.append(rr, keep);
  }
  return row;
}

// Which draw actions apply (the engine refuses the others: giveaway/draw-machine.ts).
function applicable(draws) {
  const active = draws.filter((d) => d.active);
  const open = active.filter((d) => d.phase === 'open');
  return {
    end: open.length,
    cancel: active.some((d) => d.kind === 'link-giveaway' && (d.phase === 'open' || d.phase === 'claim')),
    // (the history also says so for a giveaway no longer in memory, e.g. after a restart)
    retry: linksWaiting || draws.some((d) => d.status === 'failed' && d.kind !== 'gift-draw' && d.winners.length > 0 && d.winners.some((w) => !w.link)),
  };
}

const SET_ASIDE_WHY = { 'not-follower': 'not following the channel', 'follow-age': 'followed too recently', 'account-age': 'account too new', unchecked: 'could not be checked with Twitch' };

/**
 * When Twitch gave the answer a set-aside rests on. An answer looked up while entries were open
 * (the warm-up keeps it for the close) predates the freeze: said so, not left as a puzzle.
 */
function answeredWhen(at, frozenAt) {
  if (frozenAt && Date.parse(at) < Date.parse(frozenAt)) {
    return 'Twitch answered at ' + when(at) + ', while entries were open; the rule was applied to that answer when the list was frozen at ' + when(frozenAt);
  }
  return 'Twitch answered at ' + when(at);
}

function setAsideList(d) {
  const list = d.setAside;
  const box = el('details', 'set-aside');
  box.append(el('summary', 'muted', list.length + ' pick' + (list.length === 1 ? '' : 's') + ' set aside by the account rules'));
  const ul = el('ul', 'log');
  for (const a of list) ul.append(el('li', '', '@' + a.login + ': ' + (SET_ASIDE_WHY[a.reason] || a.reason) + ' (' + answeredWhen(a.at, d.fairness.frozenAt) + ')'));
  box.append(ul);
  return box;
}

function drawBlock(d) {
  const box = el('div', 'draw');
  box.dataset.id = d.id;
  box.append(el('div', 'title', d.prize + (d.gifts > 1 ? ' × ' + d.gifts : '')));
  const left = d.phase === 'open' ? Math.max(0, Math.ceil((Date.parse(d.closesAt) - state.now) / 1000)) + ' s left' : '';
  const entrants = d.entrants + (d.entrants === 1 ? ' entrant' : ' entrants');
  box.append(el('div', 'muted', [d.kind, d.phase, entrants, left, d.claimDeadline && d.phase === 'claim' ? 'claim until ' + when(d.claimDeadline) : ''].filter(Boolean).join(' · ')));
  for (const w of d.winners) box.append(winnerRow(d, w));
  if (d.setAside && d.setAside.length) box.append(setAsideList(d));
  if (d.failure) box.append(el('div', 'muted', 'failed: ' + d.failure));
  return box;
}

function renderState() {
  $('status').textContent =
    state.mode + ' · chat ' + state.chat + (state.chatReason ? ' (' + state.chatReason + ')' : '') +
    (state.eventsub ? ' · EventSub ' + state.eventsub + (state.eventsubReason ? ' (' + state.eventsubReason + ')' : '') : '') +
    (state.channelPoints ? ' · channel points: ' + state.channelPoints.entered + ' entered, ' + state.channelPoints.refunded + ' refunded' : '') +
    ' · #' + state.channel;
  const problems = state.problems || [];
  $('problems').hidden = problems.length === 0;
  $('problems').textContent = problems.join(' ');
  const open = state.draws.filter((d) => d.active);
  const recent = state.draws.filter((d) => !d.active && d.winners.length);
  $('open').replaceChildren(...(open.length ? open.map(drawBlock) : [el('p', 'muted', 'No draw is open.')]));
  const can = applicable(state.draws);
  $('end').hidden = !can.end;
  $('end').textContent = can.end > 1 ? 'End all ' + can.end + ' open draws now and draw' : 'End now and draw';
  $('cancel').hidden = !can.cancel;
  if (!can.cancel && confirming && confirming.key === 'cancel') confirming = null;
  cancelShow();
  $('retry').hidden = !can.retry;
  $('recent').replaceChildren(...(recent.length ? recent.map(drawBlock) : [el('p', 'muted', 'No winners yet.')]));
  // One link giveaway at a time (the engine refuses a second): no picker while one runs.
  const running = open.find((d) => d.kind === 'link-giveaway');
  $('products').hidden = !!running;
  $('start-form').hidden = !!running;
  $('start-busy').hidden = !running;
  $('start-busy').textContent = running ? 'A link giveaway is running (' + running.prize + '): end or cancel it to start another.' : '';
  $('entrants-box').hidden = open.length === 0;
  const sel = $('entrant-draw');
  const want = open.map((d) => d.id).join(',');
  if (sel.dataset.ids !== want) {
    const keep = sel.value;
    sel.replaceChildren(...open.map((d) => { const o = el('option', '', d.prize + ' (' + d.id + ')'); o.value = d.id; return o; }));
    sel.dataset.ids = want;
    if (open.some((d) => d.id === keep)) sel.value = keep;
  }
}

async function refresh() {
  try {
    state = await getJson('/dashboard/api/state');
    // A draw changed (opened, drawn, rerolled...): the History is loaded BEFORE the lists show it,
    // so it never says "drawing" beside winners already listed.
    const seen = state.draws.map((d) => d.id + ':' + d.status + ':' + d.phase + ':' + d.winners.map((w) => w.login).join('+')).join('|');
    if (seen !== drawsSeen) { drawsSeen = seen; await loadHistory(); }
    renderState();
    await loadEntrants();
    await loadPrizes();
    const t = await getJson('/dashboard/api/transcript');
    $('transcript').replaceChildren(...t.bot.slice().reverse().map((l) => withHex('li', '', when(l.at) + '  ' + l.text)));
    $('winner-chat').replaceChildren(...t.winners.map((l) => withHex('li', '', when(l.at) + '  [' + l.prize + '] ' + l.name + ': ' + l.text)));
  } catch (err) {
    showAnswer(false, String(err && err.message || err));
  }
}

async function loadPrizes() {
  const p = await getJson('/dashboard/api/prizes');
  $('prize-count').textContent = p.prizes.length ? '(' + p.prizes.length + ')' : '(none)';
  $('prizes').tBodies[0].replaceChildren(...p.prizes.map((x) => {
    const tr = el('tr');
    tr.dataset.draw = x.drawId;
    tr.dataset.user = x.userId;
    const link = el('td');
    if (x.link) link.append(copyButton(x.link));
    const act2 = el('td');
    if (!x.delivery.remindedAt) {
      const b = el('button', 'small ghost', 'Remind');
      b.type = 'button';
      b.addEventListener('click', () => act('remind', { drawId: x.drawId, userId: x.userId }));
      act2.append(b);
    } else act2.append(el('span', 'muted', 'reminded (' + x.delivery.remindedBy + ')'));
    tr.append(el('td', '', x.displayName + ' @' + x.login + (x.replaced ? ' (replaced: keeps the link they saw)' : '')), el('td', '', x.product), el('td', 'state', x.label + (x.delivery.whisperProblem ? ' (whisper refused)' : '')),
      el('td', '', when(x.delivery.announcedAt)), link, act2);
    return tr;
  }));
}

async function loadEntrants() {
  const id = $('entrant-draw').value;
  if (!id) { $('entrants').tBodies[0].replaceChildren(); $('entrant-count').textContent = ''; return; }
  const q = $('entrant-search').value;
  const r = await getJson('/dashboard/api/entrants?draw=' + encodeURIComponent(id) + '&q=' + encodeURIComponent(q));
  // With account rules, 'eligible' is the chat rules' verdict: Twitch checks the rest at the close.
  const a = r.accountRules;
  $('entrant-count').textContent = r.total + ' entered, ' + r.eligible + ' eligible' + (a ? ' by the chat rules' : '') + (q ? ', ' + r.matched + ' match' : '')
    + (a ? '; checked ' + a.checked + ': ' + a.rules : '');
  $('entrant-verdict').textContent = a ? 'eligible by the chat rules' : 'eligible';
  $('entrants').tBodies[0].replaceChildren(...r.entrants.map((e) => {
    const tr = el('tr');
    tr.append(el('td', '', e.displayName), el('td', '', e.login), el('td', '', e.weight), el('td', '', e.eligible ? 'yes' : 'no: ' + e.why));
    return tr;
  }));
}

function historyQuery() {
  return '?q=' + encodeURIComponent($('history-search').value) + '&status=' + encodeURIComponent($('history-status').value);
}

async function loadHistory() {
  try {
    const q = historyQuery();
    $('csv').href = '/dashboard/api/history.csv' + q;
    $('json').href = '/dashboard/api/history.json' + q;
    const h = await getJson('/dashboard/api/history' + q);
    if (linksWaiting !== (h.linksWaiting === true)) { linksWaiting = h.linksWaiting === true; if (state.mode) renderState(); }
    $('history').tBodies[0].replaceChildren(...h.draws.map((d) => {
      const tr = el('tr');
      tr.dataset.id = d.id;
      tr.append(el('td', '', when(d.closedAt)), el('td', '', d.kind), el('td', '', d.offer.name), el('td', '', d.status),
        el('td', '', d.entrants), el('td', '', d.winners.map((w) => w.displayName).join(', ')), el('td', '', d.verify));
      return tr;
    }));
  } catch (err) {
    showAnswer(false, String(err && err.message || err));
  }
}

async function loadProducts() {
  try {
    const p = await getJson('/dashboard/api/products');
    $('products').replaceChildren(...p.products.map((x) => {
      const b = el('button', 'product' + (x.stock === 0 ? ' out' : ''));
      b.type = 'button';
      b.dataset.id = x.id;
      if (x.image) { const img = el('img'); img.alt = ''; img.src = x.image; b.append(img); }
      b.append(el('div', '', x.name), el('div', 'muted', x.stock === 'unlimited' ? 'unlimited' : x.stock === null ? 'stock ?' : x.stock + ' in stock'));
      b.addEventListener('click', () => {
        selectedProduct = x.id;
        for (const o of $('products').children) o.classList.toggle('selected', o === b);
      });
      return b;
    }));
  } catch (err) {
    showAnswer(false, 'Products: ' + String(err && err.message || err));
  }
}

// The stream state Fourthwall reports, and the one button that changes it (both while unknown).
const STREAM_WORDS = { ONLINE: 'live', OFFLINE: 'offline' };
async function loadStreaming() {
  let status = 'UNKNOWN';
  try { status = (await getJson('/dashboard/api/stream')).streaming.status; } catch { /* shown as unknown */ }
  $('streaming').textContent = 'stream: ' + (STREAM_WORDS[status] || 'unknown');
  $('go-live').hidden = status === 'ONLINE';
  $('go-offline').hidden = status === 'OFFLINE';
}

$('start-form').addEventListener('submit', (e) => {
  e.preventDefault();
  if (!selectedProduct) { showAnswer(false, 'Pick a product first.'); return; }
  act('start', { product: selectedProduct, winners: Number($('start-winners').value), seconds: Number($('start-seconds').value) });
});
$('end').addEventListener('click', () => act('end'));
const cancelKeep = confirmed($('cancel'), 'cancel', 'Confirm: cancel the link giveaway', async () => { await act('cancel'); $('cancel').disabled = false; });
$('cancel').after(cancelKeep);
function cancelShow() {
  cancelKeep.refresh();
  if ($('cancel').hidden) cancelKeep.hidden = true;
}
$('retry').addEventListener('click', () => act('retry'));
$('go-live').addEventListener('click', async () => { await act('stream', { action: 'live' }); loadStreaming(); });
$('go-offline').addEventListener('click', async () => { await act('stream', { action: 'offline' }); loadStreaming(); });
$('logout').addEventListener('click', () => { signOut(); showSignIn(''); });
// A download is an API call too (it needs the token header): fetched, then saved from a blob.
for (const id of ['csv', 'json']) {
  $(id).addEventListener('click', async (e) => {
    e.preventDefault();
    const res = await authFetch($(id).getAttribute('href'));
    if (!res.ok) { showAnswer(false, 'Download failed (HTTP ' + res.status + ').'); return; }
    const url = URL.createObjectURL(await res.blob());
    const a = el('a');
    a.href = url;
    a.download = 'giftdrop-history.' + id;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  });
}
$('entrant-search').addEventListener('input', () => loadEntrants());
$('entrant-draw').addEventListener('change', () => loadEntrants());
$('history-search').addEventListener('input', () => loadHistory());
$('history-status').addEventListener('change', () => loadHistory());

// Signed in: the page (and its polling); signed out: the form naming where the token is.
let timers = [];
function showSignIn(problem) {
  timers.forEach(clearInterval);
  timers = [];
  $('app').hidden = true;
  $('signin').hidden = false;
  $('signin-problem').hidden = !problem;
  $('signin-problem').textContent = problem;
  $('signin-token').focus();
}
function showApp() {
  $('signin').hidden = true;
  $('app').hidden = false;
  refresh();
  loadHistory();
  loadProducts();
  loadStreaming();
  timers = [setInterval(refresh, 1000), setInterval(loadHistory, 5000)];
}
window.addEventListener('giftdrop:signed-out', (e) => {
  if (!$('app').hidden || e.detail.hadToken) showSignIn('The bot refused that token: sign in with the one it uses now.');
});
$('signin-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  if (!signIn($('signin-token').value)) return;
  $('signin-token').value = '';
  const res = await authFetch('/dashboard/api/state');
  if (res.ok) showApp();
});

takeTokenFromAddress();
if (hasToken()) showApp();
else showSignIn('');
`;
