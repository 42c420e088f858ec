/**
 * `!stream live`, `!stream offline`, `!stream`: moderators and the broadcaster set or read the
 * Fourthwall streaming status. Failures are answered in chat to the mod who asked.
 */
import type { StreamingService } from '../streaming/service.js';
import type { Command } from './types.js';

/** Auto streaming (src/twitch/stream-watch.ts), when on: a manual setting holds until the stream changes. */
export interface AutoStreaming {
  override(kind: 'live' | 'offline'): void;
  nextStep(): string;
}

export function streamCommand(
  streaming: StreamingService,
  name = 'stream',
  aliases: string[] = [],
  auto: () => AutoStreaming | undefined = () => undefined,
): Command {
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
          auto()?.override('live');
          ctx.reply(`${who} Fourthwall now shows the stream as LIVE: gifting is open.${next(auto())}`);
        } else if (sub === 'offline' || sub === 'end' || sub === 'stop') {
          await streaming.goOffline();
          auto()?.override('offline');
          ctx.reply(`${who} Fourthwall now shows the stream as offline.${next(auto())}`);
        } else if (sub === '' || sub === 'status') {
          const s = await streaming.status();
          ctx.reply(`${who} Fourthwall streaming status: ${s.status}${s.broadcasterLogin ? ` (${s.broadcasterLogin})` : ''}.${next(auto())}`);
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

function next(a: AutoStreaming | undefined): string {
  return a ? ` ${a.nextStep()}` : '';
}
