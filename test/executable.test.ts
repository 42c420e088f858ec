/**
 * The Linux single executable (release/giftdrop-linux-x64, made by `npm run package`) carries
 * everything it runs, keeps its data beside itself and speaks as itself (shared contract "The
 * single executables and their release"). Copied into a folder of its own and started from
 * ANOTHER, empty folder, with no node_modules in either folder or above them and no .env anywhere,
 * it plays the whole sandbox demo (exit 0, winners) with its data beside itself, and the folder it
 * was started from stays empty; every command it names is its own file's (never npm). Its
 * subcommands read that data: `history --json` lists the draws, `verify <id> --html` writes the
 * page with its browser script (prebuilt at package time: no bundler in the executable). Then the
 * .env rules: the one beside it is read (DATA_DIR relative to it), the one in the start folder wins.
 * Skipped, saying so, when the executable was not built (CI builds it before the tests).
 */
import { copyFile, mkdir, readdir, rename, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, makeTempDir } from './support/e2e-stack.js';
import { runProcess } from './support/sandbox-mode-spawn.js';

const EXE = join(PROJECT_ROOT, 'release', 'giftdrop-linux-x64');
const built = existsSync(EXE) && process.platform === 'linux' && process.arch === 'x64';
const skipped = built
  ? ''
  : ' [SKIPPED: release/giftdrop-linux-x64 was not built on this linux-x64 machine; npm run package builds it]';
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
});
afterAll(async () => {
  await temp?.cleanup();
});

/** Never a clone's wording in what the executable prints. */
const NPM_WORDING = /\bnpm (run|start|test)\b|\.env\.example/;

describe.skipIf(!built)(`the Linux single executable${skipped}`, () => {
  it('plays the sandbox demo from an empty folder with no node_modules and no .env anywhere: data beside itself, naming itself; then lists and verifies its draws', async () => {
    expect(nodeModulesAbove(home)).toEqual([]);
    expect(nodeModulesAbove(start)).toEqual([]);

    const demo = await runProcess(exe, [], {}, 240_000, start);
    expect(demo.stderr).not.toMatch(/Cannot find module|DEP0040|ExperimentalWarning/);
    expect({ code: demo.code, tail: demo.stdout.slice(-400) }).toMatchObject({ code: 0 });
    expect(demo.stdout).toMatch(/Gift draw finished: @\w+.* won/);
    // Started from another folder, it names itself by its full path (a POSIX shell there runs that).
    expect(demo.stdout).toContain(`Anyone can re-check it: ${exe} verify gdr_`);
    expect(demo.stdout).toContain(`See them with: ${exe} history`);
    expect(demo.stdout + demo.stderr).not.toMatch(NPM_WORDING);
    // No .env anywhere: the data went beside the executable; the folder it was started from stays empty.
    expect(existsSync(join(home, 'data', 'sandbox', 'history.jsonl'))).toBe(true);
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

    // The .env beside it is read, its DATA_DIR taken relative to it.
    await rename(join(home, 'data'), join(home, 'saved-data'));
    await writeFile(join(home, '.env'), 'DATA_DIR=saved-data\r\n');
    const beside = await runProcess(exe, ['history', '--json'], {}, 60_000, start);
    expect((JSON.parse(beside.stdout) as unknown[]).length).toBe(draws.length);
    // A .env in the folder it is started from wins, and that folder is where it works.
    await writeFile(join(start, '.env'), 'DATA_DIR=other-data\n');
    const own = await runProcess(exe, ['history'], {}, 60_000, start);
    expect({ code: own.code, stdout: own.stdout }).toEqual({
      code: 0,
      stdout: `no draws yet (${join(start, 'other-data', 'sandbox', 'history.jsonl')})\n`,
    });
  }, 420_000);

  it('names itself in its help, usage lines and errors: ./<file> in its own folder, its full path from another', async () => {
    const version = await runProcess(exe, ['--version'], {}, 30_000, start);
    expect(version.stdout).toMatch(/^giftdrop \d+\.\d+\.\d+ \(Node\.js v26\./);

    const help = await runProcess(exe, ['--help'], {}, 30_000, home);
    expect(help.stdout).toMatch(/^usage: \.\/giftdrop-linux-x64 \[command\]\n/);
    expect(help.stdout).toContain('(./giftdrop-linux-x64 history --help for the options)');
    // What the bare command and setup do now: the setup page, in the browser or in this terminal.
    expect(help.stdout).toMatch(
      /\(none\) +run the bot: until it is set up, the sandbox demo and the setup page it\n +prints/,
    );
    expect(help.stdout).toMatch(/setup +the setup page in this terminal \(for a machine without a browser\)/);
    expect(help.stdout).not.toContain('check every setting in .env');
    const historyHelp = await runProcess(exe, ['history', '--help'], {}, 30_000, home);
    expect(historyHelp.stdout).toMatch(/^usage: \.\/giftdrop-linux-x64 history \[--json/);
    const verifyUsage = await runProcess(exe, ['verify'], {}, 30_000, start);
    expect(verifyUsage.code).toBe(2);
    expect(verifyUsage.stderr).toContain(`usage: ${exe} verify [--sandbox | --live] <draw id> [--html]`);
    expect(verifyUsage.stderr).toContain(`(${exe} verify <id> --html > draw.html)`);

    const unknown = await runProcess(exe, ['histroy'], {}, 30_000, home);
    expect({ code: unknown.code, stderr: unknown.stderr }).toEqual({
      code: 2,
      stderr: 'giftdrop: unknown command "histroy": run ./giftdrop-linux-x64 --help for the commands.\n',
    });

    // A bad setting: one line naming it, and where settings go (this download has no .env.example).
    await writeFile(join(start, '.env'), 'HTTP_PORT=eighty\n');
    const bad = await runProcess(exe, [], {}, 60_000, start);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('HTTP_PORT: must be a port number');
    expect(bad.stderr).toContain("See docs/settings.md in giftdrop's repository");
    expect(bad.stderr).toContain('settings go in a file named .env beside the executable');
    for (const out of [help, historyHelp, verifyUsage, unknown, bad])
      expect(out.stdout + out.stderr).not.toMatch(NPM_WORDING);
  }, 180_000);
});
