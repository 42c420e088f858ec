/**
 * runSandboxMode's interactive prompt in process (input and output are streams the test holds):
 * typed chat goes out as the broadcaster, /gift opens a real Fourthwall sandbox draw announced
 * through the signed webhook, /viewers and /as add entrants, the draw finishes into the history,
 * /help and bad commands answer, and the shutdown callback (what Ctrl+C calls) ends streaming and
 * flushes the history. The configured HTTP port is taken, so the fallback to an OS port is used.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outputWaiter } from './support/output-wait.js';
import { loadConfig } from '../src/config/index.js';
import { silentLogger } from '../src/logging/index.js';
import { runSandboxMode } from '../src/local/sandbox-mode.js';
import { FileDrawRepository } from '../src/storage/index.js';

let dir: string;
let busy: Server;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'giftdrop-sandbox-interactive-'));
  busy = createServer();
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
});

afterAll(async () => {
  await new Promise<void>((r) => busy.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

/** The prompt's output stream (not a terminal), its text so far, and a wait for `predicate()`. */
function capturedOutput() {
  let text = '';
  const waiter = outputWaiter();
  const output = Object.assign(
    new Writable({
      write(chunk, _enc, cb) {
        text += String(chunk);
        waiter.changed();
        cb();
      },
    }),
    { isTTY: false },
  );
  return {
    output,
    text: () => text,
    until: (predicate: () => boolean, what: string, timeoutMs = 15_000) =>
      waiter.until(predicate, timeoutMs, () => new Error(`timed out waiting for ${what}`)),
  };
}

describe('interactive sandbox mode', () => {
  it('runs typed chat and demo commands against the live stack, and shuts down cleanly', async () => {
    const port = (busy.address() as AddressInfo).port;
    const config = loadConfig({
      env: { DATA_DIR: join(dir, 'data'), HTTP_PORT: String(port) },
      dotenv: false,
      cwd: dir,
    });
    config.settings = { ...config.settings, demo: { drawSeconds: 4, linkSeconds: 5, paceMs: 10 } };

    const screen = capturedOutput();
    const { output } = screen;
    const input = new PassThrough();
    let stop: ((reason: string) => Promise<void>) | undefined;

    const running = runSandboxMode({
      config,
      logger: silentLogger(),
      onSignals: (fn) => (stop = fn),
      input,
      output,
      interactive: true,
      colour: false,
      script: false,
    });

    await screen.until(() => screen.text().includes('Your turn'), 'the prompt');
    expect(screen.text()).toContain(`Port ${port} is in use`);
    expect(screen.text()).toContain('/viewers <n>');

    // The demo's stream is live on the local Twitch, so auto streaming opens the shop at start,
    // whenever its first poll lands: the broadcaster sets it offline first (no race with the poll).
    input.write('!stream offline\n');
    await screen.until(() => /bot> giftdrop_bot: .*offline/.test(screen.text()), 'the offline confirmation');
    input.write('/gift 1\n');
    await screen.until(() => /gifts only while the stream is live/.test(screen.text()), 'the not-live answer');

    // !stream has a 3 s cooldown (mods included) from the !stream offline above: wait it out.
    await new Promise((resolve) => setTimeout(resolve, 3100));
    const beforeLive = screen.text().length;
    input.write('!stream live\n');
    await screen.until(
      () => /bot> giftdrop_bot: .*LIVE/.test(screen.text().slice(beforeLive)),
      'the live confirmation',
    );

    input.write('/gift 2 mug\n');
    await screen.until(() => /Draw gdr_\S+ is open: 2x Giftdrop Mug/.test(screen.text()), 'the draw opening');
    expect(screen.text()).toContain('A simulated supporter, merch_enjoyer, buys 2x Giftdrop Mug');
    await screen.until(() => /bot> giftdrop_bot: .*gifted 2x Giftdrop Mug/.test(screen.text()), 'the announcement');
    input.write('/viewers 3\n');
    input.write('/as +sub6 bob !enter\n');
    input.write('/dance\n');
    await screen.until(() => /Draw gdr_\S+ finished: @/.test(screen.text()), 'the draw finishing', 20_000);
    expect(screen.text()).toContain('[chat] viewer_1: !enter');
    expect(screen.text()).toContain('[chat] viewer_3: !enter');
    expect(screen.text()).toContain('[chat] bob (sub 6 months): !enter');
    expect(screen.text()).toContain('unknown command /dance');
    expect(screen.text()).toMatch(/Entries of gdr_\S+ closed with 4 entrants/);
    expect(screen.text().match(/^\[private\] operator console: \[Giftdrop Mug\] link for @/gm)).toHaveLength(2);

    // A paid order: an alert in chat with the username and the product, never the buyer's email or address.
    input.write('/order mug\n');
    await screen.until(
      () => /bot> giftdrop_bot: .*\w+ just bought Giftdrop Mug\. Thank you!/.test(screen.text()),
      'the order alert',
    );
    expect(screen.text()).toMatch(/A simulated supporter, \w+, orders Giftdrop Mug/);
    expect(screen.text()).not.toMatch(/@example\.com|Private Lane/);

    expect(stop).toBeDefined();
    await stop!('SIGINT');
    expect(await running).toBe(0);
    expect(screen.text()).toContain('The stream ends');
    expect(screen.text()).toContain('Stopped.');

    const repo = await FileDrawRepository.open(config.dataDir, { logger: silentLogger() });
    try {
      const draws = await repo.listDraws();
      expect(draws).toHaveLength(1);
      expect(draws[0]).toMatchObject({ kind: 'gift-draw', status: 'finished', entrants: 4, gifts: 2 });
    } finally {
      await repo.close();
    }
  }, 40_000);

  it('acknowledges a line typed during the scripted stream at once, and runs it when the prompt opens', async () => {
    const config = loadConfig({ env: { DATA_DIR: join(dir, 'data-queued'), HTTP_PORT: '0' }, dotenv: false, cwd: dir });
    config.settings = { ...config.settings, demo: { drawSeconds: 3, linkSeconds: 5, paceMs: 10 } };
    const screen = capturedOutput();
    const { output } = screen;
    const input = new PassThrough();
    let stop: ((reason: string) => Promise<void>) | undefined;
    const running = runSandboxMode({
      config,
      logger: silentLogger(),
      onSignals: (fn) => (stop = fn),
      input,
      output,
      interactive: true,
      colour: false,
    });

    await screen.until(() => screen.text().includes('Twitch chat server:'), 'the stack');
    input.write('!giveaway\n');
    await screen.until(() => screen.text().includes('Queued "!giveaway"'), 'the queued note');
    expect(screen.text()).not.toContain('Done:');
    // The whole scripted stream runs first (since the demo shows winners claiming and redeeming it
    // is longer, and two test files share the machine's two cores): a generous bound on the script,
    // then the queued line must follow it.
    await screen.until(() => screen.text().includes('Done:'), 'the scripted stream to end', 75_000);
    await screen.until(() => screen.text().includes('Running queued "!giveaway"'), 'the queued line running', 15_000);
    expect(screen.text().indexOf('Running queued')).toBeGreaterThan(screen.text().indexOf('Done:'));
    await screen.until(
      () => /\[chat\] [^\n]*: !giveaway\n/.test(screen.text().slice(screen.text().indexOf('Running queued'))),
      'the line said in chat',
    );
    await stop!('SIGINT');
    expect(await running).toBe(0);
  }, 120_000);

  it("/shared: a partner channel's viewer speaks during Shared Chat; by default their !enter is not counted", async () => {
    const config = loadConfig({ env: { DATA_DIR: join(dir, 'data-shared'), HTTP_PORT: '0' }, dotenv: false, cwd: dir });
    config.settings = { ...config.settings, demo: { drawSeconds: 60, linkSeconds: 60, paceMs: 10 } };
    const screen = capturedOutput();
    const input = new PassThrough();
    let stop: ((reason: string) => Promise<void>) | undefined;
    const running = runSandboxMode({
      config,
      logger: silentLogger(),
      onSignals: (fn) => (stop = fn),
      input,
      output: screen.output,
      interactive: true,
      colour: false,
      script: false,
    });
    await screen.until(() => screen.text().includes('Your turn'), 'the prompt');
    expect(screen.text()).toContain('/shared [#partner] <login> <text>');

    input.write('!giveaway start mug 1 60\n');
    await screen.until(() => /Draw \S+ is open/.test(screen.text()), 'a draw open');
    input.write('/shared cozy_fan !enter\n');
    await screen.until(
      () =>
        screen.text().includes("Only your own viewers enter (the default): the bot does not count @cozy_fan's !enter"),
      'the rule said',
    );
    expect(screen.text()).toContain("Shared Chat with #cozy_partner (Twitch's Stream Together)");
    await screen.until(
      () => screen.text().includes('[chat] cozy_fan (Shared Chat, from #cozy_partner): !enter'),
      'the partner line in the transcript',
    );
    input.write('/as own_fan !enter\n');
    await screen.until(() => screen.text().includes('[chat] own_fan: !enter'), 'the own line');
    input.write('/shared #other_stream bob hi\n');
    await screen.until(() => screen.text().includes('Shared Chat with #other_stream'), 'a second partner');
    input.write('/shared end\n');
    await screen.until(
      () => screen.text().includes("Shared Chat ended: only your channel's chat again."),
      'the session ended',
    );
    input.write('!giveaway end\n');
    await screen.until(() => /Entries of \S+ closed with 1 entrant\b/.test(screen.text()), 'only own_fan counted');
    await stop!('SIGINT');
    expect(await running).toBe(0);
  }, 60_000);
});
