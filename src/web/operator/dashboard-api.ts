/**
 * The dashboard's JSON API (`/dashboard/api/...`), behind the dashboard token (index.ts checks it).
 * Reads: state (draws in memory, winners with their links, claim status), entrants of a draw
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
import { describeAccountRules, type AccountRules } from '../../giveaway/account-rules.js';
import { exclusionOf } from '../../giveaway/eligibility.js';
import { awaitingLinks, RECENT_LIMIT } from '../../giveaway/registry.js';
import type { DrawRecord } from '../../giveaway/model.js';
import type { ShopPort } from '../../giveaway/ports.js';
import type { GiveawayEngine } from '../../giveaway/engine.js';
import type { GiveawaySettings } from '../../giveaway/settings.js';
import type { Logger } from '../../logging/index.js';
import { noRoles, type ChatMessage } from '../../shared/chat.js';
import type { Clock } from '../../shared/clock.js';
import { toCsv, toExport } from '../../storage/index.js';
import type { StreamingService } from '../../streaming/service.js';
import type { ChatLog } from './chat-log.js';
import type { DeliveryTracker } from '../../delivery/tracker.js';

const MAX_BODY = 16 * 1024;
const ENTRANTS_SHOWN = 200;
const HISTORY_LIMIT = 200;

export interface DashboardApiDeps {
  engine: GiveawayEngine;
  streaming: StreamingService;
  shop: Pick<ShopPort, 'listProducts'>;
  repo: { listDraws(o?: { limit?: number }): Promise<DrawRecord[]>; getDraw(id: string): Promise<DrawRecord | undefined>; recentWinnerIds(sinceMs: number): Promise<Set<string>> };
  chat: { readonly channelLogin: string; readonly botLogin: string; channelId(): string | undefined; health(): { chat: string; reason?: string } };
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
  twitchEvents?: () => Record<string, unknown>;
}

type Json = Record<string, unknown> | unknown[];
type Handler = (q: URLSearchParams, body: Record<string, unknown>) => Promise<Json> | Json;

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

const str = (v: unknown) => (typeof v === 'string' ? v : '');
const int = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined);

export class DashboardApi {
  private readonly gets: Record<string, Handler>;
  private readonly posts: Record<string, Handler>;
  private readonly verified = new Map<string, string>();

  constructor(private readonly d: DashboardApiDeps) {
    this.gets = {
      state: () => this.state(),
      entrants: (q) => this.entrants(q.get('draw') ?? '', q.get('q') ?? ''),
      products: async () => ({
        products: (await d.shop.listProducts()).map((p) => ({
          id: p.id,
          name: p.name,
          slug: p.slug,
          stock: p.stock ?? null,
          image: p.imageUrl ? `/overlay/prize/${encodeURIComponent(p.id)}` : null,
        })),
      }),
      stream: async () => ({ streaming: await d.streaming.status() }),
      history: (q) => this.history(q),
      prizes: async () => ({ prizes: (await d.delivery?.waiting()) ?? [] }),
      transcript: () => ({ bot: d.chatLog.botLines().slice(-100), winners: d.chatLog.winnerLines().slice(0, 100) }),
    };
    this.posts = {
      start: async (_q, b) => {
        const res = await d.engine.startLinkGiveaway(this.actor(), str(b.product), int(b.winners), int(b.seconds));
        return res.ok ? { ok: true, id: res.id, message: `Link giveaway ${res.id} started.` } : res;
      },
      end: () => {
        const n = d.engine.endNow();
        return n ? { ok: true, message: `Closed ${plural(n, 'draw')}; drawing the winners.` } : { ok: false, message: 'No giveaway is open.' };
      },
      cancel: async () => {
        const res = await d.engine.cancel();
        return res.ok ? { ok: true, id: res.id, message: 'Link giveaway cancelled.' } : res;
      },
      reroll: async (_q, b) => {
        const res = await d.engine.reroll(str(b.login), this.actor(), str(b.drawId) || undefined);
        return res.ok ? { ok: true, id: res.id, message: `Rerolled ${str(b.login)}.` } : res;
      },
      remind: async (_q, b) => {
        const prize = (await d.delivery?.waiting())?.find((p) => p.drawId === str(b.drawId) && p.userId === str(b.userId));
        if (!prize) return { ok: false, message: 'That prize is not waiting (redeemed already, or unknown).' };
        if (prize.delivery.remindedAt) return { ok: false, message: `@${prize.login} was reminded already.` };
        const sent = await d.delivery!.remind([prize]);
        return sent
          ? { ok: true, message: `Reminder for @${prize.login} sent.` }
          : { ok: false, message: 'No way to remind: whispers are off and there is no claim page (GIFTDROP_PUBLIC_URL). Copy the link and send it yourself.' };
      },
      retry: async () => {
        const res = await d.engine.retryLinks();
        return res.ok ? { ok: true, id: res.id, message: 'Links delivered.' } : res;
      },
      stream: async (_q, b) => {
        try {
          const s = str(b.action) === 'live' ? await d.streaming.goLive() : str(b.action) === 'offline' ? await d.streaming.goOffline() : undefined;
          return s ? { ok: true, message: `Fourthwall streaming status: ${s.status}.`, streaming: s } : { ok: false, message: 'action must be live or offline' };
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
    const out = await h(query, body);
    this.d.logger.info({ action: name, ok: (out as { ok?: boolean }).ok }, 'dashboard action');
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

  private state(): Json {
    const draws = this.d.engine.drawViews().map((v) => {
      const r = v.record;
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
        })),
        rerolls: (r.rerolls ?? []).map((x) => ({ replaced: x.replacedLogin, reason: x.reason, at: x.at })),
        setAside: (r.setAside ?? []).map((a) => ({ login: a.login, reason: a.reason, at: a.at })),
        failure: r.failure?.reason ?? null,
        fairness: { commitment: r.fairness.commitment, seed: r.fairness.seed ?? null, digest: r.fairness.entrantsDigest ?? null, frozenAt: r.fairness.frozenAt ?? null },
      };
    });
    const chat = this.d.chat.health();
    const problems = this.d.problems?.() ?? [];
    return {
      now: this.d.clock.now(),
      mode: this.d.mode,
      chat: chat.chat,
      ...(chat.reason ? { chatReason: chat.reason } : {}),
      ...(problems.length ? { problems } : {}),
      ...this.d.twitchEvents?.(),
      channel: this.d.chat.channelLogin,
      draws,
    };
  }

  private async entrants(drawId: string, search: string): Promise<Json> {
    const v = this.d.engine.drawViews().find((x) => x.record.id === drawId);
    if (!v) return { total: 0, matched: 0, entrants: [] };
    const s = this.d.settings.eligibility;
    const recent = s.winnerCooldownHours > 0 ? await this.d.repo.recentWinnerIds(this.d.clock.now() - s.winnerCooldownHours * 3_600_000) : new Set<string>();
    const id = { channelLogin: this.d.chat.channelLogin, botLogin: this.d.chat.botLogin, ...(this.d.chat.channelId() ? { channelId: this.d.chat.channelId()! } : {}) };
    const needle = search.trim().toLowerCase().replace(/^@/, '');
    const out = [];
    let matched = 0;
    let eligible = 0;
    for (const e of v.entrants.values()) {
      const why = exclusionOf(e, s, id, recent);
      if (!why) eligible += 1;
      if (needle && !e.login.includes(needle) && !e.displayName.toLowerCase().includes(needle)) continue;
      matched += 1;
      if (out.length < ENTRANTS_SHOWN) out.push({ login: e.login, displayName: e.displayName, weight: e.weight, enteredAt: e.enteredAt, eligible: !why, why: why ?? null });
    }
    const account = this.d.accountRules && describeAccountRules(this.d.accountRules);
    return {
      total: v.entrants.size,
      eligible,
      matched,
      entrants: out,
      // `eligible` is the chat rules' verdict; these are checked with Twitch when the draw closes.
      ...(account ? { accountRules: { rules: account, checked: 'with Twitch for the picks when the draw closes' } } : {}),
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
      const winners = m.winners.map((w) => ({ ...w, ...(delivery.get(w.userId) ? { delivery: delivery.get(w.userId)! } : {}) }));
      const entrants = Math.max(stored.entrants, m.entrants, v.entrants.size);
      const record: DrawRecord = { ...stored, status: m.status, entrants, winners, fairness: m.fairness, ...(m.closedAt ? { closedAt: m.closedAt } : {}), ...(m.rerolls ? { rerolls: m.rerolls } : {}), ...(m.setAside ? { setAside: m.setAside } : {}) };
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
        (!text || r.id.toLowerCase().includes(text) || r.offer.name.toLowerCase().includes(text) || r.winners.some((w) => w.login.includes(text))),
    );
  }

  private async history(q: URLSearchParams): Promise<Json> {
    const records = await this.filtered(q);
    const rows = [];
    // A draw whose save is on the way is checked once it is on disk (the check reads the stored record).
    for (const { record: r, saving } of records) rows.push({ ...toExport(r), verify: saving ? 'pending' : await this.verifyStatus(r) });
    // Whether "Retry links" applies, over the draws `!giveaway retry` looks at (not the filter's).
    const linksWaiting = (await this.d.repo.listDraws({ limit: RECENT_LIMIT })).some(awaitingLinks);
    return { draws: rows, linksWaiting };
  }

  private async verifyStatus(r: DrawRecord): Promise<string> {
    if (r.status === 'open' || r.status === 'drawing') return 'pending';
    if (r.status === 'cancelled') return 'nothing drawn';
    const key = `${r.id}:${r.status}:${r.rerolls?.length ?? 0}:${r.winners.map((w) => w.userId).join(',')}`;
    const known = this.verified.get(key);
    if (known) return known;
    const full = await this.d.repo.getDraw(r.id);
    // Imported here, not at start-up: a v2 draw's check loads the BLS code (@noble/curves).
    const { verifyDraw } = await import('../../fairness/verify.js');
    const v = full ? verifyDraw(full) : { ok: false as const, reason: 'not found' };
    const text = v.ok ? 'verified' : `does not verify: ${v.reason}`;
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
