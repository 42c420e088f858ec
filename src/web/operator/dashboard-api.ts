/**
 * The dashboard's JSON API (`/dashboard/api/...`), behind the dashboard token (index.ts checks it).
 * Reads: state (draws in memory, winners with their links, claim status; `reach`: whether the claim
 * page and the whispers are on and what turns each on, in delivery/winner-reach.ts's words), entrants of a draw
 * (search, count, eligible by the chat rules or why not; when account rules are in force, their
 * plain-text description, checked with Twitch only at the close: no Twitch call from here),
 * products (picker: image path, stock), streaming status, history (filter, CSV/JSON download,
 * verify status per draw), the bot's chat lines and the winners' caught lines. Actions (POST):
 * start, end, cancel, reroll, retry, stream live/offline; the prizes waiting (src/delivery) and a
 * reminder for one of them.
 *
 * Contract: every action calls the same GiveawayEngine / StreamingService method the chat
 * command calls, acting as the broadcaster, and answers `{ ok, message }` with the engine's own
 * answer. No GET changes anything. Bodies are JSON up to MAX_BODY bytes. Does not check the token
 * (the router does) or render HTML.
 */
import { plural } from '../../shared/plural.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describeAccountRules, setAsideReasonText, type AccountRules } from '../../giveaway/account-rules.js';
import type { RerollRefusal } from '../../giveaway/draw-machine.js';
import type { DrawView } from '../../giveaway/engine.js';
import type { ActionResult } from '../../giveaway/flows/link-giveaway.js';
import { exclusionOf } from '../../giveaway/eligibility.js';
import { awaitingLinks, RECENT_LIMIT } from '../../giveaway/registry.js';
import type { Delivery, DrawRecord, SetAsideReason, StreamingInfo } from '../../giveaway/model.js';
import { prizeState, type PrizeState } from '../../delivery/state.js';
import type { ShopPort } from '../../giveaway/ports.js';
import type { GiveawayEngine } from '../../giveaway/engine.js';
import type { GiveawaySettings } from '../../giveaway/settings.js';
import type { Logger } from '../../logging/index.js';
import { noRoles, type ChatMessage } from '../../shared/chat.js';
import type { Clock } from '../../shared/clock.js';
import { toCsv, toExport } from '../../storage/index.js';
import type { StreamingService } from '../../streaming/service.js';
import type { DrawExport } from '../../storage/index.js';
import type { BitsHealth } from '../../twitch/channel-points/bits.js';
import type { ChannelPointsHealth } from '../../twitch/channel-points/entries.js';
import type { EventSubHealth } from '../../twitch/eventsub/client.js';
import type { BotLine, ChatLog, WinnerLine } from './chat-log.js';
import type { DeliveryTracker, PrizeView } from '../../delivery/tracker.js';
import { overlayKey } from './overlay-view.js';
import type { Reach } from '../../delivery/winner-reach.js';

const MAX_BODY = 16 * 1024;
const ENTRANTS_SHOWN = 200;
const HISTORY_LIMIT = 200;

export interface DashboardApiDeps {
  engine: GiveawayEngine;
  streaming: StreamingService;
  shop: Pick<ShopPort, 'listProducts'>;
  repo: {
    listDraws(o?: { limit?: number }): Promise<DrawRecord[]>;
    getDraw(id: string): Promise<DrawRecord | undefined>;
    recentWinnerIds(sinceMs: number): Promise<Set<string>>;
    /** A winner's delivery state as the delivery tracker keeps it (the claim page reads the same). */
    deliveryOf(drawId: string, userId: string): Delivery | undefined;
  };
  chat: {
    readonly channelLogin: string;
    readonly botLogin: string;
    readonly transport?: string;
    channelId(): string | undefined;
    health(): { chat: string; reason?: string };
  };
  chatLog: ChatLog;
  settings: GiveawaySettings;
  clock: Clock;
  logger: Logger;
  mode: 'sandbox' | 'live';
  /** The account rules the close applies (only when the bot has the Twitch API and a rule is set). */
  accountRules?: AccountRules;
  /** Prizes not redeemed yet, and a reminder for one of them (src/delivery). */
  delivery?: Pick<DeliveryTracker, 'waiting' | 'remind'>;
  /** One line per problem the streamer must fix (e.g. credentials refused, app/credential-problems.ts); in `state.problems`. */
  problems?: () => readonly string[];
  /** Twitch beyond chat (app/twitch-events.ts): the EventSub state and its features, merged into the state like chat's. */
  twitchEvents?: () => TwitchEventsState;
  /** The claim page and the whispers: on, off (and what turns each on), or not known yet; in `state.reach`. */
  reach?: () => readonly Reach[];
}

// ---------------------------------------------------------------------------------------------
// The answers, as the page script (pages/dashboard.ts) reads them: it is typed against these, so a
// field renamed here fails `npm run typecheck` there.
// ---------------------------------------------------------------------------------------------

/** What the dashboard may do for one winner: the engine's own answer (giveaway/reroll.ts). */
export interface DashboardWinner {
  login: string;
  displayName: string;
  claimed: boolean | null;
  /** The winner's link (a secret, for the streamer only). */
  link: string | null;
  accountCheck: 'checked' | 'unchecked' | null;
  /** Why a reroll would be refused (null: Reroll is offered). */
  rerollRefusal: RerollRefusal | null;
  /** That refusal in the dashboard's words, when the prize's state does not say it already. */
  note: string | null;
  /** The prize's state in the claim page's words (delivery/state.ts prizeState); null: not tracked. */
  prize: PrizeState | null;
}

/** A pick the account rules set aside, with the reason in the chat line's words (account-rules.ts). */
interface DashboardSetAside {
  login: string;
  reason: SetAsideReason;
  why: string;
  /** When Twitch answered (ISO). */
  at: string;
  /** That answer was looked up while entries were open (before the freeze at `frozenAt`). */
  beforeFreeze: boolean;
}

export interface DashboardDraw {
  id: string;
  kind: DrawRecord['kind'];
  phase: DrawView['phase'];
  status: DrawRecord['status'];
  active: boolean;
  prize: string;
  gifts: number;
  openedAt: string;
  closesAt: string;
  closedAt: string | null;
  entrants: number;
  claimDeadline: string | null;
  winners: DashboardWinner[];
  rerolls: { replaced: string; reason: string; at: string }[];
  setAside: DashboardSetAside[];
  failure: string | null;
  frozenAt: string | null;
}

/** The draw actions that apply now: the ones the engine would accept (giveaway/draw-machine.ts). */
export interface DashboardActions {
  /** How many draws take entries (End closes them all). */
  end: number;
  /** A link giveaway is open or in its claim window. */
  cancel: boolean;
  /** A giveaway's winners wait for their links (`!giveaway retry` would deliver them). */
  retry: boolean;
  /** No link giveaway runs (one at a time): the product picker and Start apply. */
  start: boolean;
  /** The link giveaway that runs, when one does. */
  running: string | null;
}

/** The EventSub connection and the channel points / bits entries, when on (app/twitch-events.ts). */
export interface TwitchEventsState {
  eventsub?: EventSubHealth['state'];
  eventsubReason?: string;
  channelPoints?: ChannelPointsHealth;
  bits?: BitsHealth;
}

export interface DashboardState extends TwitchEventsState {
  now: number;
  mode: 'sandbox' | 'live';
  chat: string;
  /** How chat is read and said: `irc` or `eventsub`. */
  chatTransport?: string;
  chatReason?: string;
  problems?: string[];
  /** Whether the claim page and the whispers are on, and what turns each on (delivery/winner-reach.ts). */
  reach?: Reach[];
  channel: string;
  draws: DashboardDraw[];
  actions: DashboardActions;
}

interface DashboardEntrant {
  login: string;
  displayName: string;
  weight: number;
  enteredAt: number;
  eligible: boolean;
  why: string | null;
}

export interface EntrantsAnswer {
  total: number;
  eligible: number;
  matched: number;
  entrants: DashboardEntrant[];
  /** With account rules: `eligible` is the chat rules' verdict, these are checked at the close. */
  accountRules?: { rules: string; checked: string };
}

export interface ProductsAnswer {
  products: { id: string; name: string; slug: string; stock: number | 'unlimited' | null; image: string | null }[];
}

export interface StreamAnswer {
  streaming: StreamingInfo;
}

export type HistoryRow = DrawExport & { verify: string; failure?: { reason: string; at: string } };

export interface HistoryAnswer {
  draws: HistoryRow[];
  linksWaiting: boolean;
}

export interface PrizesAnswer {
  prizes: PrizeView[];
}

export interface TranscriptAnswer {
  bot: readonly BotLine[];
  winners: WinnerLine[];
}

/** Every action's answer: the engine's own (`ok`, and what to show). */
export interface ActionAnswer {
  ok: boolean;
  message: string;
  id?: string;
}

type Answer =
  | DashboardState
  | EntrantsAnswer
  | ProductsAnswer
  | StreamAnswer
  | HistoryAnswer
  | PrizesAnswer
  | TranscriptAnswer
  | ActionAnswer;
type Handler = (q: URLSearchParams, body: Record<string, unknown>) => Promise<Answer> | Answer;

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new Error('body too large');
    chunks.push(chunk);
  }
  if (!size) return {};
  const json: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  if (!json || typeof json !== 'object' || Array.isArray(json)) throw new Error('body must be a JSON object');
  return json as Record<string, unknown>;
}

const prizeOf = (d: Delivery | undefined): PrizeState | null => (d ? prizeState(d) : null);

/** A reroll refusal the prize's state does not already say, in the dashboard's words. */
function refusalNote(refusal: RerollRefusal | undefined): string | null {
  return refusal === 'gift-out' ? 'gift link already out: it stays theirs (a gift cannot be issued again)' : null;
}

/** The engine's answer as the action's answer: `done(id)` says a success in words. */
function answer(res: ActionResult, done: (id: string | undefined) => string): ActionAnswer {
  return res.ok
    ? { ok: true, ...(res.id ? { id: res.id } : {}), message: done(res.id) }
    : { ok: false, message: res.message };
}

/** The account rules a draw was closed under (its record's), else the ones in force. */
function accountRulesOf(
  r: DrawRecord,
  current: AccountRules | undefined,
): Pick<AccountRules, 'minFollowDays' | 'minAccountDays'> {
  const stored = r.rules?.['account'] as Partial<AccountRules> | undefined;
  return {
    minFollowDays: stored?.minFollowDays ?? current?.minFollowDays ?? 0,
    minAccountDays: stored?.minAccountDays ?? current?.minAccountDays ?? 0,
  };
}
const str = (v: unknown) => (typeof v === 'string' ? v : '');
const int = (v: unknown) =>
  typeof v === 'number' && Number.isInteger(v) ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined;

export class DashboardApi {
  private readonly gets: Record<string, Handler>;
  private readonly posts: Record<string, Handler>;
  private readonly verified = new Map<string, string>();

  constructor(private readonly d: DashboardApiDeps) {
    this.gets = {
      state: () => this.state(),
      entrants: (q) => this.entrants(q.get('draw') ?? '', q.get('q') ?? ''),
      products: async (): Promise<ProductsAnswer> => ({
        products: (await d.shop.listProducts()).map((p) => ({
          id: p.id,
          name: p.name,
          slug: p.slug,
          stock: p.stock ?? null,
          image: p.imageUrl ? `/overlay/prize/${overlayKey(p.id, 'p')}` : null,
        })),
      }),
      stream: async (): Promise<StreamAnswer> => ({ streaming: await d.streaming.status() }),
      history: (q) => this.history(q),
      prizes: async (): Promise<PrizesAnswer> => ({ prizes: (await d.delivery?.waiting()) ?? [] }),
      transcript: (): TranscriptAnswer => ({
        bot: d.chatLog.botLines().slice(-100),
        winners: d.chatLog.winnerLines().slice(0, 100),
      }),
    };
    this.posts = {
      start: async (_q, b) =>
        answer(
          await d.engine.startLinkGiveaway(this.actor(), str(b.product), int(b.winners), int(b.seconds)),
          (id) => `Link giveaway ${id} started.`,
        ),
      end: () => {
        const n = d.engine.endNow();
        return n
          ? { ok: true, message: `Closed ${plural(n, 'draw')}; drawing the winners.` }
          : { ok: false, message: 'No giveaway is open.' };
      },
      cancel: async () => answer(await d.engine.cancel(), () => 'Link giveaway cancelled.'),
      reroll: async (_q, b) =>
        answer(
          await d.engine.reroll(str(b.login), this.actor(), str(b.drawId) || undefined),
          () => `Rerolled ${str(b.login)}.`,
        ),
      remind: async (_q, b) => {
        const prize = (await d.delivery?.waiting())?.find(
          (p) => p.drawId === str(b.drawId) && p.userId === str(b.userId),
        );
        if (!prize) return { ok: false, message: 'That prize is not waiting (redeemed already, or unknown).' };
        if (prize.delivery.remindedAt) return { ok: false, message: `@${prize.login} was reminded already.` };
        const sent = await d.delivery!.remind([prize]);
        return sent
          ? { ok: true, message: `Reminder for @${prize.login} sent.` }
          : {
              ok: false,
              message:
                'No way to remind: whispers are off and there is no claim page (GIFTDROP_PUBLIC_URL). Copy the link and send it yourself.',
            };
      },
      retry: async () => answer(await d.engine.retryLinks(), () => 'Links delivered.'),
      stream: async (_q, b) => {
        try {
          const s =
            str(b.action) === 'live'
              ? await d.streaming.goLive()
              : str(b.action) === 'offline'
                ? await d.streaming.goOffline()
                : undefined;
          return s
            ? { ok: true, message: `Fourthwall streaming status: ${s.status}.` }
            : { ok: false, message: 'action must be live or offline' };
        } catch (err) {
          return { ok: false, message: `Could not update Fourthwall streaming status: ${(err as Error).message}` };
        }
      },
    };
  }

  /** Handles `/dashboard/api/<name>` (already authorised); false when there is no such endpoint. */
  async handle(req: IncomingMessage, res: ServerResponse, name: string, query: URLSearchParams): Promise<boolean> {
    if (req.method === 'GET' || req.method === 'HEAD') {
      if (name === 'history.csv' || name === 'history.json') {
        await this.download(res, name.endsWith('csv') ? 'csv' : 'json', query);
        return true;
      }
      const h = Object.hasOwn(this.gets, name) ? this.gets[name] : undefined;
      if (!h) return false;
      sendJson(res, 200, await h(query, {}));
      return true;
    }
    const h = Object.hasOwn(this.posts, name) ? this.posts[name] : undefined;
    if (!h) return false;
    let body: Record<string, unknown>;
    try {
      body = await readJson(req);
    } catch (err) {
      sendJson(res, 400, { ok: false, message: (err as Error).message });
      return true;
    }
    const out = (await h(query, body)) as ActionAnswer;
    this.d.logger.info({ action: name, ok: out.ok }, 'dashboard action');
    sendJson(res, 200, out);
    return true;
  }

  /** The operator as the engine sees them: the broadcaster. */
  private actor(): ChatMessage {
    const now = this.d.clock.now();
    return {
      id: `dashboard-${now}`,
      channel: this.d.chat.channelLogin,
      userId: this.d.chat.channelId() ?? 'dashboard',
      login: this.d.chat.channelLogin,
      displayName: this.d.chat.channelLogin,
      text: '',
      roles: { ...noRoles, broadcaster: true },
      bits: 0,
      action: false,
      sentAt: now,
      self: false,
    };
  }

  private async state(): Promise<DashboardState> {
    const views = this.d.engine.drawViews();
    const draws = views.map((v): DashboardDraw => {
      const r = v.record;
      const rules = accountRulesOf(r, this.d.accountRules);
      const frozenAt = r.fairness.frozenAt ?? null;
      return {
        id: r.id,
        kind: r.kind,
        phase: v.phase,
        status: r.status,
        active: v.active,
        prize: r.offer.name,
        gifts: r.gifts,
        openedAt: r.openedAt,
        closesAt: r.closesAt,
        closedAt: r.closedAt ?? null,
        entrants: Math.max(r.entrants, v.entrants.size),
        claimDeadline: r.claim?.deadline ?? null,
        winners: r.winners.map((w) => ({
          login: w.login,
          displayName: w.displayName,
          claimed: w.claimed ?? null,
          link: w.redeemUrl ?? null,
          accountCheck: w.accountCheck?.result ?? null,
          // The engine's own answer (giveaway/reroll.ts): the page offers Reroll only where it is accepted.
          rerollRefusal: this.d.engine.rerollRefusal(r.id, w.login) ?? null,
          note: refusalNote(this.d.engine.rerollRefusal(r.id, w.login)),
          // The prize's state in the claim page's words (delivery/state.ts prizeState); null: not tracked.
          prize: prizeOf(this.d.repo.deliveryOf(r.id, w.userId) ?? w.delivery),
        })),
        rerolls: (r.rerolls ?? []).map((x) => ({ replaced: x.replacedLogin, reason: x.reason, at: x.at })),
        setAside: (r.setAside ?? []).map((a) => ({
          login: a.login,
          reason: a.reason,
          why: setAsideReasonText(a.reason, rules),
          at: a.at,
          beforeFreeze: !!frozenAt && Date.parse(a.at) < Date.parse(frozenAt),
        })),
        failure: r.failure?.reason ?? null,
        frozenAt,
      };
    });
    const chat = this.d.chat.health();
    const problems = this.d.problems?.() ?? [];
    return {
      now: this.d.clock.now(),
      mode: this.d.mode,
      chat: chat.chat,
      ...(chat.reason ? { chatReason: chat.reason } : {}),
      ...(this.d.chat.transport ? { chatTransport: this.d.chat.transport } : {}),
      ...(problems.length ? { problems: [...problems] } : {}),
      ...(this.d.reach ? { reach: [...this.d.reach()] } : {}),
      ...this.d.twitchEvents?.(),
      channel: this.d.chat.channelLogin,
      draws,
      actions: await this.actions(draws),
    };
  }

  /**
   * The draw actions that apply (the engine refuses the others): End while a draw takes entries,
   * Cancel while a link giveaway is open or in its claim window, Retry while a giveaway's winners
   * wait for their links (in memory, or among the draws `!giveaway retry` looks at), Start while
   * no link giveaway runs.
   */
  private async actions(draws: readonly DashboardDraw[]): Promise<DashboardActions> {
    const active = draws.filter((d) => d.active);
    const running = active.find((d) => d.kind === 'link-giveaway');
    const waiting = draws.some(
      (d) => d.status === 'failed' && d.kind !== 'gift-draw' && d.winners.length > 0 && d.winners.some((w) => !w.link),
    );
    return {
      end: active.filter((d) => d.phase === 'open').length,
      cancel: active.some((d) => d.kind === 'link-giveaway' && (d.phase === 'open' || d.phase === 'claim')),
      retry: waiting || (await this.d.repo.listDraws({ limit: RECENT_LIMIT })).some(awaitingLinks),
      start: !running,
      running: running?.prize ?? null,
    };
  }

  private async entrants(drawId: string, search: string): Promise<EntrantsAnswer> {
    const v = this.d.engine.drawViews().find((x) => x.record.id === drawId);
    if (!v) return { total: 0, eligible: 0, matched: 0, entrants: [] };
    const s = this.d.settings.eligibility;
    const recent =
      s.winnerCooldownHours > 0
        ? await this.d.repo.recentWinnerIds(this.d.clock.now() - s.winnerCooldownHours * 3_600_000)
        : new Set<string>();
    const id = {
      channelLogin: this.d.chat.channelLogin,
      botLogin: this.d.chat.botLogin,
      ...(this.d.chat.channelId() ? { channelId: this.d.chat.channelId()! } : {}),
    };
    const needle = search.trim().toLowerCase().replace(/^@/, '');
    const out: DashboardEntrant[] = [];
    let matched = 0;
    let eligible = 0;
    for (const e of v.entrants.values()) {
      const why = exclusionOf(e, s, id, recent);
      if (!why) eligible += 1;
      if (needle && !e.login.includes(needle) && !e.displayName.toLowerCase().includes(needle)) continue;
      matched += 1;
      if (out.length < ENTRANTS_SHOWN)
        out.push({
          login: e.login,
          displayName: e.displayName,
          weight: e.weight,
          enteredAt: e.enteredAt,
          eligible: !why,
          why: why ?? null,
        });
    }
    const account = this.d.accountRules && describeAccountRules(this.d.accountRules);
    return {
      total: v.entrants.size,
      eligible,
      matched,
      entrants: out,
      // `eligible` is the chat rules' verdict; these are checked with Twitch when the draw closes.
      ...(account
        ? { accountRules: { rules: account, checked: 'with Twitch for the picks when the draw closes' } }
        : {}),
    };
  }

  /**
   * The stored draws, each draw the engine still holds told as the engine has it now (status,
   * entrants, winners, rerolls: the source "Open draws" and "Recent winners" show), so the History never
   * says "drawing" for a draw whose winners are listed while its save is on the way.
   */
  private async current(): Promise<{ record: DrawRecord; saving: boolean }[]> {
    const live = new Map(this.d.engine.drawViews().map((v) => [v.record.id, v]));
    return (await this.d.repo.listDraws({ limit: HISTORY_LIMIT })).map((stored) => {
      const v = live.get(stored.id);
      if (!v) return { record: stored, saving: false };
      const m = v.record;
      const delivery = new Map(stored.winners.map((w) => [w.userId, w.delivery]));
      const winners = m.winners.map((w) => ({
        ...w,
        ...(delivery.get(w.userId) ? { delivery: delivery.get(w.userId)! } : {}),
      }));
      const entrants = Math.max(stored.entrants, m.entrants, v.entrants.size);
      const record: DrawRecord = {
        ...stored,
        status: m.status,
        entrants,
        winners,
        fairness: m.fairness,
        ...(m.closedAt ? { closedAt: m.closedAt } : {}),
        ...(m.rerolls ? { rerolls: m.rerolls } : {}),
        ...(m.setAside ? { setAside: m.setAside } : {}),
      };
      return { record, saving: m.status !== stored.status };
    });
  }

  private async filtered(q: URLSearchParams): Promise<{ record: DrawRecord; saving: boolean }[]> {
    const text = (q.get('q') ?? '').trim().toLowerCase();
    const status = q.get('status') ?? '';
    const kind = q.get('kind') ?? '';
    const all = await this.current();
    return all.filter(
      ({ record: r }) =>
        (!status || r.status === status) &&
        (!kind || r.kind === kind) &&
        (!text ||
          r.id.toLowerCase().includes(text) ||
          r.offer.name.toLowerCase().includes(text) ||
          r.winners.some((w) => w.login.includes(text))),
    );
  }

  private async history(q: URLSearchParams): Promise<HistoryAnswer> {
    const records = await this.filtered(q);
    const rows: HistoryRow[] = [];
    // A draw whose save is on the way is checked once it is on disk (the check reads the stored record).
    for (const { record: r, saving } of records)
      rows.push({ ...toExport(r), verify: saving ? 'pending' : await this.verifyStatus(r) });
    // Whether "Retry links" applies, over the draws `!giveaway retry` looks at (not the filter's).
    const linksWaiting = (await this.d.repo.listDraws({ limit: RECENT_LIMIT })).some(awaitingLinks);
    return { draws: rows, linksWaiting };
  }

  private async verifyStatus(r: DrawRecord): Promise<string> {
    if (r.status === 'open' || r.status === 'drawing') return 'pending';
    if (r.status === 'cancelled') return 'nothing drawn';
    // A draw nobody won (a gift draw handed back) has no pick to check: said so, not "verified".
    const nobody = r.winners.length === 0 && !r.rerolls?.length;
    const key = `${r.id}:${r.status}:${r.rerolls?.length ?? 0}:${r.winners.map((w) => w.userId).join(',')}`;
    const known = this.verified.get(key);
    if (known) return known;
    const full = await this.d.repo.getDraw(r.id);
    // Imported here, not at start-up: a v2 draw's check loads the BLS code (@noble/curves).
    const { verifyDraw } = await import('../../fairness/verify.js');
    const v = full ? verifyDraw(full) : { ok: false as const, reason: 'not found' };
    const text = !v.ok ? `does not verify: ${v.reason}` : nobody ? 'nobody won (seed and list check out)' : 'verified';
    this.verified.set(key, text);
    return text;
  }

  private async download(res: ServerResponse, format: 'csv' | 'json', q: URLSearchParams): Promise<void> {
    const records = (await this.filtered(q)).map((x) => x.record);
    const body = format === 'csv' ? toCsv(records) : `${JSON.stringify(records.map(toExport), null, 2)}\n`;
    res.writeHead(200, {
      'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
      'content-disposition': `attachment; filename="giftdrop-history.${format}"`,
      'cache-control': 'no-store',
    });
    res.end(body);
  }
}
