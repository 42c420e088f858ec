/**
 * `!enter`: joins every open giveaway, once per Twitch user id. Says nothing per entrant (the
 * engine batches acknowledgements); the broadcaster and the bot are never entrants.
 */
import type { GiveawayEngine } from '../giveaway/engine.js';
import type { Command } from './types.js';

/** The enter command over `engine`; name and aliases come from the registry's configuration. */
export function enterCommand(engine: Pick<GiveawayEngine, 'enter'>, name = 'enter', aliases: string[] = []): Command {
  return {
    name,
    aliases,
    permission: 'everyone',
    execute(ctx) {
      engine.enter(ctx.msg);
    },
  };
}
