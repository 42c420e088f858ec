/**
 * Runs every benchmark module in one process (ratios are measured within one run because the
 * machines are shared and noisy), prints a table and writes bench/results.json.
 * Usage: npm run bench [-- name-filter]
 */
import { writeFileSync, readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';
import type { BenchModule, BenchResult } from './types.js';

const here = dirname(fileURLToPath(import.meta.url));
const filter = process.argv[2];
const modules = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => !filter || f.includes(filter))
  .sort();

const all: BenchResult[] = [];
for (const file of modules) {
  process.stderr.write(`running ${file}...\n`);
  const mod = (await import(pathToFileURL(join(here, file)).href)) as BenchModule;
  const results = await mod.run();
  all.push(...results);
  if (global.gc) global.gc();
}

const rows = all.map((r) => [
  r.name,
  Number.isInteger(r.value) ? String(r.value) : r.value.toPrecision(4),
  r.unit,
  r.target ?? '',
  r.ok === undefined ? '' : r.ok ? 'ok' : 'falls short',
  r.detail ?? '',
]);
const header = ['benchmark', 'value', 'unit', 'target', '', 'detail'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
console.log(line(header));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const r of rows) console.log(line(r));
writeFileSync(join(here, 'results.json'), JSON.stringify({ at: new Date().toISOString(), node: process.version, results: all }, null, 2) + '\n');
console.log(`\nwrote bench/results.json (${all.length} results)`);
