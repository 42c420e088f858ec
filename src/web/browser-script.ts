/**
 * One page script for browsers, from one entry module: bundled by esbuild into a minified IIFE
 * (`bundleBrowserScript`), and served either as the copy scripts/package.mjs prebuilt into the
 * single executable (which carries no bundler) or bundled on first use and kept for the process,
 * a failed bundle retried on the next request (`prebuiltOrBundled`). Used by the verify page and
 * the setup page; the operator pages' ES modules have their own build (operator/page-scripts.ts).
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Bundles the module `name` (without extension) beside `importMetaUrl` for browsers. */
export async function bundleBrowserScript(importMetaUrl: string, name: string): Promise<string> {
  const entry = fileURLToPath(new URL(`./${name}${extname(fileURLToPath(importMetaUrl))}`, importMetaUrl));
  const { build } = await import('esbuild');
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
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
