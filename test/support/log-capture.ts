/** A pino destination that keeps every line, for asserting on captured logs. */
import { Writable } from 'node:stream';

export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    for (const line of String(chunk).split('\n')) if (line.trim()) this.lines.push(line);
    cb();
  }
  text(): string {
    return this.lines.join('\n');
  }
  json(): Record<string, unknown>[] {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}
