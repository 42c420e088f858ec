/**
 * `!stream live`, `!stream offline`, `!stream`: moderators and the broadcaster set or read the
 * Fourthwall streaming status. Failures are answered in chat to the mod who asked.
 */
import type { StreamingService } from '../streaming/service.js';
import type { Command } from './types.js';

/** Auto streaming (src/twitch/stream-watch.ts), when on: a manual setting holds until the stream changes. */
export interface AutoStreaming {
  /** Before the mod's call: auto mode changes nothing until `override` or `release`. */
  hold(): Promise<void>;
  override(kind: 'live' | 'offline'): void;
  release(): void;
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
          await byHand(auto(), 'live', () => streaming.goLive());
          ctx.reply(`${who} Fourthwall now shows the stream as LIVE: gifting is open.${next(auto())}`);
        } else if (sub === 'offline' || sub === 'end' || sub === 'stop') {
          await byHand(auto(), 'offline', () => streaming.goOffline());
          ctx.reply(`${who} Fourthwall now shows the stream as offline.${next(auto())}`);
        } else if (sub === '' || sub === 'status') {
          const s = await streaming.status();
          ctx.reply(
            `${who} Fourthwall streaming status: ${s.status}${s.broadcasterLogin ? ` (${s.broadcasterLogin})` : ''}.${next(auto())}`,
          );
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

/** The mod's call, with auto mode held so a poll on its way cannot undo it afterwards. */
async function byHand(
  a: AutoStreaming | undefined,
  kind: 'live' | 'offline',
  call: () => Promise<unknown>,
): Promise<void> {
  await a?.hold();
  try {
    await call();
  } catch (err) {
    a?.release();
    throw err;
  }
  a?.override(kind);
}

function next(a: AutoStreaming | undefined): string {
  return a ? ` ${a.nextStep()}` : '';
}
