/**
 * The Linux single executable (release/giftdrop-linux-x64, made by `npm run package`) carries
 * everything it runs: copied into a folder of its own with a `.env` beside it, and started from
 * ANOTHER, empty folder, with no node_modules in either folder or above them, it plays the whole
 * sandbox demo (exit 0, winners), keeps its data where the `.env` beside it says, and its
 * subcommands read that data: `history --json` lists the draws, `verify <id> --html` writes the
 * page with its browser script (prebuilt at package time: no bundler in the executable).
 * Skipped, saying so, when the executable was not built (CI builds it before the tests).
 */
import { copyFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, makeTempDir } from './support/e2e-stack.js';
import { runProcess } from './support/sandbox-mode-spawn.js';

const EXE = join(PROJECT_ROOT, 'release', 'giftdrop-linux-x64');
const built = existsSync(EXE) && process.platform === 'linux' && process.arch === 'x64';
const skipped = built ? '' : ' [SKIPPED: release/giftdrop-linux-x64 was not built on this linux-x64 machine; npm run package builds it]';
if (!built) console.warn(`test/executable.test.ts${skipped}`);

/** The folders from `dir` up to the root that hold a node_modules. */
function nodeModulesAbove(dir: string): string[] {
  const found: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules'))) found.push(d);
    if (dirname(d) === d) return found;
  }
}

let temp: { dir: string; cleanup: () => Promise<void> };
let home: string; // the executable and its .env
let start: string; // the empty folder it is started from
let exe: string;

beforeAll(async () => {
  temp = await makeTempDir('giftdrop-exe-');
  home = join(temp.dir, 'giftdrop');
  start = join(temp.dir, 'elsewhere');
  await mkdir(home);
  await mkdir(start);
  exe = join(home, 'giftdrop-linux-x64');
  if (built) await copyFile(EXE, exe);
  // No credentials: the sandbox demo; the data folder as the .env beside the executable says.
  await writeFile(join(home, '.env'), 'DATA_DIR=saved-data\r\n');
});
afterAll(async () => {
  await temp?.cleanup();
});

describe.skipIf(!built)(`the Linux single executable${skipped}`, () => {
  it('plays the sandbox demo from an empty folder with no node_modules anywhere, then lists and verifies its draws', async () => {
    expect(nodeModulesAbove(home)).toEqual([]);
    expect(nodeModulesAbove(start)).toEqual([]);

    const demo = await runProcess(exe, [], {}, 240_000, start);
    expect(demo.stderr).not.toMatch(/Cannot find module|DEP0040|ExperimentalWarning/);
    expect({ code: demo.code, tail: demo.stdout.slice(-400) }).toMatchObject({ code: 0 });
    expect(demo.stdout).toMatch(/Gift draw finished: @\w+.* won/);
    // The data went where the .env beside the executable says; the folder it was started from stays empty.
    expect(existsSync(join(home, 'saved-data', 'sandbox', 'history.json'))).toBe(true);
    expect(await readdir(start)).toEqual([]);

    const history = await runProcess(exe, ['history', '--json'], {}, 60_000, start);
    expect(history.code).toBe(0);
    const draws = JSON.parse(history.stdout) as { id: string; kind: string; status: string; winners: unknown[] }[];
    expect(draws.length).toBeGreaterThanOrEqual(3);
    const gift = draws.find((d) => d.kind === 'gift-draw');
    expect(gift).toMatchObject({ status: 'finished' });
    expect(gift!.winners.length).toBeGreaterThan(0);

    const page = await runProcess(exe, ['verify', gift!.id, '--html'], {}, 60_000, start);
    expect(page.code).toBe(0);
    expect(page.stdout).toMatch(/^<!doctype html>/i);
    const script = page.stdout.split('<script>')[1]?.split('</script>')[0] ?? '';
    expect(script.length).toBeGreaterThan(10_000); // the browser script (with the BLS code), inlined

    const version = await runProcess(exe, ['--version'], {}, 30_000, start);
    expect(version.stdout).toMatch(/^giftdrop \d+\.\d+\.\d+ \(Node\.js v\d+/);
    const unknown = await runProcess(exe, ['histroy'], {}, 30_000, start);
    expect({ code: unknown.code, stderr: unknown.stderr }).toEqual({ code: 2, stderr: 'giftdrop: unknown command "histroy": run giftdrop --help for the commands.\n' });
  }, 420_000);
});
