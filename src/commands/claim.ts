/**
 * `!claim`: a winner confirms being present while a claim window is open. Anyone else typing it
 * gets no reply (no chat noise); the engine announces each claim.
 */
import type { GiveawayEngine } from '../giveaway/engine.js';
import type { Command } from './types.js';

/** The claim command over `engine`. */
export function claimCommand(engine: Pick<GiveawayEngine, 'claim'>, name = 'claim', aliases: string[] = []): Command {
  return {
    name,
    aliases,
    permission: 'everyone',
    execute(ctx) {
      engine.claim(ctx.msg);
    },
  };
}
