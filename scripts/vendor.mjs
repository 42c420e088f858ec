/**
 * One-file copies, for dist/, of the dependencies whose many small ES modules dominate start-up:
 * zod is ~95 modules, and Node resolves, reads and compiles ES modules one at a time (about 70 ms
 * of CPU for zod alone; its one-file bundle loads in well under half of that).
 *
 * How: dist/node_modules/<name>/ holds an esbuild bundle of the INSTALLED package (same version,
 * same code, nothing patched) and a package.json. Node resolves a bare `import ... from 'zod'` in
 * dist/ to the nearest node_modules folder, so the compiled code uses the bundle with no import
 * rewritten, while src/ (tsx, vitest, tsc) keeps using node_modules/ as before.
 *
 * Contract: `vendorStamp(base)` is what the build manifest records: per vendored package, the
 * installed package.json's mtime (an `npm ci` or update changes it) and whether the bundle exists;
 * the build rewrites the bundles when it differs. `writeVendored(base)` (re)writes every bundle; a
 * bundle that cannot be made is removed (dist/ then uses the installed package: slower, never
 * wrong; tried again when the installed package changes) and its reason returned. Only packages
 * imported by their bare name alone (`from 'zod'`, no subpath) may be listed.
 */
import { mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** The vendored packages. */
export const VENDORED = ['zod'];

const bundleOf = (base, name) => join(base, 'dist', 'node_modules', name, 'index.js');
const installedOf = (base, name) => join(base, 'node_modules', name, 'package.json');

/** `{ name: "<mtime of the installed package.json> <bundled|missing>" }`. */
export function vendorStamp(base) {
  const stamp = {};
  for (const name of VENDORED) {
    const installed = statSync(installedOf(base, name), { throwIfNoEntry: false })?.mtimeMs ?? 'none';
    const bundled = statSync(bundleOf(base, name), { throwIfNoEntry: false }) !== undefined;
    stamp[name] = `${installed} ${bundled ? 'bundled' : 'missing'}`;
  }
  return stamp;
}

/** True when two stamps name the same installed packages and bundles. */
export const sameStamp = (a, b) => !!a && !!b && VENDORED.every((n) => a[n] === b[n]);

/** Writes every bundle. Returns the problems (one line each); an empty list when all were made. */
export function writeVendored(base) {
  const problems = [];
  let esbuild;
  try {
    esbuild = createRequire(import.meta.url)('esbuild');
  } catch (err) {
    esbuild = undefined;
    problems.push(`esbuild is not installed (${err.message.split('\n')[0]})`);
  }
  for (const name of VENDORED) {
    const out = bundleOf(base, name);
    const dir = join(base, 'dist', 'node_modules', name);
    try {
      if (!esbuild) throw new Error('no bundler');
      const result = esbuild.buildSync({
        stdin: {
          contents: `export * from '${name}';\nexport { default } from '${name}';\n`,
          resolveDir: base,
          loader: 'js',
        },
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        write: false,
        logLevel: 'silent',
        legalComments: 'inline',
      });
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, 'package.json'),
        JSON.stringify({ name, private: true, type: 'module', exports: { '.': './index.js' } }),
      );
      const tmp = `${out}.${process.pid}.tmp`;
      writeFileSync(
        tmp,
        `// ${name}: esbuild bundle of node_modules/${name} made by scripts/vendor.mjs (start-up speed); do not edit.\n${result.outputFiles[0].text}`,
      );
      renameSync(tmp, out);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      problems.push(`${name} not bundled: ${err.message.split('\n')[0]}`);
    }
  }
  return problems;
}
