/**
 * The streamer's console: the OperatorPort of live mode, on stdout and outside the logger (log
 * lines go to stderr). Links are bearer secrets (contract "Links and logs"): a line marked
 * `secret` is printed whole only when stdout is a terminal, the operator's own console. Under a
 * service manager, a pipe or CI its URLs are replaced and the line says where the links are: the
 * dashboard and `npm run history -- --draw <id>` (or the executable's own `history --draw <id>`:
 * platform/invocation.ts names it). Lines without a link print the same everywhere.
 *
 * Does not: colour, buffer or log anything; it never decides what is secret (the caller marks it).
 */
import type { OperatorPort } from '../giveaway/ports.js';
import { giftdropCommand } from '../platform/invocation.js';

export interface ConsoleOperatorOptions {
  /** Where lines go (default process.stdout). */
  out?: { write(text: string): unknown; isTTY?: boolean };
  /** Print links (default: `out` is a terminal). */
  terminal?: boolean;
}

const URL_PATTERN = /https?:\/\/[^\s"'<>]+/g;

/** Where a piped console tells the operator to look for a draw's links. */
function linkPointer(drawId: string | undefined): string {
  const history = giftdropCommand('history', `--draw ${drawId ?? '<id>'}`);
  return `links are not printed because stdout is not a terminal: see the dashboard, or run ${history}`;
}

/** The line with every URL replaced (a chat line that carries links, printed without a terminal). */
export function maskUrls(line: string): string {
  return line.replace(URL_PATTERN, '[link not shown]');
}

/** The line with every URL replaced and the pointer appended. */
export function hideLinks(line: string, drawId?: string): string {
  return `${maskUrls(line)} (${linkPointer(drawId)})`;
}

export function consoleOperator(options: ConsoleOperatorOptions = {}): OperatorPort {
  const out = options.out ?? process.stdout;
  const terminal = options.terminal ?? out.isTTY === true;
  return {
    notify(line, opts) {
      if (opts?.terminalOnly && !terminal) return;
      const text = opts?.secret && !terminal ? hideLinks(line, opts.drawId) : line;
      out.write(`[giftdrop] ${text}\n`);
    },
  };
}
