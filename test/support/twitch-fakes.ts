/** Fakes of the chat transport port and small helpers for the twitch/ and commands/ tests. */
import type { Clock } from '../../src/shared/clock.js';
import type { ChatMessage, ChatRoles } from '../../src/shared/chat.js';
import { noRoles } from '../../src/shared/chat.js';
import { createLogger, type Logger } from '../../src/logging/index.js';
import { NotSentError, type ChatTransport } from '../../src/twitch/outbox.js';
import { LogCapture } from './log-capture.js';

export interface Written {
  at: number;
  channel: string;
  text: string;
}

/**
 * A transport that records every line with the clock time it was written. While `connected` is
 * false it refuses with NotSentError (certainly not written); `failNext` makes the next write
 * fail with an error of unknown outcome.
 */
export class FakeTransport implements ChatTransport {
  readonly written: Written[] = [];
  connected = true;
  failNext: Error | undefined;
  constructor(private readonly clock: Clock) {}

  async send(channel: string, text: string): Promise<void> {
    if (!this.connected) throw new NotSentError('not connected');
    if (this.failNext) {
      const err = this.failNext;
      this.failNext = undefined;
      throw err;
    }
    this.written.push({ at: this.clock.now(), channel, text });
  }

  texts(): string[] {
    return this.written.map((w) => w.text);
  }
}

/** Lets queued promise callbacks (transport resolutions) run. Not a sleep: no time passes. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
  await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A logger whose JSON lines are kept for assertions. */
export function capturingLogger(level = 'debug'): { logger: Logger; capture: LogCapture } {
  const capture = new LogCapture();
  return { logger: createLogger({ destination: capture, level }), capture };
}

export function roles(partial: Partial<ChatRoles> = {}): ChatRoles {
  return { ...noRoles, ...partial };
}

let seq = 0;
/** A ChatMessage as the parser would build it. */
export function chatMessage(text: string, partial: Partial<ChatMessage> = {}): ChatMessage {
  seq++;
  return {
    id: `msg-${seq}`,
    channel: 'giftdrop_demo',
    channelId: '424242',
    userId: '5550001',
    login: 'viewer',
    displayName: 'Viewer',
    text,
    roles: roles(),
    bits: 0,
    action: false,
    sentAt: Date.UTC(2026, 0, 1),
    self: false,
    ...partial,
  };
}
