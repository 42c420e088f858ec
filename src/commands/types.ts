/**
 * The shape of a chat command. Commands are objects in a registry (see registry.ts), each with
 * its own permission level and cooldowns keyed by Twitch user id; none is a branch of a switch.
 */
import type { ChatMessage } from '../shared/chat.js';

export type Permission = 'everyone' | 'subscriber' | 'vip' | 'moderator' | 'broadcaster';

export interface CommandContext {
  msg: ChatMessage;
  /** The name the user typed, lower-cased, without prefix (may be an alias). */
  invokedAs: string;
  /** Whitespace-split arguments after the command name. */
  args: string[];
  /** Everything after the command name, trimmed. */
  argText: string;
  /** Queues a reply in the channel through the outbox. */
  reply(text: string): void;
}

export interface Command {
  /** Canonical name without prefix, e.g. `enter`. */
  name: string;
  aliases?: string[];
  permission: Permission;
  cooldown?: {
    /** Per Twitch user id. */
    userMs?: number;
    /** For the whole channel. */
    globalMs?: number;
    /** Moderators and the broadcaster skip cooldowns unless this is true. */
    appliesToMods?: boolean;
    /**
     * Subcommands (first argument, lower case) counted on cooldown times of their own, so
     * `!merch train` right after `!merch` still answers (same lengths as the command's).
     */
    subcommands?: readonly string[];
  };
  execute(ctx: CommandContext): void | Promise<void>;
}

/** Moderators and the broadcaster: who may run a command's privileged forms. */
export function isModerator(msg: ChatMessage): boolean {
  return msg.roles.moderator || msg.roles.broadcaster;
}
