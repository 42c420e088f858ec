/**
 * The operator pages' scripts are typed against the APIs they read (issue 47): renaming a field
 * of the dashboard's API (dashboard-api.ts) or of the overlay's state (overlay-view.ts), producer
 * and type together as a refactor would, makes `npm run typecheck` fail in the page script that
 * reads it, instead of breaking the page silently.
 *
 * How: a copy of src/ in a temporary folder (node_modules linked), checked with the pages' own
 * project (src/web/operator/pages/tsconfig.json, the second half of `npm run typecheck`) by the
 * project's TypeScript: the copy as it is passes; with `prize` renamed in DashboardWinner and
 * `headline` in OverlayDraw (and where the server fills them), it fails, naming both page scripts.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from './support/e2e-stack.js';

const TSC = join(PROJECT_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

function typecheck(root: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [TSC, '--noEmit', '-p', join(root, 'src', 'web', 'operator', 'pages')],
      { cwd: root, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` });
      },
    );
  });
}

/** Replaces `from` (which must be there, `times` times) by `to` in `file`. */
async function rename(file: string, from: string, to: string, times: number): Promise<void> {
  const text = await readFile(file, 'utf8');
  expect(text.split(from).length - 1, `${from} in ${file}`).toBe(times);
  await writeFile(file, text.split(from).join(to));
}

describe('page scripts typed against their APIs', { timeout: 240_000 }, () => {
  let root: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'giftdrop-page-types-'));
    await cp(join(PROJECT_ROOT, 'src'), join(root, 'src'), { recursive: true });
    await cp(join(PROJECT_ROOT, 'tsconfig.json'), join(root, 'tsconfig.json'));
    await symlink(join(PROJECT_ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  });

  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('the pages check as they are', async () => {
    const r = await typecheck(root);
    expect(r.out).toBe('');
    expect(r.code).toBe(0);
  });

  it('a field renamed in the dashboard API and in the overlay state fails the check in the page scripts that read them', async () => {
    const api = join(root, 'src', 'web', 'operator', 'dashboard-api.ts');
    const view = join(root, 'src', 'web', 'operator', 'overlay-view.ts');
    // the type and where the server fills it: the server side still checks, only the pages do not
    await rename(api, '  prize: PrizeState | null;', '  prizeState: PrizeState | null;', 1);
    await rename(api, '          prize: prizeOf(', '          prizeState: prizeOf(', 1);
    await rename(view, '  headline: string;', '  title: string;', 1);
    await rename(view, '    headline,\n', '    title: headline,\n', 1);
    const r = await typecheck(root);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(
      /pages\/dashboard\.ts\(\d+,\d+\): error TS2339: Property 'prize' does not exist on type 'DashboardWinner'/,
    );
    expect(r.out).toMatch(
      /pages\/overlay\.ts\(\d+,\d+\): error TS2339: Property 'headline' does not exist on type 'OverlayDraw'/,
    );
    // nothing else failed: the server code that fills them was renamed with them
    expect(r.out.split('\n').filter((l) => /error TS/.test(l) && !/pages\/(dashboard|overlay)\.ts/.test(l))).toEqual(
      [],
    );
  });
});
