/**
 * scripts/build.mjs's freshness check (it runs on every `npm start`): a manifest of mtimes lets an
 * unchanged tree skip listing directories, and every kind of change still rebuilds; and the one-file
 * zod it writes for dist/ (scripts/vendor.mjs). Runs the real build (TypeScript's transpiler,
 * esbuild) on small projects in temp folders.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSummary, ensureBuilt } from '../scripts/build.mjs';

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
let root: string;
const src = (p: string) => join(root, 'src', p);
const dist = (p: string) => join(root, 'dist', p);
const HOUR_AGO = new Date(Date.now() - 3_600_000);

/** Writes a file and dates it (and its folder, as the edit would have) an hour back. */
function writeOld(path: string, text: string): void {
  writeFileSync(path, text);
  utimesSync(path, HOUR_AGO, HOUR_AGO);
}

function ageTree(): void {
  for (const dir of ['', 'sub']) utimesSync(src(dir), HOUR_AGO, HOUR_AGO);
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'giftdrop-build-'));
  mkdirSync(src('sub'), { recursive: true });
  writeFileSync(
    join(root, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', strict: true, isolatedModules: true } }),
  );
  writeOld(src('a.ts'), 'export const a: number = 1;\n');
  writeOld(src('sub/b.ts'), "export const b: string = 'b';\n");
  writeOld(src('page.html'), '<p>one</p>\n');
  ageTree();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('ensureBuilt', () => {
  it('builds everything once, then finds the tree fresh from the manifest without listing it', () => {
    expect(ensureBuilt({ root })).toMatchObject({ built: 3, removed: 0, listed: true });
    expect(readFileSync(dist('a.js'), 'utf8')).toContain('export const a = 1;');
    expect(readFileSync(dist('page.html'), 'utf8')).toBe('<p>one</p>\n');
    expect(ensureBuilt({ root })).toEqual({ built: 0, removed: 0, listed: false });
  });

  it('rebuilds a source edited in place (its folder unchanged)', () => {
    writeFileSync(src('a.ts'), 'export const a: number = 2;\n');
    ageTree();
    expect(ensureBuilt({ root })).toMatchObject({ built: 1, removed: 0 });
    expect(readFileSync(dist('a.js'), 'utf8')).toContain('export const a = 2;');
    utimesSync(src('a.ts'), HOUR_AGO, HOUR_AGO);
    ensureBuilt({ root }); // records the new date
    expect(ensureBuilt({ root })).toEqual({ built: 0, removed: 0, listed: false });
  });

  it('rebuilds a file saved by rename (as editors do), builds an added one, removes the output of a deleted one', () => {
    writeFileSync(src('page.html.tmp'), '<p>two</p>\n');
    renameSync(src('page.html.tmp'), src('page.html'));
    writeFileSync(src('sub/c.ts'), 'export const c = 3;\n');
    rmSync(src('sub/b.ts'));
    expect(ensureBuilt({ root })).toMatchObject({ built: 2, removed: 1 });
    expect(readFileSync(dist('page.html'), 'utf8')).toBe('<p>two</p>\n');
    expect(readFileSync(dist('sub/c.js'), 'utf8')).toContain('export const c = 3;');
    expect(existsSync(dist('sub/b.js'))).toBe(false);
  });

  it('rebuilds an output that was deleted, and everything when tsconfig.json changes', () => {
    for (const p of ['a.ts', 'page.html', 'sub/c.ts']) utimesSync(src(p), HOUR_AGO, HOUR_AGO);
    ageTree();
    ensureBuilt({ root });
    expect(ensureBuilt({ root })).toEqual({ built: 0, removed: 0, listed: false });
    rmSync(dist('sub/c.js'));
    expect(ensureBuilt({ root })).toMatchObject({ built: 1, removed: 0 });
    expect(existsSync(dist('sub/c.js'))).toBe(true);
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, 'tsconfig.json'), later, later);
    expect(ensureBuilt({ root })).toMatchObject({ built: 3, removed: 0 });
  });

  it('does not trust a manifest whose recorded times are as recent as its own listing', () => {
    writeFileSync(src('sub/d.ts'), 'export const d = 4;\n'); // now: within the racy window
    expect(ensureBuilt({ root })).toMatchObject({ built: 1, listed: true });
    // The folder's and d.ts's times are recent: the tree is listed again (nothing to build).
    expect(ensureBuilt({ root })).toEqual({ built: 0, removed: 0, listed: true });
  });
});

describe('the one-file zod that dist/ loads (scripts/vendor.mjs)', () => {
  let project: string;
  beforeAll(() => {
    project = mkdtempSync(join(tmpdir(), 'giftdrop-vendor-'));
    mkdirSync(join(project, 'src'));
    symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(project, 'node_modules'), 'dir');
    writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', strict: true, isolatedModules: true } }),
    );
    writeFileSync(
      join(project, 'src', 'check.ts'),
      [
        "import { z } from 'zod';",
        "const parsed = z.object({ port: z.coerce.number().int() }).safeParse({ port: 'x' });",
        "console.log(JSON.stringify({ from: import.meta.resolve('zod'), ok: parsed.success, issue: parsed.success ? '' : parsed.error.issues[0]?.message }));",
      ].join('\n'),
    );
  });
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  const run = () =>
    JSON.parse(execFileSync(process.execPath, [join(project, 'dist', 'check.js')], { encoding: 'utf8' })) as {
      from: string;
      ok: boolean;
      issue: string;
    };

  it('is bundled from the installed zod and used by the compiled code, with zod’s own messages', () => {
    const lines: string[] = [];
    ensureBuilt({ root: project, log: (l) => lines.push(l) });
    expect(lines.filter((l) => l.includes('not bundled'))).toEqual([]);
    const out = run();
    expect(out.from).toBe(pathToFileURL(join(project, 'dist', 'node_modules', 'zod', 'index.js')).href);
    expect(out).toMatchObject({ ok: false, issue: 'Invalid input: expected number, received NaN' });
    expect(ensureBuilt({ root: project }).built).toBe(0);
  });

  it('is written again when it is missing', () => {
    rmSync(join(project, 'dist', 'node_modules'), { recursive: true });
    ensureBuilt({ root: project });
    expect(existsSync(join(project, 'dist', 'node_modules', 'zod', 'index.js'))).toBe(true);
    expect(run().from).toContain('/dist/node_modules/zod/');
  });
});

describe("the build's closing line", () => {
  it('says what it did, never "up to date" beside files it built', () => {
    expect(buildSummary(0, 0)).toBe('dist/ was already up to date (nothing to build).');
    expect(buildSummary(211, 0)).toBe('built dist/ from src/: 211 files compiled.');
    expect(buildSummary(1, 2)).toBe('built dist/ from src/: 1 file compiled, 2 stale files removed.');
    expect(buildSummary(0, 1)).toBe('built dist/ from src/: 0 files compiled, 1 stale file removed.');
  });
});
