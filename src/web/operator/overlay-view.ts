/**
 * The overlay's view model, built BY CONSTRUCTION from safe fields only: the prize's name, counts,
 * times, display names (cleaned by safe-text.ts), the fairness digests, and a same-origin image
 * path. Winners' links, gift ids, e-mails, user ids and tokens are never read here, so nothing the
 * overlay receives can carry them.
 *
 * Contract: `overlayDraw` maps one draw in memory to an OverlayDraw or undefined (not shown);
 * pure and synchronous, O(winners + rerolls), never O(entrants). Does not decide when to send.
 */
import { createHash } from 'node:crypto';
import type { DrawView } from '../../giveaway/engine.js';
import { overlayName, overlayText } from './safe-text.js';

type OverlayStage = 'open' | 'closing' | 'claim' | 'winners' | 'cancelled';

interface OverlayWinner {
  name: string;
  /** false while a claim window waits for this winner's `!claim`. */
  claimed?: boolean;
  /** Came in by a reroll. */
  replacement?: boolean;
}

export interface OverlayDraw {
  /** The draw's record id (a Fourthwall draw id or `lnk_…`; not a secret). */
  key: string;
  kind: 'gift-draw' | 'gift-purchase' | 'link-giveaway';
  stage: OverlayStage;
  prize: string;
  /** Same-origin path of the prize image (`/overlay/prize/…`). */
  image: string;
  gifts: number;
  /** The supporter who paid for gifts (their shop username), when known. */
  gifter?: string;
  /** The entry command with its prefix, e.g. `!enter`. */
  enter: string;
  /** ms since epoch (engine clock). */
  closesAt: number;
  entrants: number;
  /** Newest entrants' display names, newest first. */
  recent: string[];
  /** Frozen entrant list digest (hex), once entries are frozen. */
  digest?: string;
  /** Seed commitment (hex), announced at open. */
  commitment: string;
  /** Revealed seed (hex), once drawn. */
  seed?: string;
  winners: OverlayWinner[];
  /** The latest replacements, oldest first. */
  rerolls: { from: string; to: string }[];
  /** What the winners typed after the draw (only when the overlay shows winner chat). */
  chat: { name: string; text: string }[];
}

export interface OverlayState {
  /** Engine clock at the time of the frame (ms), so the page can correct its countdown. */
  now: number;
  badge?: string;
  draws: OverlayDraw[];
}

export interface OverlayInputs {
  enter: string;
  winnerChat?(drawId: string): readonly { name: string; text: string }[];
}

/** Names shown for the newest entrants of an open draw. */
const RECENT_NAMES = 8;

/** The display names of the newest `n` entrants, newest first (the table's last rows). */
function recentNames(entrants: DrawView['entrants'], n: number): string[] {
  const out: string[] = [];
  for (let row = entrants.size - 1; row >= 0 && out.length < n; row--) out.push(overlayName(entrants.displayNameAt(row), entrants.loginAt(row)));
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
  const r = v.record;
  const nameOf = (userId: string, login: string) => {
    const w = r.winners.find((x) => x.userId === userId);
    return overlayName(w?.displayName ?? v.entrants.get(userId)?.displayName ?? login, login);
  };
  const showWinners = stage === 'claim' || stage === 'winners';
  const replacements = new Set((r.rerolls ?? []).map((x) => x.newUserId).filter((x): x is string => !!x));
  const draw: OverlayDraw = {
    key: /^[A-Za-z0-9_-]{1,80}$/.test(r.id) ? r.id : `d${createHash('sha256').update(r.id).digest('hex').slice(0, 16)}`,
    kind: r.kind,
    stage,
    prize: overlayText(r.offer.name, 80),
    image: `/overlay/prize/${encodeURIComponent(r.offer.id)}`,
    gifts: r.gifts,
    enter: overlayText(inputs.enter, 40),
    closesAt: Date.parse(r.closesAt),
    entrants: Math.max(r.entrants, v.entrants.size),
    recent: stage === 'open' ? recentNames(v.entrants, RECENT_NAMES) : [],
    commitment: /^[0-9a-f]{64}$/.test(r.fairness.commitment) ? r.fairness.commitment : '',
    winners: showWinners
      ? r.winners.map((w) => ({
          name: overlayName(w.displayName, w.login),
          ...(w.claimed !== undefined ? { claimed: w.claimed } : {}),
          ...(replacements.has(w.userId) ? { replacement: true } : {}),
        }))
      : [],
    rerolls: showWinners
      ? (r.rerolls ?? []).slice(-3).map((x) => ({
          from: nameOf(x.replacedUserId, x.replacedLogin),
          to: x.newUserId ? nameOf(x.newUserId, '') : '',
        }))
      : [],
    chat: showWinners && inputs.winnerChat ? inputs.winnerChat(r.id).slice(-4) : [],
  };
  if (r.kind !== 'link-giveaway' && r.supporter?.username) draw.gifter = overlayName(r.supporter.username, '');
  const digest = r.fairness.entrantsDigest;
  if (digest && /^[0-9a-f]{64}$/.test(digest)) draw.digest = digest;
  const seed = r.fairness.seed;
  if (showWinners && seed && /^[0-9a-f]{64}$/.test(seed)) draw.seed = seed;
  return draw;
}
