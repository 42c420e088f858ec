/**
 * UTF-8 bytes built straight into fixed-size buffers, for serialising big lists (a frozen entrant
 * list of a million rows) without building one string per row or one big string at the end.
 *
 * Contract: `text` appends a string's UTF-8 bytes (ASCII copied byte by byte, anything else
 * through Buffer.write), `jsonString` appends exactly `JSON.stringify(s)`; a chunk is handed to
 * `onChunk` (when given) and kept in `chunks` each time one fills up and on `end`. Byte-identical
 * to encoding the concatenated strings with Buffer.from(..., 'utf8'). Owns nothing else.
 */
export class ByteChunks {
  /** Completed chunks, in order (unless `keep` is false). */
  readonly chunks: Buffer[] = [];
  private buf: Buffer;
  private pos = 0;

  constructor(
    private readonly onChunk?: (chunk: Buffer) => void,
    private readonly keep = true,
    private readonly size = 1 << 20,
  ) {
    this.buf = Buffer.allocUnsafe(size);
  }

  /** Makes room for `bytes` more bytes (a new chunk when the current one is too full). */
  private room(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    this.cut();
    if (bytes > this.buf.length) this.buf = Buffer.allocUnsafe(bytes);
  }

  private cut(): void {
    if (this.pos === 0) return;
    const chunk = this.buf.subarray(0, this.pos);
    this.onChunk?.(chunk);
    if (this.keep) this.chunks.push(chunk);
    this.buf = Buffer.allocUnsafe(this.size);
    this.pos = 0;
  }

  /** One byte (0-255). */
  byte(b: number): void {
    if (this.pos >= this.buf.length) this.cut();
    this.buf[this.pos++] = b;
  }

  /** The UTF-8 bytes of `s`. */
  text(s: string): void {
    const n = s.length;
    this.room(n * 3);
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c > 0x7f) {
        this.pos += buf.write(s, this.pos, 'utf8');
        return;
      }
      buf[pos++] = c;
    }
    this.pos = pos;
  }

  /** Exactly the bytes of JSON.stringify(s). */
  jsonString(s: string): void {
    const n = s.length;
    this.room(n + 2);
    const buf = this.buf;
    let pos = this.pos;
    buf[pos++] = 0x22;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) {
        this.text(JSON.stringify(s));
        return;
      }
      buf[pos++] = c;
    }
    buf[pos++] = 0x22;
    this.pos = pos;
  }

  /** Hands over the last chunk; returns every kept chunk. */
  end(): Buffer[] {
    this.cut();
    return this.chunks;
  }
}
