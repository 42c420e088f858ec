/**
 * `!promo [code]` (moderators and the broadcaster; no cooldown): announces a live promotion code from the
 * shop (the given one when it is live, else the first live one).
 */
import type { Command } from './types.js';

export function promoCommand(promoLine: (code?: string) => Promise<string>, name = 'promo'): Command {
  return {
    name,
    permission: 'moderator',
    async execute(ctx) {
      ctx.reply(await promoLine(ctx.args[0]));
    },
  };
}
