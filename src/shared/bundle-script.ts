/**
 * One script from one entry module, bundled by esbuild into a single minified file
 * (`bundleScript`): for browsers an IIFE (the verify page's and the setup page's scripts), for
 * Node a CommonJS file (the beacon's round-check worker). Each is used either as the copy
 * scripts/package.mjs prebuilt into the single executable (which carries no bundler) or bundled
 * on first use and kept for the process, a failed bundle tried again on the next use
 * (`prebuiltOrBundled`). The operator pages' ES modules have their own build
 * (web/operator/page-scripts.ts).
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Bundles the module `name` (without extension) beside `importMetaUrl`, for browsers or for Node. */
export async function bundleScript(importMetaUrl: string, name: string, runsIn: 'browser' | 'node'): Promise<string> {
  const entry = fileURLToPath(new URL(`./${name}${extname(fileURLToPath(importMetaUrl))}`, importMetaUrl));
  const { build } = await import('esbuild');
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    ...(runsIn === 'browser'
      ? { format: 'iife', platform: 'browser', target: 'es2020' }
      : { format: 'cjs', platform: 'node', target: 'node22' }),
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return out.outputFiles[0]!.text;
}

/** The script: `prebuilt` when the executable defines it, else `bundle()` once (again after a failure). */
export function prebuiltOrBundled(prebuilt: string | undefined, bundle: () => Promise<string>): () => Promise<string> {
  let bundled: Promise<string> | undefined;
  return () => {
    if (prebuilt !== undefined) return Promise.resolve(prebuilt);
    bundled ??= bundle();
    bundled.catch(() => (bundled = undefined));
    return bundled;
  };
}
