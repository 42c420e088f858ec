/**
 * `!merch`: everyone gets the shop link and a few products (from the cached catalog; the
 * channel-wide cooldown keeps it from flooding); `!merch train` shows the merch-train counter;
 * moderators and the broadcaster also get `soldout <product>` and `restock <product>`, which
 * change the product's availability at Fourthwall and confirm in chat. A viewer typing a
 * moderator subcommand just gets the merch line.
 */
import { isModerator, type Command } from './types.js';

export interface MerchActions {
  merchLine(): string;
  trainLine(): string;
  setAvailable(query: string, available: boolean): Promise<string>;
}

export function merchCommand(actions: MerchActions, options: { name?: string; cooldownMs: number }): Command {
  return {
    name: options.name ?? 'merch',
    permission: 'everyone',
    // `!merch train` answers something else than `!merch`: its own cooldown.
    cooldown: { globalMs: options.cooldownMs, userMs: options.cooldownMs, subcommands: ['train'] },
    async execute(ctx) {
      const sub = (ctx.args[0] ?? '').toLowerCase();
      if (sub === 'train') {
        ctx.reply(actions.trainLine());
        return;
      }
      if ((sub === 'soldout' || sub === 'restock') && isModerator(ctx.msg)) {
        ctx.reply(await actions.setAvailable(ctx.args.slice(1).join(' '), sub === 'restock'));
        return;
      }
      ctx.reply(actions.merchLine());
    },
  };
}
