/**
 * How sandbox mode prints: the chat transcript (viewers, the broadcaster, the bot's own lines
 * marked `bot>`, Twitch notices), one-line narration of each step (`▶`), the operator console's
 * private lines (links, marked `[private]`) and compact log lines. Colour only when asked (a
 * terminal); plain text otherwise, with the same markers so output can be read by scripts.
 *
 * Contract: every printed line has control characters removed (chat text is untrusted); chat
 * lines start with `[chat]`, private lines with `[private]`, narration with `▶`. Lines go to a
 * replaceable sink so the interactive prompt can redraw itself around them.
 * Does not: decide what to say or when, read the environment, or own the streams it writes to.
 */
import type { TranscriptEntry } from '../../sandbox/chat/index.js';
import { clean, type TextSink } from '../../console/console-text.js';

export { clean, compactLogStream, type TextSink } from '../../console/console-text.js';

/** Where printed text goes. */

/** Badge text for a login (e.g. `mod`, `sub 6`), when the demo knows its roles. */
type BadgeLookup = (login: string) => string | undefined;

export interface DemoPrinterOptions {
  out: TextSink;
  colour: boolean;
  /** The bot's login: its lines get the `bot>` marker. */
  botLogin: string;
  /** The channel login: its lines are the broadcaster's. */
  channel: string;
  badges?: BadgeLookup;
}

const ESC = '\u001b[';
const STYLE = {
  reset: `${ESC}0m`,
  bold: `${ESC}1m`,
  dim: `${ESC}2m`,
  red: `${ESC}31m`,
  green: `${ESC}32m`,
  yellow: `${ESC}33m`,
  magenta: `${ESC}35m`,
  cyan: `${ESC}36m`,
} as const;
const NAME_COLOURS = [
  `${ESC}32m`,
  `${ESC}33m`,
  `${ESC}34m`,
  `${ESC}35m`,
  `${ESC}91m`,
  `${ESC}92m`,
  `${ESC}94m`,
  `${ESC}95m`,
];

function nameColour(login: string): string {
  let h = 0;
  for (const ch of login) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return NAME_COLOURS[h % NAME_COLOURS.length]!;
}

/** Prints the demo's lines. */
export class DemoPrinter {
  private sink: TextSink;

  constructor(private readonly o: DemoPrinterOptions) {
    this.sink = o.out;
  }

  /** Routes lines elsewhere (the interactive prompt wraps the output stream). */
  setSink(sink: TextSink): void {
    this.sink = sink;
  }

  private paint(style: string, text: string): string {
    return this.o.colour ? `${style}${text}${STYLE.reset}` : text;
  }

  private line(text: string): void {
    this.sink.write(`${text}\n`);
  }

  /** A one-line explanation of what happens next. */
  narrate(text: string): void {
    this.line(this.paint(STYLE.bold + STYLE.yellow, `▶ ${clean(text)}`));
  }

  /** A secondary line (addresses, hints). */
  note(text: string): void {
    this.line(this.paint(STYLE.dim, `  ${clean(text)}`));
  }

  /** A heading. */
  title(text: string): void {
    this.line(this.paint(STYLE.bold, clean(text)));
  }

  /** Something went wrong (the demo goes on when it can). */
  problem(text: string): void {
    this.line(this.paint(STYLE.bold + STYLE.red, `✖ ${clean(text)}`));
  }

  /** The end of a step that worked. */
  success(text: string): void {
    this.line(this.paint(STYLE.bold + STYLE.green, `✔ ${clean(text)}`));
  }

  /** A line of the operator console: private (links), never chat. */
  private(text: string, secret = true): void {
    const tag = secret ? '[private] operator console:' : '[console]';
    this.line(`${this.paint(STYLE.magenta + STYLE.bold, tag)} ${this.paint(STYLE.magenta, clean(text))}`);
  }

  /** A whisper the bot sent (the local Twitch's record of it). */
  whisper(toLogin: string, text: string, delivered: boolean): void {
    const tag = this.paint(STYLE.magenta, `[whisper] bot -> @${clean(toLogin)}:`);
    this.line(`${tag} ${clean(text)}${delivered ? '' : this.paint(STYLE.dim, ' (dropped silently by Twitch)')}`);
  }

  /** One transcript entry of the chat server. */
  chat(entry: TranscriptEntry): void {
    const tag = this.paint(STYLE.dim, '[chat]');
    const text = clean(entry.text);
    switch (entry.kind) {
      case 'bot': {
        const who = this.paint(STYLE.bold + STYLE.cyan, `bot> ${entry.login ?? this.o.botLogin}:`);
        this.line(`${tag} ${who} ${this.paint(STYLE.cyan, text)}`);
        return;
      }
      case 'viewer': {
        const login = entry.login ?? '?';
        const broadcaster = login === this.o.channel;
        const badge = broadcaster ? 'broadcaster' : this.o.badges?.(login);
        const name = this.paint(broadcaster ? STYLE.bold + STYLE.red : STYLE.bold + nameColour(login), clean(login));
        const badgeText = badge ? ` ${this.paint(STYLE.dim, `(${badge})`)}` : '';
        const said = entry.action ? this.paint(STYLE.dim, `* ${text}`) : text;
        this.line(`${tag} ${name}${badgeText}: ${said}`);
        return;
      }
      case 'notice':
        this.line(`${tag} ${this.paint(STYLE.red, `Twitch notice to the bot (${entry.msgId ?? 'notice'}): ${text}`)}`);
        return;
      default:
        return;
    }
  }
}
