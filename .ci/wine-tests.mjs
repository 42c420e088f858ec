/**
 * TEST-ONLY, for the Windows job of .ci/run: `node .ci/wine-tests.mjs <out dir> <test files...>`
 * bundles each vitest file (TypeScript, with the modules it imports) into <out dir>/<name>.test.mjs
 * for Node's own runner (`node --test`), run there by Node's Windows build under Wine: esbuild
 * here, on Linux (its Windows binary does not run under Wine 8), `vitest` resolved to
 * .ci/wine-vitest.mjs. Exits 1 with the bundler's message when a file cannot be bundled.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const [out, ...files] = process.argv.slice(2);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
try {
  for (const file of files) {
    await build({
      entryPoints: [file],
      outfile: join(out, basename(file).replace(/\.ts$/, '.mjs')),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      alias: { vitest: fileURLToPath(new URL('./wine-vitest.mjs', import.meta.url)) },
      // CommonJS dependencies call require(): give the ES module one.
      banner: { js: "import { createRequire as __giftdropRequire } from 'node:module'; const require = __giftdropRequire(import.meta.url);" },
      logLevel: 'error',
    });
  }
} catch (err) {
  console.error(`wine-tests: ${err.message.split('\n')[0]}`);
  process.exit(1);
}
