/**
 * The public verify page in a real headless Chromium: the known-answer vectors recomputed in the
 * browser (WebCrypto + bundled @noble/curves) give the same winners as Node; tampering makes the
 * page say NOT verified; a live draw resting on a sandbox beacon is rejected in the browser with
 * the words `npm run verify` uses; the page is served at GET /verify/<id> by the bot's HTTP server over a
 * real socket and written by `npm run verify -- <id> --html`; it carries no links and shows
 * viewer-supplied text as text.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { runVerifyCli } from '../src/cli/verify.js';
import type { DrawRecord } from '../src/giveaway/model.js';
import { startHttpServer, type BotHttpServer } from '../src/http/server.js';
import { verifyRoute } from '../src/web/public/verify-route.js';
import { silentLogger } from '../src/logging/index.js';
import { SANDBOX_BEACON_ON_LIVE_DRAW } from '../src/fairness/beacon-policy.js';
import { randomnessOf } from '../src/fairness/drand.js';
import { FileDrawRepository } from '../src/storage/index.js';
import { renderVerifyPage } from '../src/web/public/verify-page.js';
import { KNOWN_ANSWERS, sandboxRecord, vectorRecord } from './support/beacon-vectors.js';
import { captureIo } from './support/cli-io.js';
import { openRecord, tempDataDir } from './support/storage-helpers.js';
import { finishedRecord } from './support/fairness-records.js';
import { HAS_CHROMIUM, launchBrowser, type TestBrowser } from './support/browser.js';

// Evaluated in the page (the project's TypeScript lib has no DOM types).
declare const document: {
  body: { dataset: Record<string, string | undefined> };
  getElementById(id: string): { textContent: string | null } | null;
};

let dir: string;
let cleanup: () => Promise<void>;
let repo: FileDrawRepository;
let http: BotHttpServer;
let browser: TestBrowser | undefined;

function tamperedSignature(): DrawRecord {
  const r = { ...sandboxRecord({ id: 'forged-sig' }) };
  const b = r.fairness.beacon as { signature: string; randomness: string };
  b.signature = KNOWN_ANSWERS[0]!.signature;
  b.randomness = randomnessOf(b.signature);
  return r;
}

/** Frozen at FROZEN_AT; its first pick was set aside on a Twitch answer from 21 s before (looked up while entries were open). */
const FROZEN_AT = '2026-01-01T12:00:00.000Z';
const EARLY_ANSWER = '2026-01-01T11:59:39.000Z';
function earlyAnswerRecord(): DrawRecord {
  const r = finishedRecord({ id: 'early-answer', entrants: 12, winners: 3 });
  const [first, ...rest] = r.winners;
  return {
    ...r,
    winners: rest,
    setAside: [
      { pick: first!.pick, userId: first!.userId, login: first!.login, reason: 'follow-age', at: EARLY_ANSWER },
    ],
    fairness: { ...r.fairness, frozenAt: FROZEN_AT },
  };
}

/** A gift draw handed back (1 eligible entrant for 3 gifts): failed, no winners, drawn from the seed alone. */
const HANDED_BACK_REASON =
  'only 1 eligible entrant for 3 gifts; Fourthwall takes one winner per gift, so no winners were sent and it reopens the draw with the same gifts after its deadline';
function handedBackRecord(): DrawRecord {
  const r = finishedRecord({ id: 'handed-back', entrants: 1, winners: 0 });
  return {
    ...r,
    kind: 'gift-draw',
    gifts: 3,
    status: 'failed',
    winners: [],
    failure: { reason: HANDED_BACK_REASON, at: r.closedAt! },
  };
}

beforeAll(async () => {
  ({ dir, cleanup } = await tempDataDir());
  repo = await FileDrawRepository.open(dir);
  for (const v of KNOWN_ANSWERS) await repo.saveDraw(vectorRecord(v));
  await repo.saveDraw(sandboxRecord({ id: 'sandbox-rerolls', entrants: 30, winners: 2, rerolls: 2 }));
  await repo.saveDraw(tamperedSignature());
  const badLog = sandboxRecord({ id: 'bad-reroll-log', rerolls: 2 });
  badLog.rerolls = [badLog.rerolls![1]!, badLog.rerolls![0]!];
  await repo.saveDraw(badLog);
  await repo.saveDraw({ ...openRecord('still-open'), status: 'open' });
  await repo.saveDraw(finishedRecord({ id: 'v1-draw', entrants: 25, winners: 2, rerollPicks: [1] }));
  await repo.saveDraw(earlyAnswerRecord());
  await repo.saveDraw(handedBackRecord());
  // An honestly computed sandbox-beacon draw, but recorded as a live draw.
  await repo.saveDraw({ ...sandboxRecord({ id: 'live-on-sandbox' }), mode: 'live' });
  http = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    logger: silentLogger(),
    secrets: {},
    onEvent: () => undefined,
    seenEvent: () => false,
    health: () => ({ status: 'ok', mode: 'sandbox', chat: 'connected', openDraws: 0 }),
    // (one browser on this machine opens every page here: the build budgets are test-sized up;
    // the limits themselves are tested in http-surfaces.test.ts)
    routes: [
      verifyRoute(repo, silentLogger(), {
        clientBuildLimit: { perSecond: 100, burst: 1000 },
        buildLimit: { perSecond: 100, burst: 1000 },
      }),
    ],
  });
  if (HAS_CHROMIUM) browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await http?.close();
  await repo?.close();
  await cleanup();
});

async function verdictOf(page: Page): Promise<{ verdict: string; winners: string; checks: string; status: string }> {
  await page.waitForFunction(() => document.body.dataset.verdict !== 'pending', undefined, { timeout: 30_000 });
  return page.evaluate(() => ({
    verdict: document.body.dataset.verdict ?? '',
    winners: document.getElementById('computed-winners')!.textContent ?? '',
    checks: document.getElementById('checks')!.textContent ?? '',
    status: document.getElementById('status')!.textContent ?? '',
  }));
}

describe('GET /verify/<id> (real socket)', () => {
  it('serves the page, 404 for an unknown draw, 409 while the seed is unrevealed', async () => {
    const ok = await fetch(`${http.url}/verify/draw-kat-a`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/text\/html/);
    const html = await ok.text();
    expect(html).toContain("default-src 'none'");
    expect(html).not.toContain('secret.example'); // redeem links never reach the page
    expect(html).not.toContain('Hoodie <b>'); // viewer/offer text only inside escaped JSON
    expect((await fetch(`${http.url}/verify/nope`)).status).toBe(404);
    const open = await fetch(`${http.url}/verify/still-open`);
    expect(open.status).toBe(409);
    expect(await open.text()).toMatch(/not revealed yet/);
  });
});

describe.skipIf(!HAS_CHROMIUM)('the verify page in headless Chromium', () => {
  for (const v of KNOWN_ANSWERS) {
    it(`${v.label}: recomputes the known-answer winners in the browser (${v.winners.join(', ')})`, async () => {
      const page = await browser!.context.newPage();
      await page.goto(`${http.url}/verify/draw-${v.label}`);
      const r = await verdictOf(page);
      expect(r.status).toMatch(/^Verified in your browser/);
      expect(r.verdict).toBe('verified');
      expect(r.winners).toBe(v.winners.join(', '));
      expect(r.checks).toContain(`drand quicknet round ${v.round}`);
      expect(r.checks).toContain(`SHA-256(seed) = ${v.commitment}`);
      expect(r.checks).toContain(`SHA-256 of the canonical list = ${v.digest}`);
      expect(await page.locator('#title').textContent()).toBe(`Draw draw-${v.label}: Hoodie <b>&`);
      expect(await page.locator('#entrants tr').count()).toBe(v.entrantCount);
      await page.close();
    });
  }

  it('verifies a sandbox draw with rerolls and says it was a sandbox beacon', async () => {
    const page = await browser!.context.newPage();
    await page.goto(`${http.url}/verify/sandbox-rerolls`);
    const r = await verdictOf(page);
    expect(r.verdict).toBe('verified');
    expect(r.checks).toMatch(/SANDBOX beacon/);
    // the sandbox's own test key is named for what it is, never "Public beacon"
    expect(r.checks).toContain("✔ Sandbox's local beacon: ");
    expect(r.checks).not.toContain('Public beacon');
    expect(r.checks).toMatch(/2 rerolls took the next picks/);
    await page.close();
  });

  it('still verifies a draw made before the beacon (giftdrop-hmac-sha256-v1)', async () => {
    const page = await browser!.context.newPage();
    await page.goto(`${http.url}/verify/v1-draw`);
    const r = await verdictOf(page);
    expect(r.verdict).toBe('verified');
    expect(r.checks).toContain('giftdrop-hmac-sha256-v1');
    expect(r.checks).not.toContain('Public beacon');
    await page.close();
  });

  it('says NOT verified for a forged beacon signature and for an out-of-sequence reroll log', async () => {
    const page = await browser!.context.newPage();
    await page.goto(`${http.url}/verify/forged-sig`);
    const a = await verdictOf(page);
    expect(a.verdict).toBe('failed');
    expect(a.status).toMatch(/NOT verified/);
    expect(a.checks).toMatch(/BLS signature does NOT verify/);
    await page.goto(`${http.url}/verify/bad-reroll-log`);
    const b = await verdictOf(page);
    expect(b.verdict).toBe('failed');
    expect(b.checks).toMatch(/reroll 1 took pick 4, the next unused pick was 3/);
    await page.close();
  });

  it('a failed draw nobody won says so plainly and why, and claims no announcement chat never made', async () => {
    const page = await browser!.context.newPage();
    await page.goto(`${http.url}/verify/handed-back`);
    const r = await verdictOf(page);
    expect(r.verdict).toBe('verified');
    expect(await page.evaluate(() => document.body.dataset.outcome)).toBe('nobody');
    expect(r.status).toBe(
      `Nobody won this draw: ${HANDED_BACK_REASON}. Checked in your browser: every check below passed (the seed and the entrant list are the ones committed).`,
    );
    expect(r.winners).toBe(`Nobody won this draw: ${HANDED_BACK_REASON}`);
    expect(r.checks).toContain(`nobody won this draw (${HANDED_BACK_REASON}), so no pick stands`);
    expect(r.checks).toContain('1 entrant;');
    // drawn from the seed alone: the digest was recorded, never said in chat
    expect(r.checks).not.toMatch(/announced at close/);
    expect(r.checks).toMatch(/recorded at close: [0-9a-f]{64}/);
    expect(r.checks).not.toMatch(/pick\(s\)|entrants;/);
    await page.close();
  });

  it('explains a set-aside pick whose Twitch answer is older than the freeze (looked up while entries were open)', async () => {
    const page = await browser!.context.newPage();
    await page.goto(`${http.url}/verify/early-answer`);
    const r = await verdictOf(page);
    expect(r.verdict).toBe('verified');
    expect(r.checks).toContain(
      `(follow-age; Twitch answered at ${EARLY_ANSWER}, while entries were open; the rule was applied to that answer when the list was frozen at ${FROZEN_AT})`,
    );
    await page.close();
  });

  it('rejects a live draw resting on a sandbox beacon, in the words npm run verify uses', async () => {
    const c = captureIo(dir);
    expect(await runVerifyCli(['live-on-sandbox'], c.io)).not.toBe(0);
    expect(c.out() + c.err()).toContain(SANDBOX_BEACON_ON_LIVE_DRAW);
    const page = await browser!.context.newPage();
    await page.goto(`${http.url}/verify/live-on-sandbox`);
    const r = await verdictOf(page);
    expect(r.verdict).toBe('failed');
    expect(r.status).toMatch(/NOT verified/);
    expect(r.checks).toContain(`✘ Sandbox's local beacon: ${SANDBOX_BEACON_ON_LIVE_DRAW}`);
    // The same record in sandbox mode verifies: it is the mode, not the data, that is refused.
    await page.goto(`${http.url}/verify/sandbox-rerolls`);
    expect((await verdictOf(page)).verdict).toBe('verified');
    await page.close();
  });

  it('npm run verify -- <id> --html writes a self-contained page that verifies offline', async () => {
    const c = captureIo(dir);
    expect(await runVerifyCli(['draw-kat-b', '--html'], c.io)).toBe(0);
    expect(c.err()).toMatch(/verifies; page written/);
    const file = join(dir, 'draw.html');
    await writeFile(file, c.out());
    const page = await browser!.context.newPage();
    const requests: string[] = [];
    page.on('request', (req) => requests.push(req.url()));
    await page.goto(pathToFileURL(file).href);
    const r = await verdictOf(page);
    expect(r.verdict).toBe('verified');
    expect(r.winners).toBe(KNOWN_ANSWERS[1]!.winners.join(', '));
    expect(requests).toEqual([pathToFileURL(file).href]); // nothing else is fetched
    await page.close();
  });

  it("a page edited after generation (an entrant's weight) fails in the browser", async () => {
    const record = vectorRecord(KNOWN_ANSWERS[0]!);
    const html = (await renderVerifyPage(record)).replace('"viewer_3",4]', '"viewer_3",5]');
    expect(html).toContain('"viewer_3",5]');
    const file = join(dir, 'edited.html');
    await writeFile(file, html);
    const page = await browser!.context.newPage();
    await page.goto(pathToFileURL(file).href);
    const r = await verdictOf(page);
    expect(r.verdict).toBe('failed');
    expect(r.checks).toMatch(/✘ Entrant list/);
    await page.close();
  });
});
