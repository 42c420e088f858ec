/** Types of scripts/build.mjs (plain JavaScript so it runs before anything is compiled). */
export declare const root: string;
export declare const srcDir: string;
export declare const distDir: string;
/** `root`: another project folder (tests); default the project's own. */
export declare function ensureBuilt(options?: { log?: (line: string) => void; root?: string }): {
  built: number;
  removed: number;
  listed: boolean;
};
export declare function staleness(options?: { root?: string }): {
  all: boolean;
  build: string[];
  orphans: string[];
  sources: number;
  fresh: boolean;
};
/** The closing line of `node scripts/build.mjs` (`npm ci`): what the build did. */
export declare function buildSummary(built: number, removed: number): string;
