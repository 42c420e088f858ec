/**
 * Builds dist/ from src/: each TypeScript file transpiled on its own (tsconfig sets
 * isolatedModules, so a per-file transpile means what tsc means), every other file copied (pages,
 * assets). Type checking is not its job: `npm run typecheck` (CI) does that.
 *
 * Contract: `ensureBuilt()` brings dist/ up to date and returns quickly when it already is (one
 * stat per source and output file; TypeScript is loaded only when something changed). A file is
 * stale when its output is missing or its mtime differs from the one dist/.build.json recorded
 * when the output was written (so an edit, a checkout or a revert all count). Outputs whose
 * source is gone are removed. Every output is written to a temp file and renamed, so two starts
 * building at once never leave a torn file. A change to tsconfig.json or to this file rebuilds all.
 * Run directly (`node scripts/build.mjs`, the package's `prepare` script, which `npm ci` runs) it
 * builds and exits non-zero only when a file could not be transpiled.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const srcDir = join(root, 'src');
export const distDir = join(root, 'dist');
/** Files whose change rebuilds everything; their newest mtime is stamped on dist/.build. */
const BUILD_INPUTS = [join(root, 'tsconfig.json'), fileURLToPath(import.meta.url)];
const MANIFEST = join(distDir, '.build.json');

function walk(dir, out = []) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile()) out.push(p);
  }
  return out;
}

const isTs = (p) => p.endsWith('.ts') && !p.endsWith('.d.ts');
/** dist path of a src file: .ts -> .js, anything else as is. */
const outputOf = (src) => join(distDir, relative(srcDir, src)).replace(/\.ts$/, (m) => (isTs(src) ? '.js' : m));

function mtime(p) {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return undefined;
  }
}

/** The manifest: each source's mtime when its output was written, and the build inputs' mtime. */
function readManifest() {
  try {
    const m = JSON.parse(readFileSync(MANIFEST, 'utf8'));
    return { inputs: m.inputs, files: m.files ?? {} };
  } catch {
    return { inputs: undefined, files: {} };
  }
}

/** What is out of date: sources to (re)build and outputs to delete. */
export function staleness() {
  const inputs = Math.max(...BUILD_INPUTS.map((p) => mtime(p) ?? 0));
  const manifest = readManifest();
  const all = manifest.inputs !== inputs;
  const sources = walk(srcDir).filter((p) => !p.endsWith('.d.ts'));
  const wanted = new Set(sources.map(outputOf));
  const stamps = new Map(sources.map((s) => [s, mtime(s)]));
  const build = sources.filter((s) => all || manifest.files[relative(srcDir, s)] !== stamps.get(s) || mtime(outputOf(s)) === undefined);
  const orphans = walk(distDir).filter((p) => p !== MANIFEST && !wanted.has(p));
  return { all, inputs, build, orphans, sources: sources.length, stamps, manifest };
}

function writeAtomically(file, data) {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  if (typeof data === 'string') writeFileSync(tmp, data);
  else copyFileSync(data.copyFrom, tmp);
  renameSync(tmp, file);
}

function compilerOptions(ts) {
  const read = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
  if (read.error) throw new Error(`tsconfig.json: ${ts.flattenDiagnosticMessageText(read.error.messageText, '\n')}`);
  const parsed = ts.convertCompilerOptionsFromJson(read.config.compilerOptions ?? {}, root);
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
 * Brings dist/ up to date. Returns what it did: `{ built, removed }` (both 0 when fresh).
 * `log` receives one line when it has work to do.
 */
export function ensureBuilt({ log = () => undefined } = {}) {
  const s = staleness();
  if (s.build.length === 0 && s.orphans.length === 0 && !s.all) return { built: 0, removed: 0 };
  if (s.build.length > 0) log(`giftdrop: building dist/ from src/ (${s.build.length} of ${s.sources} files changed)...`);
  let ts;
  if (s.build.some(isTs)) {
    try {
      ts = createRequire(import.meta.url)('typescript');
    } catch {
      throw new Error('dist/ is missing or older than src/ and the TypeScript compiler is not installed: run npm ci');
    }
  }
  const options = ts ? compilerOptions(ts) : undefined;
  const failures = [];
  for (const src of s.build) {
    const out = outputOf(src);
    if (!isTs(src)) {
      writeAtomically(out, { copyFrom: src });
      continue;
    }
    const result = ts.transpileModule(readFileSync(src, 'utf8'), { compilerOptions: options, fileName: src, reportDiagnostics: true });
    const errors = (result.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
    if (errors.length) {
      failures.push(`${relative(root, src)}: ${errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' ')).join('; ')}`);
      continue;
    }
    writeAtomically(out, result.outputText);
  }
  for (const o of s.orphans) rmSync(o, { force: true });
  if (failures.length) throw new Error(`could not transpile:\n  ${failures.join('\n  ')}`);
  const files = {};
  for (const [src, t] of s.stamps) files[relative(srcDir, src)] = t;
  writeAtomically(MANIFEST, JSON.stringify({ builtBy: 'scripts/build.mjs', inputs: s.inputs, files }));
  return { built: s.build.length, removed: s.orphans.length };
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  try {
    const { built, removed } = ensureBuilt();
    console.error(`giftdrop: dist/ is up to date (${built} file(s) built, ${removed} removed).`);
  } catch (err) {
    console.error(`giftdrop: build failed: ${err.message}`);
    process.exit(1);
  }
}
