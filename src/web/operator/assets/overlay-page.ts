/**
 * The OBS overlay page (`GET /overlay`), its stylesheet and its script, as strings served by the bot
 * (no build step, no CDN; the same text works from src/ under tsx and from a tsc build).
 *
 * Contract: the script renders every received string with textContent (never innerHTML), follows
 * `/overlay/events` with the one fetch-based event-stream reader (operator-client.ts
 * `readEventStream`: it reconnects by itself after the stream ends or fails); when the page was
 * opened with `?key=` (OBS on another machine, GIFTDROP_OVERLAY_KEY) that key goes on every data
 * request it makes (the event stream, the prize images): no cookie carries it,
 * and keys the cards by draw so a new frame never restarts a running reveal. Transparent
 * background; laid out for a 1920x1080 browser source and scaled as a whole to any other size
 * (1280x720 looks the same, smaller). The cards keep the server's order (running draws first,
 * then the newest results) with CSS `order`, never by moving nodes (that would restart their
 * animations): running draws sit in the bottom row, drawn above the results, and are always
 * fully visible; the results fill the rows above, and a result card that would not fit inside
 * the page is hidden rather than cut off. What was already on screen before a (re)load is shown
 * as it is, without its pop or winner reveal (the first frame after a load only restores); only
 * what arrives afterwards animates. A winner's name grows into place (never larger than its final
 * size) and is fitted to its card: the font shrinks for a long name, and only a name still too
 * long for the card at the smallest size wraps.
 */

export const OVERLAY_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>giftdrop overlay</title>
<link rel="stylesheet" href="/overlay/overlay.css">
<script type="module" src="/overlay/overlay.js"></script>
</head>
<body>
<main id="draws" aria-live="polite"></main>
<div id="badge" hidden></div>
</body>
</html>
`;

export const OVERLAY_CSS = `
html, body { margin: 0; padding: 0; background: transparent; overflow: hidden; }
body { font: 600 28px/1.25 system-ui, "Segoe UI", Roboto, "Noto Sans", sans-serif; color: #fff;
  text-shadow: 0 2px 4px rgba(0,0,0,.8); }
#draws { position: fixed; left: 0; bottom: 0; width: 1920px; box-sizing: border-box; padding: 0 48px 48px; display: flex;
  gap: 32px; align-items: flex-end; flex-wrap: wrap-reverse; transform-origin: left bottom; }
.card { position: relative; width: 560px; box-sizing: border-box; background: rgba(16, 12, 32, .82); border: 3px solid #8b5cf6;
  border-radius: 20px; padding: 24px 28px; box-shadow: 0 8px 32px rgba(0,0,0,.45); animation: pop .35s ease-out; }
.card.running { z-index: 2; }
.card.offscreen { visibility: hidden; }
.card[data-stage="winners"], .card[data-stage="claim"] { border-color: #facc15; }
.card[data-stage="cancelled"] { border-color: #64748b; opacity: .85; }
.head { display: flex; gap: 20px; align-items: center; }
.head img { width: 112px; height: 112px; object-fit: cover; border-radius: 14px; background: rgba(255,255,255,.1); flex: none; }
.prize { font-size: 36px; font-weight: 800; }
.sub { font-size: 22px; font-weight: 500; opacity: .9; }
.prompt { margin-top: 16px; font-size: 40px; font-weight: 900; color: #facc15; }
.row { display: flex; justify-content: space-between; align-items: baseline; margin-top: 10px; }
.count { font-size: 34px; font-weight: 800; }
.timer { font-size: 40px; font-variant-numeric: tabular-nums; font-weight: 900; }
.names { list-style: none; margin: 10px 0 0; padding: 0; font-size: 24px; font-weight: 600; }
.names li { animation: slide .4s ease-out; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.names li:nth-child(n+5) { opacity: .6; }
.winners { list-style: none; margin: 14px 0 0; padding: 0; font-size: 40px; font-weight: 900; color: #facc15; }
.winners li { opacity: 0; animation: reveal .6s ease-out forwards; transform-origin: left center; white-space: nowrap; overflow: hidden; }
.winners li.wrap { white-space: normal; overflow-wrap: anywhere; }
.winners li.replacement::after { content: " (replacement)"; font-size: 22px; color: #fff; }
.winners li.pending::after { content: " ⏳"; }
.note, .fair, .chat { margin-top: 12px; font-size: 20px; font-weight: 500; opacity: .9; overflow-wrap: break-word; }
.fair { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 18px; overflow-wrap: anywhere; }
.chat div { margin-top: 4px; }
#badge { position: fixed; right: 32px; bottom: 24px; font-size: 20px; padding: 6px 14px; border-radius: 999px; background: rgba(16,12,32,.7); }
@keyframes pop { from { transform: scale(.9); opacity: 0; } to { transform: none; opacity: 1; } }
@keyframes slide { from { transform: translateX(-24px); opacity: 0; } to { transform: none; opacity: 1; } }
@keyframes reveal { from { transform: scale(.5); opacity: 0; } to { transform: none; opacity: 1; } }
`;

export const OVERLAY_JS = `
import { readEventStream } from './client.js';
// OBS on another machine opens /overlay?key=...: the key goes on the overlay's own data requests.
const KEY = new URLSearchParams(location.search).get('key');
function withKey(path) { return KEY ? path + (path.includes('?') ? '&' : '?') + 'key=' + encodeURIComponent(KEY) : path; }
const drawsEl = document.getElementById('draws');
const badgeEl = document.getElementById('badge');
const cards = new Map();
let skew = 0;
/** True until the first frame after this page loaded has been drawn: it restores, it does not replay. */
let restoring = true;
let current = { draws: [] };

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function short(hex) { return hex ? hex.slice(0, 16) + '…' : ''; }
function clockText(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const m = Math.floor(s / 60);
  const r = s % 60;
  return m + ':' + (r < 10 ? '0' : '') + r;
}

function makeCard(d) {
  const c = { root: el('section', 'card'), revealed: [] };
  c.root.dataset.key = d.key;
  const head = el('div', 'head');
  c.img = el('img');
  c.img.alt = '';
  c.img.addEventListener('error', () => { c.img.hidden = true; });
  c.img.src = withKey(d.image);
  const titles = el('div');
  c.prize = el('div', 'prize');
  c.sub = el('div', 'sub');
  titles.append(c.prize, c.sub);
  head.append(c.img, titles);
  c.prompt = el('div', 'prompt');
  const row = el('div', 'row');
  c.count = el('div', 'count');
  c.timer = el('div', 'timer');
  row.append(c.count, c.timer);
  c.names = el('ul', 'names');
  c.winners = el('ul', 'winners');
  c.note = el('div', 'note');
  c.chat = el('div', 'chat');
  c.fair = el('div', 'fair');
  c.root.append(head, c.prompt, row, c.names, c.winners, c.note, c.chat, c.fair);
  return c;
}

function setText(node, text) { if (node.textContent !== text) node.textContent = text; node.hidden = !text; }

// A winner's name fits its card: the font shrinks step by step (layout widths, so the reveal's
// transform and the page's scale do not count); a name too long even at the smallest size wraps.
const NAME_PX = 40;
const NAME_MIN_PX = 18;
function fitName(li) {
  li.classList.remove('wrap');
  let px = NAME_PX;
  li.style.fontSize = '';
  while (li.scrollWidth > li.clientWidth && px > NAME_MIN_PX) { px -= 2; li.style.fontSize = px + 'px'; }
  li.classList.toggle('wrap', li.scrollWidth > li.clientWidth);
}

function renderWinners(c, d) {
  let delay = 0;
  for (let i = 0; i < d.winners.length; i++) {
    const w = d.winners[i];
    let li = c.winners.children[i];
    if (!li) { li = el('li'); c.winners.append(li); }
    if (li.dataset.name !== w.name) {
      li.dataset.name = w.name;
      li.textContent = w.name;
      li.style.animation = 'none';
      void li.offsetWidth;
      li.style.animation = '';
      li.style.animationDelay = (delay * 1.2) + 's';
      delay += 1;
    }
    li.classList.toggle('replacement', !!w.replacement);
    li.classList.toggle('pending', w.claimed === false);
    fitName(li);
  }
  while (c.winners.children.length > d.winners.length) c.winners.lastChild.remove();
}

function renderCard(c, d) {
  c.root.dataset.stage = d.stage;
  setText(c.prize, d.prize);
  const gifts = d.gifts > 1 ? d.gifts + ' × ' : '';
  setText(c.sub, d.gifter ? gifts + 'gifted by ' + d.gifter : (d.kind === 'link-giveaway' ? gifts + 'giveaway' : gifts + 'gift draw'));
  const open = d.stage === 'open';
  setText(c.prompt, open ? 'Type ' + d.enter + ' to join!' : d.stage === 'closing' ? 'Entries closed: drawing…' : d.stage === 'cancelled' ? 'Giveaway cancelled' : d.stage === 'claim' ? 'Winners: type !claim' : d.winners.length ? 'Winners' : 'Nobody entered');
  setText(c.count, d.entrants + (d.entrants === 1 ? ' entrant' : ' entrants'));
  c.timer.hidden = !open;
  c.names.hidden = !open;
  if (open) {
    const have = Array.from(c.names.children).map((li) => li.textContent).join('\\n');
    if (have !== d.recent.join('\\n')) c.names.replaceChildren(...d.recent.slice(0, 6).map((n) => el('li', '', n)));
  }
  renderWinners(c, d);
  const rr = d.rerolls.length ? d.rerolls[d.rerolls.length - 1] : undefined;
  setText(c.note, rr && rr.to ? rr.to + ' replaces ' + rr.from : (d.stage === 'closing' && d.digest ? 'Entrant list frozen: ' + short(d.digest) : ''));
  c.chat.replaceChildren(...d.chat.map((l) => el('div', '', l.name + ': ' + l.text)));
  c.chat.hidden = !d.chat.length;
  const fair = [];
  if (d.commitment) fair.push('commitment ' + short(d.commitment));
  if (d.digest && d.stage !== 'open') fair.push('entrants ' + short(d.digest));
  if (d.seed) fair.push('seed ' + d.seed);
  setText(c.fair, d.stage === 'open' || d.stage === 'cancelled' ? (d.commitment ? 'Provably fair · commitment ' + short(d.commitment) : '') : fair.join(' · '));
}

function apply(state) {
  current = state;
  skew = state.now - Date.now();
  const seen = new Set();
  state.draws.forEach((d, i) => {
    seen.add(d.key);
    let c = cards.get(d.key);
    if (!c) { c = makeCard(d); cards.set(d.key, c); drawsEl.append(c.root); }
    renderCard(c, d);
    c.root.style.order = String(i);
    c.running = d.stage === 'open' || d.stage === 'closing' || d.stage === 'claim';
    c.root.classList.toggle('running', c.running);
  });
  for (const [key, c] of cards) if (!seen.has(key)) { c.root.remove(); cards.delete(key); }
  if (restoring) {
    // on screen before this load: shown as it stands (no pop, no reveal replayed, before any
    // paint); what arrives later (a new card, a new or replaced winner) animates as usual
    restoring = false;
    for (const c of cards.values()) {
      c.root.style.animation = 'none';
      for (const li of c.winners.children) { li.style.animation = 'none'; li.style.opacity = '1'; }
      for (const li of c.names.children) li.style.animation = 'none';
    }
  }
  badgeEl.textContent = state.badge || '';
  badgeEl.hidden = !state.badge || state.draws.length > 0;
  fit();
  tick();
}

// The layout is 1920x1080; other sizes get it scaled. A result card that is not wholly inside
// the page is hidden (its layout box is measured, so the pop animation's scale does not count).
function fit() {
  const s = Math.min(innerWidth / 1920, innerHeight / 1080);
  drawsEl.style.transform = s === 1 ? '' : 'scale(' + s + ')';
  const box = drawsEl.getBoundingClientRect();
  for (const c of cards.values()) {
    const top = box.top + c.root.offsetTop * s;
    const left = box.left + c.root.offsetLeft * s;
    const inside = top >= -0.5 && left >= -0.5 && top + c.root.offsetHeight * s <= innerHeight + 0.5 && left + c.root.offsetWidth * s <= innerWidth + 0.5;
    c.root.classList.toggle('offscreen', !inside && !c.running);
  }
}
addEventListener('resize', fit);

function tick() {
  const now = Date.now() + skew;
  for (const d of current.draws) {
    const c = cards.get(d.key);
    if (c && d.stage === 'open') setText(c.timer, clockText(d.closesAt - now));
  }
}
setInterval(tick, 250);

readEventStream(withKey('/overlay/events'), (name, data) => { if (name === 'state') apply(JSON.parse(data)); });
`;
