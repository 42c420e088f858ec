/**
 * `!stream live`, `!stream offline`, `!stream`: moderators and the broadcaster set or read the
 * Fourthwall streaming status. Failures are answered in chat to the mod who asked.
 */
import type { StreamingService } from '../streaming/service.js';
import type { Command } from './types.js';

export function streamCommand(streaming: StreamingService, name = 'stream', aliases: string[] = []): Command {
  return {
    name,
    aliases,
    permission: 'moderator',
    cooldown: { globalMs: 3000, appliesToMods: true },
    async execute(ctx) {
      const sub = (ctx.args[0] ?? '').toLowerCase();
      const who = `@${ctx.msg.displayName}`;
      try {
        if (sub === 'live' || sub === 'start' || sub === 'online') {
          await streaming.goLive();
          ctx.reply(`${who} Fourthwall now shows the stream as LIVE: gifting is open.`);
        } else if (sub === 'offline' || sub === 'end' || sub === 'stop') {
          await streaming.goOffline();
          ctx.reply(`${who} Fourthwall now shows the stream as offline.`);
        } else if (sub === '' || sub === 'status') {
          const s = await streaming.status();
          ctx.reply(`${who} Fourthwall streaming status: ${s.status}${s.broadcasterLogin ? ` (${s.broadcasterLogin})` : ''}.`);
        } else {
          ctx.reply(`${who} usage: !${ctx.invokedAs} live | offline`);
        }
      } catch (err) {
        ctx.reply(`${who} could not update Fourthwall streaming status: ${(err as Error).message}`);
        throw err;
      }
    },
  };
}
