/**
 * The overlay's view model, built BY CONSTRUCTION from safe fields only: the prize's name, counts,
 * times, display names (cleaned by safe-text.ts), the overlay's own wording, and a same-origin
 * image path. Winners' links, gift ids, e-mails, user ids, tokens and every fairness hash (the
 * commitment, the list digest, the seed: the verify page and one chat line carry them) are never
 * read here, so nothing the overlay receives can carry them; even the draw's key is an opaque
 * short name (`overlayKey`), not its id. Supporter alerts (`overlayAlert`) take the shop's safe
 * alert view (shop/alerts.ts: the chosen username or "someone", products, the amount only when
 * enabled) and never an e-mail, an address or an order id.
 *
 * Every word the overlay shows comes from OVERLAY_TEXT (English defaults, each overridable by
 * `overlay.text` in the settings file: the overlay is localisable), rendered here, so the page
 * only lays text out. The page script (pages/overlay.ts) is typed against these interfaces.
 *
 * Contract: `overlayDraw` maps one draw in memory to an OverlayDraw or undefined (not shown);
 * pure and synchronous, O(winners + rerolls), never O(entrants). Does not decide when to send.
 */
import { createHash } from 'node:crypto';
import type { DrawView } from '../../giveaway/engine.js';
import { render } from '../../giveaway/messages.js';
import type { AlertView } from '../../shop/alerts.js';
import { formatMoney } from '../../shop/alerts.js';
import { overlayName, overlayText } from './safe-text.js';

/** The overlay's wording (placeholders in braces). */
export const OVERLAY_TEXT = {
  /** The call to action of an open draw. `{enter}` */
  enter: 'Type {enter} to win!',
  /** How many win: `{count}`. */
  winnersMany: '{count} winners',
  winnersOne: '1 winner',
  /** Who paid for the gifts. `{gifter}` */
  giftedBy: 'gifted by {gifter}',
  /** The live count. `{count}` */
  enteredMany: '{count} entered',
  enteredOne: '1 entered',
  enteredNone: 'Be the first!',
  /** The newest entrants under the count. `{names}` */
  joined: 'Just joined: {names}',
  /** Entries closed, the winners being drawn. */
  closing: 'Entries closed · drawing the winners',
  /** The result's heading. */
  winnersTitle: 'Winners',
  winnerTitle: 'Winner',
  /** Winners asked to claim. `{claim}` */
  claim: 'Winners: type {claim} to claim',
  /** A claim not made yet (after the name). */
  pending: 'claim pending',
  /** Nobody entered a giveaway. */
  nobody: 'Nobody entered: no winner this time',
  cancelled: 'Giveaway cancelled',
  /** A winner replaced. `{winner} {old}` */
  replaced: '{winner} replaces {old}',
  /** Supporter alerts: the heading per kind, and the line (`{user} {products} {amount} {tier}`). */
  alertOrderTitle: 'New order',
  alertOrder: '{user} bought {products}{amount}',
  alertDonationTitle: 'Donation',
  alertDonation: '{user} donated{amount}',
  alertSubscriptionTitle: 'New member',
  alertSubscription: '{user} became a member{amount}',
  alertThankYouTitle: 'Thank you',
  alertThankYou: 'A thank-you for {user}',
  alertGiftPurchaseTitle: 'Gifted',
  alertGiftPurchase: '{user} gifted {products}{amount}',
} as const;

export type OverlayText = { [K in keyof typeof OVERLAY_TEXT]: string };

/**
 * The defaults with the settings' `overlay.text` over them, and the keys that are not overlay
 * texts (said at start; they change nothing).
 */
export function overlayWording(overrides: Readonly<Record<string, string>> = {}): {
  text: OverlayText;
  unknown: string[];
} {
  const out: Record<string, string> = { ...OVERLAY_TEXT };
  const unknown: string[] = [];
  for (const [k, v] of Object.entries(overrides)) {
    if (Object.hasOwn(OVERLAY_TEXT, k)) out[k] = v;
    else unknown.push(k);
  }
  return { text: out as OverlayText, unknown };
}

type OverlayStage = 'open' | 'closing' | 'claim' | 'winners' | 'cancelled';

interface OverlayWinner {
  name: string;
  /** false while a claim window waits for this winner's `!claim`. */
  claimed?: boolean;
  /** Came in by a reroll. */
  replacement?: boolean;
}

export interface OverlayDraw {
  /** An opaque name for the draw (`overlayKey`): stable, short, never its id. */
  key: string;
  stage: OverlayStage;
  prize: string;
  /** Same-origin path of the prize image (`/overlay/prize/<image key>`). */
  image: string;
  /** `3 winners · gifted by generous_fan`. */
  subtitle: string;
  /** What viewers do or see now: `Type !enter to win!`, `Entries closed · drawing the winners`, `Winners`, ... */
  headline: string;
  /** Entrants so far, and in words: `20 entered` (open and closing draws; '' otherwise). */
  entrants: number;
  count: string;
  /** Newest entrants, `Just joined: ana, ben, cai` (open draws; empty otherwise). */
  joined: string;
  /** ms since epoch (engine clock). */
  openedAt: number;
  closesAt: number;
  winners: OverlayWinner[];
  /** The latest replacement in words (`ana replaces ben`). */
  note?: string;
  /** What the winners typed after the draw (only when the overlay shows winner chat). */
  chat: { name: string; text: string }[];
  /** When the result (winners or cancel) was announced, engine clock ms (results only). */
  resultAt?: number;
}

export interface OverlayAlert {
  /** Opaque and increasing (the page animates each new one once). */
  id: number;
  kind: AlertView['kind'];
  title: string;
  line: string;
  /** Engine clock ms: shown from `at` until `until`. */
  at: number;
  until: number;
}

export interface OverlayState {
  /** Engine clock at the time of the frame (ms), so the page can correct its countdown. */
  now: number;
  badge?: string;
  draws: OverlayDraw[];
  /** Supporter alerts on screen now (oldest first; empty when `overlay.alerts` is off). */
  alerts: OverlayAlert[];
  /** How long a result is revealed big, in its card, before it joins the results band (ms). */
  revealMs: number;
  /** The claim pending marker's words (the page adds it to a winner not claimed yet). */
  pending: string;
}

export interface OverlayInputs {
  /** The entry command with its prefix, e.g. `!enter`; the claim command, e.g. `!claim`. */
  enter: string;
  claim: string;
  text: OverlayText;
  winnerChat?(drawId: string): readonly { name: string; text: string }[];
  /** When the draw's result was announced (results only). */
  resultAt?: number;
}

/** Names shown as just joined. */
const JOINED_NAMES = 3;

/** The opaque key of draw `id` (or of a product's image): 12 characters, never a run of hex. */
export function overlayKey(id: string, kind: 'd' | 'p' = 'd'): string {
  return kind + createHash('sha256').update(`giftdrop-overlay:${id}`).digest('base64url').slice(0, 11);
}

/** `a`, `a and b`, `a, b and c`. */
function names(list: readonly string[]): string {
  if (list.length <= 1) return list.join('');
  return `${list.slice(0, -1).join(', ')} and ${list[list.length - 1]}`;
}

/** The display names of the newest `n` entrants, newest first (the table's last rows). */
function recentNames(entrants: DrawView['entrants'], n: number): string[] {
  const out: string[] = [];
  for (let row = entrants.size - 1; row >= 0 && out.length < n; row--)
    out.push(overlayName(entrants.displayNameAt(row), entrants.loginAt(row)));
  return out;
}

function stageOf(v: DrawView): OverlayStage | undefined {
  const r = v.record;
  switch (v.phase) {
    case 'open':
      return 'open';
    case 'picking':
      return 'closing';
    case 'claim':
      return 'claim';
    case 'finalizing':
      // winners are shown once the shop confirmed them (or during a claim window, already shown)
      return r.claim && r.winners.length ? 'winners' : 'closing';
    case 'done':
      if (r.status === 'finished') return 'winners';
      if (r.status === 'cancelled') return 'cancelled';
      return undefined;
  }
}

/** One draw as the overlay shows it (undefined: not shown, e.g. a failed draw). */
export function overlayDraw(v: DrawView, inputs: OverlayInputs): OverlayDraw | undefined {
  const stage = stageOf(v);
  if (!stage) return undefined;
  const t = inputs.text;
  const r = v.record;
  const nameOf = (userId: string, login: string) => {
    const w = r.winners.find((x) => x.userId === userId);
    return overlayName(w?.displayName ?? v.entrants.get(userId)?.displayName ?? login, login);
  };
  const showWinners = stage === 'claim' || stage === 'winners';
  const replacements = new Set((r.rerolls ?? []).map((x) => x.newUserId).filter((x): x is string => !!x));
  const entrants = Math.max(r.entrants, v.entrants.size);
  const gifter =
    r.kind !== 'link-giveaway' && r.supporter?.username ? overlayName(r.supporter.username, '') : undefined;
  const subtitle = [
    r.gifts === 1 ? t.winnersOne : render(t.winnersMany, { count: r.gifts }),
    gifter ? render(t.giftedBy, { gifter }) : '',
  ]
    .filter(Boolean)
    .join(' · ');
  const headline =
    stage === 'open'
      ? render(t.enter, { enter: overlayText(inputs.enter, 40) })
      : stage === 'closing'
        ? t.closing
        : stage === 'claim'
          ? render(t.claim, { claim: overlayText(inputs.claim, 40) })
          : stage === 'cancelled'
            ? t.cancelled
            : r.winners.length === 0
              ? t.nobody
              : r.winners.length === 1
                ? t.winnerTitle
                : t.winnersTitle;
  const count =
    entrants === 0 ? t.enteredNone : entrants === 1 ? t.enteredOne : render(t.enteredMany, { count: entrants });
  const recent = stage === 'open' ? recentNames(v.entrants, JOINED_NAMES) : [];
  const draw: OverlayDraw = {
    key: overlayKey(r.id),
    stage,
    prize: overlayText(r.offer.name, 80),
    image: `/overlay/prize/${overlayKey(r.offer.id, 'p')}`,
    subtitle,
    headline,
    entrants,
    count: stage === 'open' || stage === 'closing' ? count : '',
    joined: recent.length ? render(t.joined, { names: recent.join(', ') }) : '',
    openedAt: Date.parse(r.openedAt),
    closesAt: Date.parse(r.closesAt),
    winners: showWinners
      ? r.winners.map((w) => ({
          name: overlayName(w.displayName, w.login),
          ...(w.claimed !== undefined ? { claimed: w.claimed } : {}),
          ...(replacements.has(w.userId) ? { replacement: true } : {}),
        }))
      : [],
    chat: showWinners && inputs.winnerChat ? inputs.winnerChat(r.id).slice(-4) : [],
  };
  const last = showWinners ? (r.rerolls ?? []).at(-1) : undefined;
  if (last?.newUserId)
    draw.note = render(t.replaced, {
      winner: nameOf(last.newUserId, ''),
      old: nameOf(last.replacedUserId, last.replacedLogin),
    });
  if (inputs.resultAt !== undefined && (stage === 'winners' || stage === 'cancelled')) draw.resultAt = inputs.resultAt;
  return draw;
}

const ALERT_KEYS: Record<AlertView['kind'], [keyof OverlayText, keyof OverlayText]> = {
  order: ['alertOrderTitle', 'alertOrder'],
  donation: ['alertDonationTitle', 'alertDonation'],
  subscription: ['alertSubscriptionTitle', 'alertSubscription'],
  thankYou: ['alertThankYouTitle', 'alertThankYou'],
  giftPurchase: ['alertGiftPurchaseTitle', 'alertGiftPurchase'],
};

/** `a`, `a and b`, `a, b and 2 more`. */
function productList(products: readonly string[]): string {
  const shown = products.slice(0, 3).map((p) => overlayText(p, 60));
  const more = products.length - shown.length;
  return more > 0 ? `${shown.join(', ')} and ${more} more` : names(shown);
}

/** A supporter alert as the overlay shows it (see the module contract). */
export function overlayAlert(a: AlertView, id: number, at: number, until: number, text: OverlayText): OverlayAlert {
  const [title, line] = ALERT_KEYS[a.kind];
  return {
    id,
    kind: a.kind,
    title: render(text[title], {}),
    line: render(text[line], {
      user: overlayName(a.user, '') || 'someone',
      products: productList(a.products) || 'something',
      amount: a.amount ? ` · ${overlayText(formatMoney(a.amount), 24)}` : '',
      tier: a.tier ? overlayText(a.tier, 16) : '',
    }),
    at,
    until,
  };
}
