/**
 * The overlay's live state: listens to the giveaway engine's events (a new entrant only marks the
 * state dirty; the newest names are read from the draw's last rows when a frame is built), and
 * sends the whole (small) overlay state to every overlay client over
 * server-sent events, batched: at most one frame per `batchMs` (250 ms), however many `!enter`
 * arrive, and only when the state changed; with no client connected (and no `onFrame`) no frame
 * is built at all. A client that connects (or reloads) gets the current state at once as its
 * first frame; `GET /overlay/state` answers the same JSON.
 *
 * Contract: the state is rebuilt from the engine's draws in memory (engine.drawViews) through
 * overlay-view.ts, so it is always what the engine holds, never a drifting copy; building it is
 * O(draws), not O(entrants). The draws still running (open, closing, in a claim window) come
 * first, then the results (winners, cancelled), newest first and at most `maxResults` of them:
 * a result stays for `winnersSeconds` after its winners (or a reroll) were announced, a cancelled
 * draw for CANCELLED_SHOWN_MS, and leaves then even while the engine still holds the draw. A
 * result carries when it was announced (`resultAt`), so the page reveals it big for `revealMs`
 * and then moves it to its results band. Supporter alerts (`alerts`: the shop's `alert` events,
 * already safe views, shop/alerts.ts) are shown for `alertSeconds` each, at most MAX_ALERTS at
 * once (the oldest leaves early), unless `showAlerts` is off. SSE clients are bounded per client
 * and in all, the oldest evicted (sse.ts). Does not change the engine or read winners' links.
 */
import type { EventEmitter } from 'node:events';
import type { AlertView } from '../../shop/alerts.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GiveawayEventMap } from '../../giveaway/context.js';
import type { DrawView } from '../../giveaway/engine.js';
import type { Clock, TimerHandle } from '../../shared/clock.js';
import {
  OVERLAY_TEXT,
  overlayAlert,
  overlayDraw,
  type OverlayAlert,
  type OverlayDraw,
  type OverlayState,
  type OverlayText,
} from './overlay-view.js';
import { overlayText } from './safe-text.js';
import { clientOf } from '../../http/surfaces.js';
import { SseHub, sseFrame } from './sse.js';

const CANCELLED_SHOWN_MS = 10_000;
/** Alerts on screen at once. */
const MAX_ALERTS = 3;

interface OverlaySource {
  readonly events: EventEmitter<GiveawayEventMap>;
  drawViews(): DrawView[];
}

export interface OverlayHubOptions {
  engine: OverlaySource;
  clock: Clock;
  /** The entry command with its prefix (`!enter`), and the claim command (`!claim`). */
  enter: string;
  claim?: string;
  /** The overlay's wording (overlay-view.ts overlayWording); default English. */
  text?: OverlayText;
  /** Supporter alerts to show (the shop's `alert` events), unless `showAlerts` is false. */
  alerts?: Pick<EventEmitter, 'on' | 'off'>;
  showAlerts?: boolean;
  /** How long each alert stays (default 8 s). */
  alertSeconds?: number;
  /** How long the newest result is shown big in its card before it joins the band (default 12 s). */
  revealSeconds?: number;
  badge?: string;
  winnersSeconds: number;
  /** Results shown at most beside the running draws (default 3). */
  maxResults?: number;
  /** Winners' chat lines to show, when the overlay shows winner chat. */
  winnerChat?: (drawId: string) => readonly { name: string; text: string }[];
  batchMs?: number;
  /** Streams in all (default 32) and per client (default 8); the oldest is evicted above either (sse.ts). */
  maxClients?: number;
  maxPerClient?: number;
  /** Extra headers for the SSE response. */
  headers?: Record<string, string>;
}

export interface OverlayStats {
  frames: number;
  /** Bytes written to one client (every client gets the same frames). */
  bytesPerClient: number;
  clients: number;
  /** Streams ended to make room for newer ones. */
  evicted: number;
}

export class OverlayHub {
  /** Result draws: when their result was announced and until when it is shown (engine clock). */
  private readonly shown = new Map<string, { at: number; until: number }>();
  private readonly expiry = new Set<TimerHandle>();
  private readonly sse: SseHub;
  private readonly batchMs: number;
  private timer: NodeJS.Timeout | undefined;
  private lastFlush = 0;
  private lastJson = '';
  private frames = 0;
  private bytes = 0;
  private readonly unsubscribe: () => void;
  private readonly text: OverlayText;
  private alerts: OverlayAlert[] = [];
  private alertSeq = 0;
  /** Called after each frame is sent (benchmarks, tests). */
  onFrame: ((state: OverlayState) => void) | undefined;

  constructor(private readonly options: OverlayHubOptions) {
    this.batchMs = options.batchMs ?? 250;
    this.text = options.text ?? OVERLAY_TEXT;
    this.sse = new SseHub({
      max: options.maxClients ?? 32,
      maxPerClient: options.maxPerClient ?? 8,
      headers: options.headers,
    });
    const ev = options.engine.events;
    const dirty = () => this.markDirty();
    const shown = (record: { id: string }) => this.showFor(record.id, options.winnersSeconds * 1000);
    const cancelled = (record: { id: string }) => this.showFor(record.id, CANCELLED_SHOWN_MS);
    // (a new entrant only marks the state dirty: the recent names are the draw's last rows)
    const plain = [
      'draw-opened',
      'entered',
      'draw-closed',
      'draw-failed',
      'entrants-frozen',
      'claimed',
      'draw-finished',
    ] as const;
    for (const name of plain) ev.on(name, dirty);
    ev.on('winners', shown);
    ev.on('rerolled', shown);
    ev.on('draw-cancelled', cancelled);
    const alert = (view: AlertView) => this.addAlert(view);
    const alerts = options.showAlerts === false ? undefined : options.alerts;
    alerts?.on('alert', alert);
    this.unsubscribe = () => {
      for (const name of plain) ev.off(name, dirty);
      ev.off('winners', shown);
      ev.off('rerolled', shown);
      ev.off('draw-cancelled', cancelled);
      alerts?.off('alert', alert);
    };
  }

  /** The overlay's state now. */
  state(): OverlayState {
    const now = this.options.clock.now();
    const running: OverlayDraw[] = [];
    const results: { draw: OverlayDraw; at: number }[] = [];
    for (const v of this.options.engine.drawViews()) {
      const shown = this.shown.get(v.record.id);
      const until = shown?.until ?? 0;
      if (!v.active && !(until > now)) continue;
      const d = overlayDraw(v, {
        enter: this.options.enter,
        claim: this.options.claim ?? '!claim',
        text: this.text,
        ...(this.options.winnerChat ? { winnerChat: this.options.winnerChat } : {}),
        ...(shown ? { resultAt: shown.at } : {}),
      });
      if (!d) continue;
      if (d.stage === 'winners' || d.stage === 'cancelled') {
        if (until > now) results.push({ draw: d, at: shown!.at });
      } else running.push(d);
    }
    results.sort((a, b) => b.at - a.at); // newest first
    const state: OverlayState = {
      now,
      draws: [...running, ...results.slice(0, this.options.maxResults ?? 3).map((r) => r.draw)],
      alerts: this.alerts.filter((a) => a.until > now),
      revealMs: (this.options.revealSeconds ?? 12) * 1000,
      pending: this.text.pending,
    };
    const badge = this.options.badge ? overlayText(this.options.badge, 60) : '';
    if (badge) state.badge = badge;
    return state;
  }

  /** Something the overlay shows may have changed: a frame goes out within `batchMs`. */
  markDirty(): void {
    if (this.timer) return;
    const wait = Math.max(0, this.lastFlush + this.batchMs - Date.now());
    this.timer = setTimeout(() => this.flush(), wait);
    this.timer.unref();
  }

  /** `GET /overlay/events`: the SSE stream, starting with the current state. */
  handleEvents(req: IncomingMessage, res: ServerResponse): void {
    const json = JSON.stringify(this.state());
    this.sse.open(req, res, sseFrame('state', json), clientOf(req));
  }

  /** `GET /overlay/state`: the current state as JSON. */
  handleState(res: ServerResponse, headers: Record<string, string>): void {
    const text = JSON.stringify(this.state());
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
    res.end(text);
  }

  stats(): OverlayStats {
    return { frames: this.frames, bytesPerClient: this.bytes, clients: this.sse.size, evicted: this.sse.evicted };
  }

  close(): void {
    this.unsubscribe();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const t of this.expiry) t.cancel();
    this.expiry.clear();
    this.sse.closeAll();
  }

  /** A supporter alert: on screen for `alertSeconds`, at most MAX_ALERTS at once. */
  private addAlert(view: AlertView): void {
    const now = this.options.clock.now();
    const ms = (this.options.alertSeconds ?? 8) * 1000;
    this.alerts = [
      ...this.alerts.filter((a) => a.until > now).slice(-(MAX_ALERTS - 1)),
      overlayAlert(view, ++this.alertSeq, now, now + ms, this.text),
    ];
    const handle = this.options.clock.setTimeout(() => {
      this.expiry.delete(handle);
      this.alerts = this.alerts.filter((a) => a.until > this.options.clock.now());
      this.markDirty();
    }, ms + 50);
    this.expiry.add(handle);
    this.markDirty();
  }

  private showFor(drawId: string, ms: number): void {
    const now = this.options.clock.now();
    this.shown.set(drawId, { at: now, until: now + ms });
    const handle = this.options.clock.setTimeout(() => {
      this.expiry.delete(handle);
      if ((this.shown.get(drawId)?.until ?? 0) <= this.options.clock.now()) this.shown.delete(drawId);
      this.markDirty();
    }, ms + 50);
    this.expiry.add(handle);
    this.markDirty();
  }

  private flush(): void {
    this.timer = undefined;
    if (this.sse.size === 0 && !this.onFrame) {
      // Nobody to send it to (a client that connects gets the state built then).
      this.lastJson = '';
      return;
    }
    this.lastFlush = Date.now();
    const state = this.state();
    const json = JSON.stringify({ ...state, now: 0 });
    if (json === this.lastJson) return;
    this.lastJson = json;
    this.frames += 1;
    this.bytes += this.sse.broadcast(sseFrame('state', JSON.stringify(state)));
    this.onFrame?.(state);
  }
}
