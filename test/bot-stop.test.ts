/**
 * What a stop reports (issue 32), in process against the local stack: a stop whose saves went well
 * resolves (the process then exits 0); a stop that could not save the open draws rejects with
 * StopIncomplete naming what was not saved (the process then exits 1 with that line), after
 * running to its end (the HTTP server is closed, chat left). The journal's flush is made to fail
 * with ENOSPC through the repository wrapper the engine uses.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { StopIncomplete } from '../src/app/bot.js';
import { FailingSaves } from './support/failing-repository.js';
import { makeTempDir, setShopLive, startInProcessStack, waitUntil, type InProcessStack } from './support/e2e-stack.js';

class FlushFails extends FailingSaves {
  failFlush = false;
  override flush() {
    if (this.failFlush)
      return Promise.reject(
        Object.assign(new Error('ENOSPC: no space left on device, write (injected)'), { code: 'ENOSPC' }),
      );
    return super.flush();
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function stackWithOpenDraw(): Promise<{ s: InProcessStack; repo: () => FlushFails }> {
  const temp = await makeTempDir('giftdrop-bot-stop-');
  cleanups.push(temp.cleanup);
  let repo: FlushFails | undefined;
  const s = await startInProcessStack({
    dataDir: temp.dir,
    bot: { wrapRepository: (r) => (repo = new FlushFails(r)) },
  });
  cleanups.push(async () => {
    await s.chatServer.close();
    await s.fourthwall.close();
  });
  setShopLive({ fourthwall: s.fourthwall, chat: s.chatServer });
  s.fourthwall.control.simulateGiftPurchase({ quantity: 1, username: 'kind_fan', durationSeconds: 300 });
  await waitUntil(() => s.bot.engine.openDrawCount() === 1, 10_000, 'a draw open');
  return { s, repo: () => repo! };
}

describe('bot.stop', { timeout: 60_000 }, () => {
  it('resolves when everything was saved', async () => {
    const { s } = await stackWithOpenDraw();
    await expect(s.bot.stop('test')).resolves.toBeUndefined();
    expect(s.logs.json().some((l) => l.msg === 'stopped')).toBe(true);
  });

  it('rejects with StopIncomplete naming what could not be saved, after stopping everything else', async () => {
    const { s, repo } = await stackWithOpenDraw();
    repo().failFlush = true;
    const err = await s.bot.stop('test').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StopIncomplete);
    expect((err as Error).message).toBe(
      'stopped, but the open draws could not be saved (ENOSPC: no space left on device, write (injected))',
    );
    // it ran to its end: the HTTP server is closed and chat was left
    await expect(fetch(`${s.bot.http.url}/healthz`)).rejects.toThrow();
    expect(s.bot.chat.state).toBe('disconnected');
    expect(s.logs.json().some((l) => l.msg === 'stopped')).toBe(false);
  });
});
