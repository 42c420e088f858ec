/**
 * Builds dist/ from src/: each TypeScript file transpiled on its own (tsconfig sets
 * isolatedModules, so a per-file transpile means what tsc means), every other file copied (pages,
 * assets). Type checking is not its job: `npm run typecheck` (CI) does that.
 *
 * Contract: `ensureBuilt()` brings dist/ up to date and returns quickly when it already is: one
 * stat per source file, per output and per directory of src/, no directory listing (every start
 * runs this check). TypeScript is loaded only when something changed. A file is stale when its
 * output is missing or its mtime differs from the one dist/.build.json recorded when the output
 * was written (so an edit, a checkout or a revert all count). Outputs whose source is gone are
 * removed. A file added, removed or renamed changes its directory's mtime, and the manifest keeps
 * the mtime of every directory of src/, so only then are the trees listed again. Every output is written to a
 * temp file and renamed, so two starts building at once never leave a torn file. A change to
 * tsconfig.json or to this file rebuilds all. The one-file copies of some dependencies that dist/
 * loads (scripts/vendor.mjs, in dist/node_modules/) are rewritten when the installed package
 * changes or a copy is missing. `root` (tests) builds another tree the same way.
 * Run directly (`node scripts/build.mjs`, the package's `prepare` script, which `npm ci` runs) it
 * builds and exits non-zero only when a file could not be transpiled.
 */
import {
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { sameStamp, vendorStamp, writeVendored } from './vendor.mjs';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const srcDir = join(root, 'src');
export const distDir = join(root, 'dist');

/** The paths of the project at `base` (the real one unless a test passes its own). */
function layout(base = root) {
  const src = join(base, 'src');
  const dist = join(base, 'dist');
  return {
    src,
    dist,
    manifest: join(dist, '.build.json'),
    /** Files whose change rebuilds everything; their newest mtime is stamped in the manifest. */
    inputs: [
      join(base, 'tsconfig.json'),
      fileURLToPath(import.meta.url),
      fileURLToPath(new URL('./vendor.mjs', import.meta.url)),
    ],
  };
}

/** Every file under `dir` (into `files`) and every directory, `dir` included (into `dirs`). */
function walk(dir, files = [], dirs = []) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return { files, dirs };
  }
  dirs.push(dir);
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, files, dirs);
    else if (e.isFile()) files.push(p);
  }
  return { files, dirs };
}

const isTs = (p) => p.endsWith('.ts') && !p.endsWith('.d.ts');
/** dist path of a src file: .ts -> .js, anything else as is. */
const outputOf = (l, src) => join(l.dist, relative(l.src, src)).replace(/\.ts$/, (m) => (isTs(src) ? '.js' : m));

function mtime(p) {
  return statSync(p, { throwIfNoEntry: false })?.mtimeMs;
}

/** The manifest: each source's mtime when its output was written, the build inputs' mtime, src/'s directories' mtimes. */
function readManifest(l) {
  try {
    const m = JSON.parse(readFileSync(l.manifest, 'utf8'));
    return { inputs: m.inputs, files: m.files ?? {}, dirs: m.dirs, listedAt: m.listedAt, vendor: m.vendor };
  } catch {
    return { inputs: undefined, files: {}, dirs: undefined, listedAt: undefined, vendor: undefined };
  }
}

/** A recorded mtime this close to the listing is not trusted (file times tick coarsely). */
const RACY_MS = 2000;

/**
 * True when the manifest shows dist/ up to date without listing a directory: the build inputs,
 * every directory of src/ (so no file was added, removed or renamed) and every source file have
 * the mtimes it recorded, and every source's output exists. As git does with racily clean
 * entries, a manifest recording an mtime within RACY_MS of its own listing does not count: a
 * change in the same clock tick as the listing would leave the mtime unchanged.
 */
function unchanged(l, manifest, inputs, vendor) {
  if (manifest.inputs !== inputs || !manifest.dirs || typeof manifest.listedAt !== 'number') return false;
  if (!sameStamp(manifest.vendor, vendor)) return false;
  const racy = (t) => t === undefined || t >= manifest.listedAt - RACY_MS;
  for (const [dir, t] of Object.entries(manifest.dirs)) if (racy(t) || mtime(join(l.src, dir)) !== t) return false;
  for (const [rel, t] of Object.entries(manifest.files)) {
    const src = join(l.src, rel);
    if (racy(t) || mtime(src) !== t || mtime(outputOf(l, src)) === undefined) return false;
  }
  return true;
}

/** What is out of date: sources to (re)build and outputs to delete. */
export function staleness({ root: base } = {}) {
  const l = layout(base);
  const inputs = Math.max(...l.inputs.map((p) => mtime(p) ?? 0));
  const manifest = readManifest(l);
  const vendor = vendorStamp(dirname(l.src));
  const fresh = unchanged(l, manifest, inputs, vendor);
  if (fresh)
    return {
      l,
      all: false,
      inputs,
      build: [],
      orphans: [],
      sources: Object.keys(manifest.files).length,
      manifest,
      fresh,
    };
  const all = manifest.inputs !== inputs;
  const listedAt = Date.now();
  const tree = walk(l.src);
  const sources = tree.files.filter((p) => !p.endsWith('.d.ts'));
  const wanted = new Set(sources.map((s) => outputOf(l, s)));
  const stamps = new Map(sources.map((s) => [s, mtime(s)]));
  const srcDirs = new Map(tree.dirs.map((d) => [d, mtime(d)]));
  const build = sources.filter(
    (s) => all || manifest.files[relative(l.src, s)] !== stamps.get(s) || mtime(outputOf(l, s)) === undefined,
  );
  const vendored = join(l.dist, 'node_modules');
  const orphans = walk(l.dist).files.filter((p) => p !== l.manifest && !wanted.has(p) && !p.startsWith(vendored));
  const revendor = all || !sameStamp(manifest.vendor, vendor);
  return {
    l,
    all,
    inputs,
    build,
    orphans,
    sources: sources.length,
    stamps,
    srcDirs,
    listedAt,
    manifest,
    fresh,
    revendor,
  };
}

function writeAtomically(file, data) {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  if (typeof data === 'string') writeFileSync(tmp, data);
  else copyFileSync(data.copyFrom, tmp);
  renameSync(tmp, file);
}

function compilerOptions(ts, base) {
  const read = ts.readConfigFile(join(base, 'tsconfig.json'), ts.sys.readFile);
  if (read.error) throw new Error(`tsconfig.json: ${ts.flattenDiagnosticMessageText(read.error.messageText, '\n')}`);
  const parsed = ts.convertCompilerOptionsFromJson(read.config.compilerOptions ?? {}, base);
  // ES modules out (package.json says "type": "module"; a lone file cannot tell NodeNext that).
  return {
    ...parsed.options,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    noEmit: false,
    declaration: false,
    sourceMap: false,
    inlineSourceMap: false,
  };
}

/**
 * Brings dist/ up to date. Returns what it did: `{ built, removed, listed }` (0, 0, false when
 * the manifest showed it fresh; listed: the trees were listed). `log` receives one line when it
 * has work to do.
 */
export function ensureBuilt({ log = () => undefined, root: base } = {}) {
  const s = staleness({ root: base });
  if (s.fresh) return { built: 0, removed: 0, listed: false };
  const l = s.l;
  if (s.build.length > 0)
    log(`giftdrop: building dist/ from src/ (${s.build.length} of ${s.sources} files changed)...`);
  let ts;
  if (s.build.some(isTs)) {
    try {
      ts = createRequire(import.meta.url)('typescript');
    } catch {
      throw new Error('dist/ is missing or older than src/ and the TypeScript compiler is not installed: run npm ci');
    }
  }
  const options = ts ? compilerOptions(ts, dirname(l.src)) : undefined;
  const failures = [];
  for (const src of s.build) {
    const out = outputOf(l, src);
    if (!isTs(src)) {
      writeAtomically(out, { copyFrom: src });
      continue;
    }
    const result = ts.transpileModule(readFileSync(src, 'utf8'), {
      compilerOptions: options,
      fileName: src,
      reportDiagnostics: true,
    });
    const errors = (result.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
    if (errors.length) {
      failures.push(
        `${relative(dirname(l.src), src)}: ${errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' ')).join('; ')}`,
      );
      continue;
    }
    writeAtomically(out, result.outputText);
  }
  for (const o of s.orphans) rmSync(o, { force: true });
  if (failures.length) throw new Error(`could not transpile:\n  ${failures.join('\n  ')}`);
  if (s.revendor)
    for (const problem of writeVendored(dirname(l.src))) log(`giftdrop: ${problem} (dist/ uses the installed package)`);
  const files = {};
  for (const [src, t] of s.stamps) files[relative(l.src, src)] = t;
  // src/'s directories as they were when the sources were listed: a file added since is seen next time.
  const dirs = {};
  for (const [d, t] of s.srcDirs) dirs[relative(l.src, d) || '.'] = t;
  const vendor = vendorStamp(dirname(l.src));
  writeAtomically(
    l.manifest,
    JSON.stringify({ builtBy: 'scripts/build.mjs', inputs: s.inputs, listedAt: s.listedAt, files, dirs, vendor }),
  );
  return { built: s.build.length, removed: s.orphans.length, listed: true };
}

/** What a build did, in words: "dist/ was already up to date" or "built dist/: 211 files compiled, 2 removed". */
export function buildSummary(built, removed) {
  if (built === 0 && removed === 0) return 'dist/ was already up to date (nothing to build).';
  const parts = [`${built} ${built === 1 ? 'file' : 'files'} compiled`];
  if (removed > 0) parts.push(`${removed} stale ${removed === 1 ? 'file' : 'files'} removed`);
  return `built dist/ from src/: ${parts.join(', ')}.`;
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  try {
    const { built, removed } = ensureBuilt();
    console.error(`giftdrop: ${buildSummary(built, removed)}`);
  } catch (err) {
    console.error(`giftdrop: build failed: ${err.message}`);
    process.exit(1);
  }
}
