/**
 * Start-up order (issue 27): chat connects beside the rest of the bot's start, and a chat line read
 * before the open draws are restored is held and handled right after, in order, never lost. The
 * real bot (startLocalStack) against the local chat server and Fourthwall sandbox over real
 * sockets, on one data directory run twice: the second run's restore of open draws is held (a
 * storage wrapper) until the bot has joined chat and a viewer's `!enter` has reached it (the chat
 * server's PING answered after that line proves the bot read it).
 */
import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { DrawRepository } from '../src/giveaway/ports.js';
import type { ChatServer } from '../src/sandbox/chat/index.js';
import { entrantsReach, nextDrawOpened, startLinkStack, tempDir } from './support/e2e-link-stack.js';

/** `repo` whose `openDraws()` (the restore at start) waits for `gate`. */
function restoreAfter(repo: DrawRepository, gate: Promise<void>): DrawRepository {
  return new Proxy(repo, {
    get(target, key) {
      if (key === 'openDraws') return async () => (await gate, target.openDraws());
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('start-up: chat beside the rest', () => {
  it('joins chat while the open draws are still being restored, and an !enter read meanwhile is entered into the restored draw', async () => {
    const dataDir = await tempDir();
    try {
      const first = await startLinkStack({ dataDir });
      let id: string;
      try {
        const opened = nextDrawOpened(first);
        first.say(first.mod, '!giveaway start giftdrop-mug 1 600');
        id = (await opened).id;
        const one = entrantsReach(first, id, 1);
        first.enter(['ana']);
        await one;
      } finally {
        await first.close();
      }

      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let joinedWhileRestoring = false;
      const second = await startLinkStack({
        dataDir,
        helix: {
          prepare: (_helix, chat: ChatServer) => {
            chat.on('join', (info) => {
              if (info.login !== chat.botLogin) return;
              joinedWhileRestoring = true;
              chat.inject(chat.viewer('early_bird'), '!enter');
              // The bot answers this PING after it read the line before it: then let the restore go on.
              void chat.ping(10_000).then(release, release);
            });
          },
        },
        bot: { wrapRepository: (repo) => restoreAfter(repo, gate) },
      });
      try {
        expect(joinedWhileRestoring).toBe(true);
        // The held line was handled right after the restore: the resumed draw has both entrants.
        await second.idle();
        expect(second.bot.engine.entrantCount(id)).toBe(2);
      } finally {
        await second.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 30_000);
});
