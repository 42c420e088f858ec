/**
 * What the operator pages show of chat: the bot's own lines as the server accepted them (the
 * transcript), and the winner chat catch: what a winner types after being drawn, while their
 * draw's claim window is open or for `catchSeconds` after the winners were announced (or a
 * replacement was drawn).
 *
 * Contract: bounded memory (BOT_LINES transcript lines, WINNER_LINES per draw, DRAWS_KEPT draws);
 * lines are kept as received (the pages render them as text); `overlayLines` returns them cleaned
 * of links and addresses for the overlay. Does not send anything or change the engine.
 *
 * Cost on a chat flood: it listens to chat only while it could catch a line, that is while a
 * catch window runs or a draw is in its claim window (the engine's `claimsOpen`). It starts
 * listening on 'winners', 'rerolled' and 'claim-opened', and stops when the last catch window
 * ends (a timer of the injected clock) or at the first line that finds no window open. While it
 * listens, a line that is not a winner's reads no clock and allocates nothing: outside claim
 * windows it costs one flag test (`claimsOpen` is asked again only after a 'claim-opened') and
 * an IdSketch test of the user id (id-sketch.ts); inside one, a `claimsOpen`, one Map look-up
 * and O(draws in a claim window).
 */
import type { EventEmitter } from 'node:events';
import type { GiveawayEventMap } from '../../giveaway/context.js';
import type { DrawRecord } from '../../giveaway/model.js';
import type { ChatMessage } from '../../shared/chat.js';
import type { Clock, TimerHandle } from '../../shared/clock.js';
import { IdSketch } from './id-sketch.js';
import { overlayName, overlayText } from './safe-text.js';

const BOT_LINES = 300;
const WINNER_LINES = 30;
const DRAWS_KEPT = 20;
const NO_DRAWS: readonly Readonly<DrawRecord>[] = [];

export interface BotLine {
  at: number;
  text: string;
}

export interface WinnerLine {
  at: number;
  drawId: string;
  prize: string;
  login: string;
  name: string;
  text: string;
}

export interface ChatLogOptions {
  chat: Pick<EventEmitter, 'on' | 'off'>;
  engine: {
    readonly events: EventEmitter<GiveawayEventMap>;
    claimDrawsOf(userId: string): readonly Readonly<DrawRecord>[];
    /** True while some draw is in its claim window. */
    claimsOpen(): boolean;
  };
  clock: Clock;
  /** How long after the winners were announced their lines are caught. */
  catchSeconds: number;
  /** Called when a winner's line was caught. */
  onWinnerLine?: (line: WinnerLine) => void;
}

export class ChatLog {
  private readonly bot: BotLine[] = [];
  private readonly winners = new Map<string, WinnerLine[]>();
  /** userId -> draws whose catch window (after the announcement) ends at `until`. */
  private readonly catching = new Map<string, { drawId: string; prize: string; until: number }[]>();
  /** The user ids of `catching`, sketched (kept in step with it). */
  private readonly catchingIds = new IdSketch();
  /** When the last catch window ends (every window has ended after it); `catchEnd` fires then. */
  private catchingUntil = 0;
  private catchEnd: TimerHandle | undefined;
  private listening = false;
  /** False once `claimsOpen` said no; set again by 'claim-opened' (every claim window announces itself). */
  private claimsMaybeOpen = true;
  private readonly listen: (on: boolean) => void;
  private readonly detach: () => void;

  constructor(private readonly options: ChatLogOptions) {
    const sent = (text: string) => {
      this.bot.push({ at: options.clock.now(), text });
      if (this.bot.length > BOT_LINES) this.bot.shift();
    };
    const message = (msg: ChatMessage) => this.onMessage(msg);
    const announced = (record: DrawRecord) => this.startCatch(record);
    const claimOpened = () => {
      this.claimsMaybeOpen = true;
      this.listen(true);
    };
    this.listen = (on) => {
      if (on === this.listening) return;
      this.listening = on;
      if (on) options.chat.on('message', message);
      else options.chat.off('message', message);
    };
    options.chat.on('sent', sent);
    this.listen(true);
    options.engine.events.on('winners', announced);
    options.engine.events.on('rerolled', announced);
    options.engine.events.on('claim-opened', claimOpened);
    this.detach = () => {
      options.chat.off('sent', sent);
      this.listen(false);
      options.engine.events.off('winners', announced);
      options.engine.events.off('rerolled', announced);
      options.engine.events.off('claim-opened', claimOpened);
    };
  }

  /** The bot's lines, oldest first. */
  botLines(): readonly BotLine[] {
    return this.bot;
  }

  /** Every caught winner line, newest first. */
  winnerLines(): WinnerLine[] {
    return [...this.winners.values()].flat().sort((a, b) => b.at - a.at);
  }

  /** A draw's caught lines for the overlay: names and text cleaned of links and addresses. */
  overlayLines(drawId: string): { name: string; text: string }[] {
    return (this.winners.get(drawId) ?? []).map((l) => ({
      name: overlayName(l.name, l.login),
      text: overlayText(l.text),
    }));
  }

  /** True while chat lines are being watched (see the module header). */
  isListening(): boolean {
    return this.listening;
  }

  close(): void {
    this.detach();
    this.catchEnd?.cancel();
    this.catchEnd = undefined;
  }

  private startCatch(record: DrawRecord): void {
    const clock = this.options.clock;
    const now = clock.now();
    const until = now + this.options.catchSeconds * 1000;
    for (const w of record.winners) {
      const list = (this.catching.get(w.userId) ?? []).filter((x) => x.drawId !== record.id && x.until > now);
      list.push({ drawId: record.id, prize: record.offer.name, until });
      this.catching.set(w.userId, list);
      this.catchingIds.add(w.userId);
    }
    if (!record.winners.length) return;
    if (until > this.catchingUntil) {
      this.catchingUntil = until;
      this.catchEnd?.cancel();
      this.catchEnd = clock.setTimeout(() => this.endCatches(), until - now);
    }
    this.listen(true);
  }

  /** Every catch window has ended: forget them, and stop listening unless a claim window is open. */
  private endCatches(): void {
    this.catchEnd = undefined;
    this.catching.clear();
    this.catchingIds.reset();
    if (!this.options.engine.claimsOpen()) this.listen(false);
  }

  private onMessage(msg: ChatMessage): void {
    const claims = this.claimsMaybeOpen && this.options.engine.claimsOpen();
    this.claimsMaybeOpen = claims;
    if (!claims) {
      if (this.catching.size === 0) {
        this.listen(false);
        return;
      }
      if (!this.catchingIds.mayHave(msg.userId)) return;
    }
    const windows = this.catching.get(msg.userId);
    if (windows === undefined && !claims) return;
    if (msg.self) return;
    const claiming = claims ? this.options.engine.claimDrawsOf(msg.userId) : NO_DRAWS;
    if (!windows && claiming.length === 0) return;
    const now = this.options.clock.now();
    const draws = new Map<string, string>();
    if (windows) {
      const live = windows.filter((x) => x.until > now);
      if (live.length) this.catching.set(msg.userId, live);
      else {
        this.catching.delete(msg.userId);
        this.catchingIds.reset(this.catching.keys());
      }
      for (const x of live) draws.set(x.drawId, x.prize);
    }
    for (const r of claiming) draws.set(r.id, r.offer.name);
    for (const [drawId, prize] of draws) {
      const line: WinnerLine = {
        at: now,
        drawId,
        prize,
        login: msg.login,
        name: msg.displayName || msg.login,
        text: msg.text,
      };
      let list = this.winners.get(drawId);
      if (!list) {
        this.winners.set(drawId, (list = []));
        if (this.winners.size > DRAWS_KEPT) this.winners.delete(this.winners.keys().next().value!);
      }
      list.push(line);
      if (list.length > WINNER_LINES) list.shift();
      this.options.onWinnerLine?.(line);
    }
  }
}
