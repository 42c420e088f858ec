/**
 * The giveaway's chat commands in one registry, named as the settings say: `!enter`, `!giveaway`
 * (its status cooldown at least `statusCooldownMs`), `!claim` and `!stream`. The shop's commands
 * are added by src/shop/wire.ts; chat lines reach the registry through ChatLines (chat-lines.ts).
 */
import type { GiveawayEngine } from '../giveaway/engine.js';
import type { Logger } from '../logging/index.js';
import type { Clock } from '../shared/clock.js';
import type { ChatMessage } from '../shared/chat.js';
import type { StreamingService } from '../streaming/service.js';
import { claimCommand } from './claim.js';
import { enterCommand } from './enter.js';
import { giveawayCommand } from './giveaway.js';
import { CommandRegistry } from './registry.js';
import { streamCommand, type AutoStreaming } from './stream.js';

type CommandName = 'enter' | 'giveaway' | 'claim' | 'stream';

/** The commands' prefix, names and aliases (the settings file's `commands`, app/settings.ts). */
export interface CommandNames {
  prefix: string;
  names: Record<CommandName, string>;
  aliases: Partial<Record<CommandName, string[]>>;
  statusCooldownMs: number;
}

export function giveawayCommands(d: {
  names: CommandNames;
  engine: GiveawayEngine;
  streaming: StreamingService;
  /** One extra line for the `!giveaway` status (the account rules' summary). */
  statusNote: () => string | undefined;
  /** Auto streaming, when the stream watch runs. */
  autoStreaming: () => AutoStreaming | undefined;
  /** Whether a message may run a command at all (the Shared Chat rule, giveaway/shared-chat.ts). */
  admit?: (msg: ChatMessage, canonical: string) => boolean;
  clock: Clock;
  logger: Logger;
}): CommandRegistry {
  const { names, aliases, prefix, statusCooldownMs } = d.names;
  const registry = new CommandRegistry({
    clock: d.clock,
    logger: d.logger,
    prefix,
    ...(d.admit ? { admit: d.admit } : {}),
  });
  registry.register(enterCommand(d.engine, names.enter, aliases.enter ?? []));
  const gw = giveawayCommand(d.engine, names.giveaway, aliases.giveaway ?? [], d.statusNote);
  const globalMs = Math.max(gw.cooldown?.globalMs ?? 0, statusCooldownMs);
  registry.register({ ...gw, cooldown: { ...gw.cooldown, globalMs } });
  registry.register(claimCommand(d.engine, names.claim, aliases.claim ?? []));
  registry.register(streamCommand(d.streaming, names.stream, aliases.stream ?? [], d.autoStreaming));
  return registry;
}
