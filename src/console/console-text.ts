/**
 * Text helpers shared by the operator's consoles (the sandbox demo's transcript and the live
 * console): a line sink, `clean` (one line, no control characters: a viewer's name or message
 * can never move the cursor or recolour the terminal), and `compactLogStream`, which turns pino's
 * JSON lines into one short readable line each (`[log warn] module: message (error)`).
 * Contract: pure text; loads nothing from the sandboxes or the demo, so live start-up may use it.
 */
import type { DestinationStream } from 'pino';

/** Where console text goes (a stream, or a test's capture). */
export interface TextSink {
  write(text: string): unknown;
}

const DIM = '\u001b[2m';
const RESET = '\u001b[0m';

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** One printable line: line breaks become spaces, control characters (ANSI escapes too) go. */
export function clean(text: string): string {
  return text.replace(/\r?\n|\r/g, ' ').replace(CONTROL, '');
}

/** A pino destination printing each JSON line as one short line (dim on a terminal). */
export function compactLogStream(out: TextSink, colour: boolean): DestinationStream {
  const names: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
  return {
    write(chunk: string) {
      for (const raw of chunk.split('\n')) {
        if (!raw.trim()) continue;
        let text = raw;
        try {
          const j = JSON.parse(raw) as { level?: number; module?: string; msg?: string; err?: { message?: string } };
          const level = names[j.level ?? 30] ?? String(j.level);
          const err = j.err?.message ? ` (${j.err.message})` : '';
          text = `[log ${level}] ${j.module ? `${j.module}: ` : ''}${j.msg ?? ''}${err}`;
        } catch {
          // not JSON: print as it is
        }
        out.write(`${colour ? `${DIM}${clean(text)}${RESET}` : clean(text)}\n`);
      }
    },
  };
}
