/**
 * The live console: what `npm start` prints in live mode on stdout, a readable transcript instead of
 * log blocks. Chat lines the bot cares about (commands, with `!enter` summarised: one line per few
 * seconds per draw, never one per viewer), the bot's own lines as Twitch accepted them, the
 * operator console's lines, and, on a terminal, a status line at the bottom (chat state, shop
 * live or not, open draws with entrants and time left) redrawn in place.
 *
 * Contract: every printed string is cleaned of control characters (chat text is untrusted). A
 * secret line (a link) is printed only when the output is a terminal; otherwise the console says
 * where the link is (the dashboard, `npm run history -- --draw <id>`). Without a terminal: plain
 * lines, no colour, no status line. Logs are not printed here (they go to stderr). Does not change
 * the engine; costs O(1) per chat line.
 */
import type { Config } from '../config/index.js';
import type { GiveawayEngine } from '../giveaway/engine.js';
import type { OperatorPort } from '../giveaway/ports.js';
import type { HealthReport } from '../http/server.js';
import type { ChatMessage } from '../shared/chat.js';
import type { StreamingService } from '../streaming/service.js';
import type { ChatConnection } from '../twitch/chat-connection.js';
import { clean, type TextSink } from './console-text.js';
import { hideLinks, maskUrls } from './operator-console.js';
import { giftdropCommand } from '../platform/invocation.js';

const ENTER_SUMMARY_MS = 5_000;
const STATUS_MS = 1_000;
const SHOP_POLL_MS = 30_000;

/** What the console follows of a running bot (src/app/bot.ts's Bot has it all). */
export interface FollowedBot {
  readonly config: Pick<Config, 'settings'>;
  readonly chat: ChatConnection;
  readonly engine: Pick<GiveawayEngine, 'events' | 'drawViews'>;
  readonly streaming: Pick<StreamingService, 'status'>;
  readonly http: { readonly localUrl: string };
  health(): Pick<HealthReport, 'problems'> & { eventsub?: unknown };
}

export interface LiveConsoleOptions {
  out: TextSink;
  /** The output is a terminal: colour, secret lines and the status line. */
  tty: boolean;
}

const ESC = '\u001b[';

export class LiveConsole {
  /** The operator port to hand to startBot (links and other operator lines). */
  readonly operator: OperatorPort;
  private bot: FollowedBot | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly entered = new Map<string, { prize: string; count: number; total: number }>();
  private shop = '?';
  private statusShown = false;
  private detach: (() => void) | undefined;

  constructor(private readonly o: LiveConsoleOptions) {
    this.operator = {
      notify: (line, opts) => {
        if (opts?.terminalOnly && !o.tty) return;
        // Same rule as the plain console (operator-console.ts): a link only on a terminal.
        const text = opts?.secret && !o.tty ? hideLinks(line, opts.drawId) : line;
        this.print(`${this.paint('35;1', '[giftdrop]')} ${clean(text)}`);
      },
    };
  }

  /** Follows the running bot. */
  attach(bot: FollowedBot): void {
    this.bot = bot;
    const prefix = bot.config.settings.commands.prefix;
    const enter = bot.engine.events;
    const enterLine = `${prefix}enter`;
    const onMessage = (msg: ChatMessage) => {
      // The flood's line, exactly: no trimming or splitting (summarised from the engine's entries).
      if (msg.text === enterLine) return;
      const text = msg.text.trim();
      if (!text.startsWith(prefix)) return;
      const word = text.slice(prefix.length).split(/\s+/, 1)[0]!.toLowerCase();
      if (word === 'enter') return; // summarised from the engine's entries
      this.print(`${this.paint('2', '[chat]')} ${this.paint('1', clean(msg.displayName || msg.login))}: ${said(text)}`);
    };
    // The bot's own lines can carry links (links.publicInChat): shown whole on a terminal only.
    const said = (text: string) => clean(this.o.tty ? text : maskUrls(text));
    const onSent = (text: string) =>
      this.print(
        `${this.paint('2', '[chat]')} ${this.paint('36;1', `bot> ${bot.chat.botLogin}:`)} ${this.paint('36', said(text))}`,
      );
    const onEntered = (drawId: string, _e: unknown, total: number) => {
      // (one map read per entrant; the map is written only for a draw's first entrant since the last summary)
      let e = this.entered.get(drawId);
      if (!e) {
        const prize = bot.engine.drawViews().find((v) => v.record.id === drawId)?.record.offer.name ?? drawId;
        e = { prize, count: 0, total };
        this.entered.set(drawId, e);
      }
      e.count += 1;
      e.total = total;
    };
    const onState = (state: string) => this.print(this.paint('33', `[chat] connection: ${state}`));
    const onHealth = (h: { chat: string; reason?: string }) => {
      if (h.chat === 'degraded') this.print(this.paint('31', `[chat] degraded: ${h.reason ?? 'lines not confirmed'}`));
    };
    bot.chat.on('message', onMessage);
    bot.chat.on('sent', onSent);
    bot.chat.on('state', onState);
    bot.chat.on('health', onHealth);
    enter.on('entered', onEntered);
    this.detach = () => {
      bot.chat.off('message', onMessage);
      bot.chat.off('sent', onSent);
      bot.chat.off('state', onState);
      bot.chat.off('health', onHealth);
      enter.off('entered', onEntered);
    };
    this.every(ENTER_SUMMARY_MS, () => this.flushEntries());
    if (this.o.tty) {
      this.every(STATUS_MS, () => this.drawStatus());
      const poll = () =>
        void bot.streaming.status().then(
          (s) => (this.shop = s.status === 'ONLINE' ? 'LIVE' : s.status === 'OFFLINE' ? 'offline' : '?'),
          () => (this.shop = '?'),
        );
      poll();
      this.every(SHOP_POLL_MS, poll);
    }
    this.print(
      this.paint(
        '1',
        `giftdrop live: #${bot.chat.channelLogin} as ${bot.chat.botLogin}; overlay ${bot.http.localUrl}/overlay, dashboard ${bot.http.localUrl}/dashboard`,
      ),
    );
  }

  /** The status line's text (chat, shop, open draws with entrants and time left). */
  statusText(): string {
    const bot = this.bot;
    if (!bot) return '';
    const now = Date.now();
    const draws = bot.engine
      .drawViews()
      .filter((v) => v.active)
      .map((v) => {
        const left = Math.max(0, Math.ceil((Date.parse(v.record.closesAt) - now) / 1000));
        return `${v.record.offer.name}: ${v.entrants.size} entrants${v.phase === 'open' ? `, ${left}s left` : `, ${v.phase}`}`;
      });
    const h = bot.chat.health();
    // A credential Fourthwall refused (app/credential-problems.ts) replaces the unknown "shop ?".
    const health = bot.health();
    const refused = health.problems?.some((p) => p.startsWith('Fourthwall refused'));
    const shop = refused ? `shop: credentials refused, see ${giftdropCommand('setup')}` : `shop ${this.shop}`;
    // EventSub (channel points, bits: app/twitch-events.ts) beside chat, only when it runs.
    const eventsub = typeof health['eventsub'] === 'string' ? ` | EventSub ${health['eventsub']}` : '';
    return clean(
      `chat ${h.chat}${h.reason ? ` (${h.reason})` : ''}${eventsub} | ${shop} | ${draws.length ? draws.join(' | ') : 'no open draw'}`,
    );
  }

  close(): void {
    this.flushEntries();
    for (const t of this.timers) clearInterval(t);
    this.timers.length = 0;
    this.detach?.();
    this.clearStatus();
  }

  private every(ms: number, fn: () => void): void {
    const t = setInterval(fn, ms);
    t.unref();
    this.timers.push(t);
  }

  private flushEntries(): void {
    for (const [id, e] of this.entered) {
      this.print(
        `${this.paint('2', '[chat]')} ${e.count} viewer${e.count === 1 ? '' : 's'} typed !enter (${clean(e.prize)}: ${e.total} entrants)`,
      );
      this.entered.delete(id);
    }
  }

  private paint(code: string, text: string): string {
    return this.o.tty ? `${ESC}${code}m${text}${ESC}0m` : text;
  }

  private clearStatus(): void {
    if (this.statusShown) this.o.out.write(`\r${ESC}2K`);
    this.statusShown = false;
  }

  private drawStatus(): void {
    this.clearStatus();
    this.o.out.write(this.paint('7', ` ${this.statusText()} `));
    this.statusShown = true;
  }

  private print(line: string): void {
    this.clearStatus();
    this.o.out.write(`${line}\n`);
    if (this.o.tty && this.bot) this.drawStatus();
  }
}
