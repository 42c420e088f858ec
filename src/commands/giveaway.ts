/**
 * `!giveaway`: everyone gets the status line (rate-limited by the command's cooldowns);
 * moderators and the broadcaster also get `start <product> [winners] [seconds]`, `end`, `cancel`,
 * `reroll <login>` and `retry`. The base permission is everyone, so the roles are checked here;
 * a viewer typing a moderator subcommand just gets the status.
 */
import type { GiveawayEngine } from '../giveaway/engine.js';
import { isModerator, type Command, type CommandContext } from './types.js';

type GiveawayActions = Pick<
  GiveawayEngine,
  'status' | 'startLinkGiveaway' | 'endNow' | 'cancel' | 'reroll' | 'retryLinks'
>;

/** Splits `start` arguments: the product query, then up to two trailing whole numbers. */
export function parseStartArgs(args: readonly string[]): { query: string; winners?: number; seconds?: number } {
  const rest = [...args];
  const nums: number[] = [];
  while (nums.length < 2 && rest.length > 1 && /^\d+$/.test(rest[rest.length - 1]!)) {
    nums.unshift(Number(rest.pop()));
  }
  const [winners, seconds] = nums;
  return {
    query: rest.join(' '),
    ...(winners !== undefined ? { winners } : {}),
    ...(seconds !== undefined ? { seconds } : {}),
  };
}

/** The giveaway command over `engine`. */
export function giveawayCommand(
  engine: GiveawayActions,
  name = 'giveaway',
  aliases: string[] = [],
  /** One extra line for the status reply, e.g. why entrants were excluded at the last close. */
  note: () => string | undefined = () => undefined,
): Command {
  const subcommands: Record<string, (ctx: CommandContext, args: string[]) => Promise<void> | void> = {
    async start(ctx, args) {
      const { query, winners, seconds } = parseStartArgs(args);
      if (!query) {
        ctx.reply(`Usage: !${ctx.invokedAs} start <product id, slug or name> [winners] [seconds]`);
        return;
      }
      const res = await engine.startLinkGiveaway(ctx.msg, query, winners, seconds);
      if (!res.ok) ctx.reply(res.message);
    },
    end(ctx) {
      if (engine.endNow() === 0) ctx.reply('No giveaway is open.');
    },
    async cancel(ctx) {
      const res = await engine.cancel();
      if (!res.ok) ctx.reply(res.message);
    },
    async reroll(ctx, args) {
      const res = await engine.reroll(args[0] ?? '', ctx.msg);
      if (!res.ok) ctx.reply(res.message);
    },
    async retry(ctx) {
      const res = await engine.retryLinks();
      ctx.reply(res.ok ? 'Links delivered.' : res.message);
    },
  };
  return {
    name,
    aliases,
    permission: 'everyone',
    cooldown: { userMs: 30_000, globalMs: 10_000 },
    async execute(ctx) {
      const sub = (ctx.args[0] ?? '').toLowerCase();
      const handler = Object.hasOwn(subcommands, sub) ? subcommands[sub] : undefined;
      if (handler && isModerator(ctx.msg)) {
        await handler(ctx, ctx.args.slice(1));
        return;
      }
      const extra = note();
      ctx.reply(extra ? `${engine.status()} ${extra}` : engine.status());
    },
  };
}
