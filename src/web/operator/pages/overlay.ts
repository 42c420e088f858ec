/**
 * The OBS overlay's script (browser side; bundled by ../page-scripts.ts and served as
 * `/overlay/overlay.js`), typed against the state it reads (../overlay-view.ts): a field renamed
 * there fails `npm run typecheck` here.
 *
 * What viewers see, laid out for a 1920x1080 browser source and scaled as a whole to any other
 * size: each running draw as a card at the bottom left (the prize and its picture, who gifted it,
 * `Type !enter to win!`, a big countdown with a bar running down, the count, who just joined);
 * when its winners are drawn the same card reveals them one by one, big, for `revealMs`; then the
 * result joins the compact results band at the bottom right (prize and winners on one line,
 * oldest on top), until the server drops it. Supporter alerts slide in at the top right. No hash,
 * seed or id is ever on the page (the state carries none; keys are opaque).
 *
 * Contract: every received string is rendered with textContent (dom.ts); the state arrives on
 * `/overlay/events` (client.ts readEventStream: reconnects by itself; the overlay key, when the
 * page has one, goes along); cards are keyed so a new frame never restarts a running reveal; what
 * was on screen before a (re)load is restored without its pop or reveal (the first frame only
 * restores), what arrives later animates. A winner's name grows into place and is fitted to its
 * card: the font shrinks for a long name, and only a name still too long at the smallest size
 * wraps. A running card is always wholly visible; a revealed result or band row that would not fit
 * inside the page is hidden rather than cut off.
 */
import type { OverlayAlert, OverlayDraw, OverlayState } from '../overlay-view.js';
import { readEventStream } from './client.js';
import { byId, el, setText } from './dom.js';

const stageEl = byId('stage');
const drawsEl = byId('draws');
const bandEl = byId('results');
const alertsEl = byId('alerts');
const badgeEl = byId('badge');

interface Card {
  root: HTMLElement;
  img: HTMLImageElement;
  prize: HTMLElement;
  sub: HTMLElement;
  prompt: HTMLElement;
  timer: HTMLElement;
  count: HTMLElement;
  bar: HTMLElement;
  fill: HTMLElement;
  joined: HTMLElement;
  winners: HTMLUListElement;
  note: HTMLElement;
  chat: HTMLElement;
  running: boolean;
}

interface Row {
  root: HTMLElement;
  img: HTMLImageElement;
  prize: HTMLElement;
  winners: HTMLElement;
}

const cards = new Map<string, Card>();
const rows = new Map<string, Row>();
const alertEls = new Map<number, HTMLElement>();
let skew = 0;
/** True until the first frame after this page loaded has been drawn: it restores, it does not replay. */
let restoring = true;
let current: OverlayState = { now: 0, draws: [], alerts: [], revealMs: 12_000, pending: '' };
/** OBS on another machine opens /overlay?key=...: the key goes on the overlay's own data requests. */
const KEY = new URLSearchParams(location.search).get('key');
function withKey(path: string): string {
  return KEY ? `${path}${path.includes('?') ? '&' : '?'}key=${encodeURIComponent(KEY)}` : path;
}

function clockText(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const m = Math.floor(s / 60);
  const r = s % 60;
  return `${m}:${r < 10 ? '0' : ''}${r}`;
}

function image(src: string): HTMLImageElement {
  const img = el('img');
  img.alt = '';
  img.addEventListener('error', () => (img.hidden = true));
  img.src = withKey(src);
  return img;
}

function makeCard(d: OverlayDraw): Card {
  const root = el('section', 'card');
  root.dataset['key'] = d.key;
  const head = el('div', 'head');
  const img = image(d.image);
  const titles = el('div', 'titles');
  const prize = el('div', 'prize');
  const sub = el('div', 'sub');
  titles.append(prize, sub);
  head.append(img, titles);
  const prompt = el('div', 'prompt');
  const row = el('div', 'row');
  const timer = el('div', 'timer');
  const count = el('div', 'count');
  row.append(timer, count);
  const bar = el('div', 'bar');
  const fill = el('div', 'fill');
  bar.append(fill);
  const joined = el('div', 'joined');
  const winners = el('ul', 'winners');
  const note = el('div', 'note');
  const chat = el('div', 'chat');
  root.append(head, prompt, row, bar, joined, winners, note, chat);
  return { root, img, prize, sub, prompt, timer, count, bar, fill, joined, winners, note, chat, running: true };
}

// A winner's name fits its card: the font shrinks step by step (layout widths, so the reveal's
// transform and the page's scale do not count); a name too long even at the smallest size wraps.
const NAME_PX = 46;
const NAME_MIN_PX = 16;
function fitName(li: HTMLElement): void {
  li.classList.remove('wrap');
  let px = NAME_PX;
  li.style.fontSize = '';
  while (li.scrollWidth > li.clientWidth && px > NAME_MIN_PX) {
    px -= 2;
    li.style.fontSize = `${px}px`;
  }
  li.classList.toggle('wrap', li.scrollWidth > li.clientWidth);
}

function renderWinners(c: Card, d: OverlayDraw, pending: string): void {
  let delay = 0;
  for (let i = 0; i < d.winners.length; i++) {
    const w = d.winners[i]!;
    let li = c.winners.children[i] as HTMLLIElement | undefined;
    if (!li) {
      li = el('li');
      c.winners.append(li);
    }
    if (li.dataset['name'] !== w.name) {
      li.dataset['name'] = w.name;
      li.textContent = w.name;
      li.style.animation = 'none';
      void li.offsetWidth;
      li.style.animation = '';
      li.style.animationDelay = `${delay * 1.1}s`;
      delay += 1;
    }
    li.classList.toggle('replacement', !!w.replacement);
    li.classList.toggle('pending', w.claimed === false);
    li.dataset['pending'] = w.claimed === false ? pending : '';
    fitName(li);
  }
  while (c.winners.children.length > d.winners.length) c.winners.lastElementChild?.remove();
}

function renderCard(c: Card, d: OverlayDraw, pending: string): void {
  c.root.dataset['stage'] = d.stage;
  setText(c.prize, d.prize);
  setText(c.sub, d.subtitle);
  setText(c.prompt, d.headline);
  const open = d.stage === 'open';
  setText(c.count, d.count);
  c.timer.hidden = !open;
  c.bar.hidden = !open;
  setText(c.joined, open ? d.joined : '');
  renderWinners(c, d, pending);
  setText(c.note, d.note ?? '');
  c.chat.replaceChildren(...d.chat.map((l) => el('div', '', `${l.name}: ${l.text}`)));
  c.chat.hidden = !d.chat.length;
}

function makeRow(d: OverlayDraw): Row {
  const root = el('div', 'result');
  root.dataset['key'] = d.key;
  const img = image(d.image);
  const text = el('div', 'r-text');
  const prize = el('div', 'r-prize');
  const winners = el('div', 'r-winners');
  text.append(prize, winners);
  root.append(img, text);
  return { root, img, prize, winners };
}

function renderRow(r: Row, d: OverlayDraw): void {
  r.root.dataset['stage'] = d.stage;
  setText(r.prize, d.prize);
  setText(r.winners, d.winners.length ? d.winners.map((w) => w.name).join(' · ') : d.headline);
}

/** Each alert kind's icon: a static SVG path (24x24), drawn in the page (no emoji font needed). */
const ALERT_ICONS: Record<OverlayAlert['kind'], string> = {
  // a shopping bag
  order: 'M6 7h12l1.2 13H4.8L6 7Zm3 0V6a3 3 0 0 1 6 0v1h-1.6V6a1.4 1.4 0 0 0-2.8 0v1H9Z',
  // a heart
  donation:
    'M12 21s-7.5-4.6-9.3-9.2C1.4 8.4 3.6 5 7 5c2 0 3.4 1.1 5 3 1.6-1.9 3-3 5-3 3.4 0 5.6 3.4 4.3 6.8C19.5 16.4 12 21 12 21Z',
  // a star
  subscription: 'M12 2.5l2.9 6 6.6.9-4.8 4.6 1.2 6.5L12 17.4l-5.9 3.1 1.2-6.5-4.8-4.6 6.6-.9L12 2.5Z',
  // a speech bubble
  thankYou: 'M4 4h16a1 1 0 0 1 1 1v11a1 1 0 0 1-1 1h-9l-5 4v-4H4a1 1 0 0 1-1-1V5a1 1 0 0 1 1-1Z',
  // a gift box
  giftPurchase:
    'M3 9h18v4H3V9Zm2 4h14v8H5v-8Zm6-4h2v12h-2V9ZM12 9c-2-4-6-4-6-1.5S10 9 12 9Zm0 0c2-4 6-4 6-1.5S14 9 12 9Z',
};

function icon(path: string): SVGSVGElement {
  const NS = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  const p = document.createElementNS(NS, 'path');
  p.setAttribute('d', path);
  svg.append(p);
  return svg;
}

function renderAlerts(list: readonly OverlayAlert[]): void {
  const seen = new Set<number>();
  for (const a of list) {
    seen.add(a.id);
    if (alertEls.has(a.id)) continue;
    const box = el('div', 'alert');
    box.dataset['kind'] = a.kind;
    const badge = el('div', 'a-icon');
    badge.append(icon(ALERT_ICONS[a.kind]));
    const text = el('div', 'a-text');
    text.append(el('div', 'a-title', a.title), el('div', 'a-line', a.line));
    box.append(badge, text);
    if (restoring) box.style.animation = 'none';
    alertsEl.append(box);
    alertEls.set(a.id, box);
  }
  for (const [id, box] of alertEls) {
    if (!seen.has(id)) {
      box.remove();
      alertEls.delete(id);
    }
  }
}

/**
 * True while a draw is shown as a card: a running draw, and the newest result for its first
 * `revealMs` (one big reveal at a time); every other result belongs in the band.
 */
function revealing(d: OverlayDraw, now: number, state: OverlayState): boolean {
  if (d.stage === 'cancelled') return false;
  if (d.stage !== 'winners') return true;
  const newest = state.draws.find((x) => x.stage === 'winners' || x.stage === 'cancelled');
  return newest === d && (d.resultAt === undefined || now - d.resultAt < state.revealMs);
}

/**
 * The card or band row of `d` in `map`, made and placed in `parent` when new (without its
 * entrance animation on the first frame after a load: that one restores).
 */
function placed<T extends { root: HTMLElement }>(
  map: Map<string, T>,
  d: OverlayDraw,
  make: (d: OverlayDraw) => T,
  parent: HTMLElement,
): T {
  let e = map.get(d.key);
  if (!e) {
    e = make(d);
    map.set(d.key, e);
    parent.append(e.root);
    if (restoring) e.root.style.animation = 'none';
  }
  return e;
}

function apply(state: OverlayState): void {
  current = state;
  skew = state.now - Date.now();
  render();
  restoring = false;
}

function render(): void {
  const state = current;
  const now = Date.now() + skew;
  const inCards = new Set<string>();
  const inBand = new Set<string>();
  state.draws.forEach((d, i) => {
    if (revealing(d, now, state)) {
      inCards.add(d.key);
      const c = placed(cards, d, makeCard, drawsEl);
      renderCard(c, d, state.pending);
      c.root.style.order = String(i);
      c.running = d.stage === 'open' || d.stage === 'closing' || d.stage === 'claim';
      c.root.classList.toggle('running', c.running);
    } else {
      inBand.add(d.key);
      const r = placed(rows, d, makeRow, bandEl);
      renderRow(r, d);
      // newest first from the server: the band lists the oldest on top
      r.root.style.order = String(state.draws.length - i);
    }
  });
  for (const [k, c] of cards) {
    if (!inCards.has(k)) {
      c.root.remove();
      cards.delete(k);
    }
  }
  for (const [k, r] of rows) {
    if (!inBand.has(k)) {
      r.root.remove();
      rows.delete(k);
    }
  }
  if (restoring) {
    // on screen before this load: shown as it stands (no pop, no reveal replayed, before any
    // paint); what arrives later (a new card, a new or replaced winner) animates as usual
    for (const c of cards.values()) {
      for (const li of Array.from(c.winners.children) as HTMLElement[]) {
        li.style.animation = 'none';
        li.style.opacity = '1';
      }
    }
  }
  renderAlerts(state.alerts);
  badgeEl.textContent = state.badge ?? '';
  badgeEl.hidden = !state.badge || state.draws.length > 0;
  fit();
  tick();
}

/** The 1920x1080 stage, scaled to the source's size; whatever would not fit whole is hidden. */
function fit(): void {
  const s = Math.min(innerWidth / 1920, innerHeight / 1080);
  stageEl.style.transform = s === 1 ? '' : `scale(${s})`;
  const hide = (e: HTMLElement, always: boolean) => {
    const box = e.getBoundingClientRect();
    // (layout boxes: the pop animation's scale does not count)
    const top = box.top + (box.height - e.offsetHeight * s) / 2;
    const left = box.left + (box.width - e.offsetWidth * s) / 2;
    const inside =
      top >= -0.5 &&
      left >= -0.5 &&
      top + e.offsetHeight * s <= innerHeight + 0.5 &&
      left + e.offsetWidth * s <= innerWidth + 0.5;
    e.classList.toggle('offscreen', !inside && !always);
  };
  for (const c of cards.values()) hide(c.root, c.running);
  for (const r of rows.values()) hide(r.root, false);
}
addEventListener('resize', fit);

/** Once a second (and each frame): countdowns, bars, and results whose reveal time is over. */
function tick(): void {
  const now = Date.now() + skew;
  let moved = false;
  for (const d of current.draws) {
    const c = cards.get(d.key);
    if (c && d.stage === 'open') {
      setText(c.timer, clockText(d.closesAt - now));
      const span = Math.max(1, d.closesAt - d.openedAt);
      c.fill.style.transform = `scaleX(${Math.min(1, Math.max(0, (d.closesAt - now) / span))})`;
      c.root.classList.toggle('ending', d.closesAt - now < 10_000);
    }
    if (c && !revealing(d, now, current)) moved = true;
  }
  if (moved) render();
}
setInterval(tick, 250);

readEventStream(withKey('/overlay/events'), (name, data) => {
  if (name === 'state') apply(JSON.parse(data) as OverlayState);
});
