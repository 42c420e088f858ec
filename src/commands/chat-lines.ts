/**
 * Chat lines into the command registry, for a running bot: each line the chat client reads is
 * handed to `CommandRegistry.handle` with a reply that says in chat. While the bot starts (open
 * draws still being restored), the lines read are held, in order, at most EARLY_LINES_MAX (beyond,
 * the oldest go and a warning says how many), and handled right after `release()`, so no `!enter`
 * typed right after a (re)start finds its draw missing.
 *
 * Contract: a line whose handling throws is logged and never reaches the chat client; after
 * `release()` every line is handled at once, in the order read. Does not: know any command.
 */
import type { Logger } from '../logging/index.js';
import type { ChatMessage } from '../shared/chat.js';
import type { CommandRegistry } from './registry.js';

/** Chat lines held while the bot starts (chat connects meanwhile); beyond, the oldest go. */
const EARLY_LINES_MAX = 10_000;

export class ChatLines {
  private held: ChatMessage[] | undefined = [];
  private dropped = 0;

  constructor(
    private readonly registry: Pick<CommandRegistry, 'handle'>,
    private readonly reply: (text: string) => void,
    private readonly log: Logger,
  ) {}

  /** The chat client's 'message' listener. */
  readonly onMessage = (msg: ChatMessage): void => {
    const held = this.held;
    if (!held) return this.handle(msg);
    if (held.length >= EARLY_LINES_MAX) {
      held.shift();
      this.dropped++;
    }
    held.push(msg);
  };

  /** Handles the lines held so far, in order; every later line is handled as it comes. */
  release(): void {
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    if (this.dropped > 0)
      this.log.warn(
        { dropped: this.dropped, kept: held.length },
        'chat lines read while the bot started exceeded what it holds; the oldest were not handled',
      );
    for (const msg of held) this.handle(msg);
  }

  private handle(msg: ChatMessage): void {
    try {
      this.registry.handle(msg, this.reply);
    } catch (err) {
      this.log.error({ err }, 'chat message handling failed');
    }
  }
}
