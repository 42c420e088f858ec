/** Types of scripts/build.mjs (plain JavaScript so it runs before anything is compiled). */
export declare const root: string;
export declare const srcDir: string;
export declare const distDir: string;
export declare function ensureBuilt(options?: { log?: (line: string) => void }): { built: number; removed: number };
export declare function staleness(): { all: boolean; build: string[]; orphans: string[]; sources: number };
