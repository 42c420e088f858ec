/**
 * Where a settings file's JSON breaks, as a line and column a text editor shows. JSON.parse's own
 * message names a character position at best (and on some inputs, such as a stray comma, nothing
 * at all), so the text is scanned once more, only after JSON.parse failed.
 *
 * Contract: `jsonErrorAt(text)` returns the 1-based line and column of the first character that
 * cannot continue valid JSON (the end of the text when it stops early) and what was expected
 * there; undefined when the text is valid JSON. (The caller strips a byte-order mark first.)
 */

export interface JsonErrorPlace {
  line: number;
  column: number;
  /** What was wrong there, e.g. `unexpected ","` or `unexpected end of the file`. */
  problem: string;
}

class Stop extends Error {
  constructor(readonly at: number) {
    super('json syntax');
  }
}

/** The first place `text` stops being JSON, or undefined when it is valid. */
export function jsonErrorAt(text: string): JsonErrorPlace | undefined {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const fail = (): never => {
    throw new Stop(i);
  };
  const expect = (ch: string) => (text[i] === ch ? void i++ : fail());
  const literal = (word: string) => {
    for (const ch of word) expect(ch);
  };
  const string = () => {
    expect('"');
    for (;;) {
      if (i >= text.length) fail();
      const ch = text[i]!;
      if (ch === '"') return void i++;
      if (ch < ' ') fail();
      if (ch === '\\') {
        i++;
        const e = text[i];
        if (e === 'u') {
          i++;
          for (let k = 0; k < 4; k++) {
            if (/[0-9a-fA-F]/.test(text[i] ?? '')) i++;
            else fail();
          }
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
        else fail();
      } else i++;
    }
  };
  const number = () => {
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) fail();
    i += m![0].length;
  };
  const value = (): void => {
    ws();
    const ch = text[i];
    if (ch === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        string();
        ws();
        expect(':');
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        return expect('}');
      }
    }
    if (ch === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        return expect(']');
      }
    }
    if (ch === '"') return string();
    if (ch === 't') return literal('true');
    if (ch === 'f') return literal('false');
    if (ch === 'n') return literal('null');
    return number();
  };
  try {
    value();
    ws();
    if (i < text.length) fail();
    return undefined;
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
    const before = text.slice(0, err.at);
    const line = before.split('\n').length;
    const column = err.at - (before.lastIndexOf('\n') + 1) + 1;
    const ch = text[err.at];
    const problem = ch === undefined ? 'unexpected end of the file' : `unexpected ${JSON.stringify(ch)}`;
    return { line, column, problem };
  }
}
