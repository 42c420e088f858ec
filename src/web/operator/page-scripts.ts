/**
 * The operator pages' browser scripts, written as TypeScript modules in ./pages/ (typed against
 * the APIs they call: dashboard-api.ts, overlay-view.ts; checked by `npm run typecheck`, which
 * checks pages/tsconfig.json too) and bundled for the browser with esbuild:
 *   client     pages/client.ts     the auth plumbing (token store, authorised fetch, event
 *                                  streams), served as /dashboard/client.js and /overlay/client.js
 *   dashboard  pages/dashboard.ts  /dashboard/app.js
 *   overlay    pages/overlay.ts    /overlay/overlay.js
 * Each page imports `./client.js`, which stays an import in its bundle (one module instance per
 * page, the one the tests and the page share); everything else a page imports is bundled into it.
 *
 * Contract: `pageScript(name)` is the script's text: prebuilt in the single executable (which
 * carries no bundler; scripts/package.mjs defines GIFTDROP_PAGE_SCRIPTS), otherwise bundled once on
 * first use and kept for the process (a failed bundle is retried on the next request). The entries
 * resolve next to this module, so it works from the TypeScript sources (tsx) and from dist/. Pure
 * apart from reading those files; does not serve anything (index.ts does).
 */
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type PageScriptName = 'client' | 'dashboard' | 'overlay';

const NAMES: readonly PageScriptName[] = ['client', 'dashboard', 'overlay'];

/** The scripts prebuilt at package time (scripts/package.mjs `define`); undefined everywhere else. */
declare const GIFTDROP_PAGE_SCRIPTS: Record<PageScriptName, string> | undefined;

let bundled: Promise<Record<PageScriptName, string>> | undefined;

/**
 * Bundles the three scripts for browsers.
 * @public scripts/package.mjs calls it (from dist/) to prebuild the scripts for the executable.
 */
export async function bundlePageScripts(): Promise<Record<PageScriptName, string>> {
  const here = fileURLToPath(import.meta.url);
  const dir = join(dirname(here), 'pages');
  const ext = extname(here);
  const { build } = await import('esbuild');
  const out = await build({
    entryPoints: NAMES.map((name) => ({ in: join(dir, `${name}${ext}`), out: name })),
    outdir: 'out',
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    legalComments: 'none',
    logLevel: 'silent',
    plugins: [
      {
        // `./client.js` is its own module on the page (served beside each page script)
        name: 'operator-client',
        setup(b) {
          b.onResolve({ filter: /^\.\/client\.js$/ }, (args) =>
            args.importer ? { path: './client.js', external: true } : undefined,
          );
        },
      },
    ],
  });
  const scripts = {} as Record<PageScriptName, string>;
  for (const file of out.outputFiles) {
    const name = NAMES.find((n) => file.path.endsWith(`${n}.js`));
    if (name) scripts[name] = file.text;
  }
  for (const name of NAMES)
    if (typeof scripts[name] !== 'string') throw new Error(`the ${name} page script was not bundled`);
  return scripts;
}

/** The browser script `name` (see the module contract). */
export async function pageScript(name: PageScriptName): Promise<string> {
  if (typeof GIFTDROP_PAGE_SCRIPTS === 'object') return GIFTDROP_PAGE_SCRIPTS[name];
  bundled ??= bundlePageScripts();
  bundled.catch(() => (bundled = undefined));
  return (await bundled)[name];
}
