/**
 * The beacon wired into the running bot: startLocalStack with the sandbox beacon (1 s rounds, the
 * real clock, as sandbox mode runs it), a moderator's link giveaway in the local chat server, the
 * close announcement and closing line in chat (a normal draw's chat: the codes, no 64-digit hash,
 * one fairness line), the finished record under drand-v2 marked as a sandbox beacon, `npm run verify` and the bot's own GET /verify/<id>. Waits are on events.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../src/local/local-stack.js';
import { runVerifyCli } from '../src/cli/verify.js';
import { loadConfig } from '../src/config/index.js';
import { FAIRNESS_ALGORITHM_V2 } from '../src/fairness/beacon-key.js';
import type { DrawRecord } from '../src/giveaway/model.js';
import { silentLogger } from '../src/logging/index.js';
import { captureIo } from './support/cli-io.js';
import { waitUntil } from './support/e2e-stack.js';

let dir: string;
/** Where the stack keeps its data (sandbox mode: DATA_DIR/sandbox). */
let dataDir: string;
let stack: LocalStack;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'giftdrop-beacon-stack-'));
  // With a public address (GIFTDROP_PUBLIC_URL) the closing line links the draw's verify page.
  const config = loadConfig({
    env: { DATA_DIR: dir, HTTP_PORT: '0', GIFTDROP_PUBLIC_URL: 'https://giveaways.example.com/' },
    dotenv: false,
    cwd: dir,
  });
  dataDir = config.dataDir;
  stack = await startLocalStack({
    config,
    logger: silentLogger(),
    operator: { notify: () => undefined },
    chat: { botIsMod: true },
    outbox: {},
    beacon: { period: 1 },
  });
}, 30_000);
afterAll(async () => {
  await stack?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the bot with the sandbox beacon', () => {
  it('announces digest and round at close, draws under drand-v2 and serves the verify page', async () => {
    const chat = stack.chatServer;
    const events = stack.bot.engine.events;
    const mod = chat.viewer('beacon_mod', { mod: true });
    const opened = new Promise<DrawRecord>((resolve) => events.once('draw-opened', resolve));
    chat.inject(mod, '!giveaway start giftdrop-mug 2 60');
    const open = await opened;
    for (const login of ['ana', 'ben', 'cai', 'dee']) chat.inject(chat.viewer(login), '!enter');
    await waitUntil(() => /4 entered/.test(stack.bot.engine.status()), 5000, 'four entrants');
    const finished = new Promise<DrawRecord>((resolve) => events.once('draw-finished', resolve));
    chat.inject(mod, '!giveaway end');
    const record = await finished;
    expect(record.id).toBe(open.id);

    const b = record.fairness.beacon;
    expect(record.fairness.algorithm).toBe(FAIRNESS_ALGORITHM_V2);
    expect(b).toMatchObject({
      chain: stack.beacon!.chain.hash,
      sandbox: { publicKey: stack.beacon!.chain.publicKey, period: 1 },
    });
    const round = (b as { round: number }).round;

    await waitUntil(() => chat.botMessages().some((l) => l.includes('Anyone can check draw')), 5000, 'the check line');
    const lines = chat.botMessages();
    const close = lines.findIndex(
      (l) =>
        l.includes(`(list code ${record.fairness.entrantsDigest!.slice(0, 16)})`) &&
        l.includes(`sandbox beacon round ${round} `),
    );
    const reveal = lines.findIndex(
      (l) => l === `🔎 Anyone can check draw ${open.id}: https://giveaways.example.com/verify/${open.id}`,
    );
    expect(close).toBeGreaterThanOrEqual(0);
    expect(reveal).toBeGreaterThan(close);

    // Chat says each thing once: the commitment and the list digest as 16-digit codes on the
    // opening and closing lines, no seed and no 64-digit hash, and ONE fairness line (where to check).
    await stack.bot.chat.flush();
    const said = chat.botMessages();
    expect(said.filter((l) => /[0-9a-f]{17}/.test(l))).toEqual([]);
    expect(said.filter((l) => /\b(seed|digest|commitment)\b/i.test(l))).toEqual([]);
    expect(said.filter((l) => /check draw|verify/i.test(l))).toEqual([lines[reveal]]);
    expect(said.find((l) => l.startsWith('🎉 Giveaway'))).toContain(
      `(draw code ${record.fairness.commitment.slice(0, 16)})`,
    );

    await stack.bot.repo.flush();
    const c = captureIo(dataDir);
    expect(await runVerifyCli([open.id], c.io)).toBe(0);
    expect(c.out()).toMatch(
      new RegExp(`SANDBOX beacon \\(local key, not drand\\) round ${round}: BLS signature valid`),
    );

    const page = await fetch(`${stack.bot.http.url}/verify/${encodeURIComponent(open.id)}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(record.fairness.entrantsDigest!);
    expect(html).not.toMatch(/redeem|\/gifts\//i);
  });
});
