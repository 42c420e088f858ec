/**
 * Runs every benchmark module in one process (ratios are measured within one run because the
 * machines are shared and noisy), prints a table, writes bench/results.json (ignored) and adds the
 * rows to the committed, dated bench/results/<date>-node<major>.json (see recordResults).
 * Usage: npm run bench [-- name-filter]
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
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
/** The machine's 1-minute load when the run started (recorded beside the one at its end). */
const loadAtStart = Number(os.loadavg()[0]!.toFixed(1));
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
  r.ok === undefined ? '-' : r.ok ? 'ok' : 'falls short',
  r.detail ?? '',
]);
const header = ['benchmark', 'value', 'unit', 'target', 'status', 'detail'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) =>
  cells
    .map((c, i) => c.padEnd(widths[i]!))
    .join('  ')
    .trimEnd();
console.log(line(header));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const r of rows) console.log(line(r));
writeFileSync(
  join(here, 'results.json'),
  JSON.stringify({ at: new Date().toISOString(), node: process.version, results: all }, null, 2) + '\n',
);
console.log(`\nwrote bench/results.json (${all.length} results)`);
console.log(`recorded in ${recordResults(all)}`);

/**
 * Adds this run's rows to the committed, dated results file `bench/results/<date>-node<major>.json`
 * (one row per line, so a README figure can name its line), with the Node version, the machine and
 * its 1-minute load at the run's start (loadStart) and end (load1), the command with every
 * BENCH_* setting of the run, and BENCH_NOTE (say what else the machine was doing). A row measured again the same
 * day goes in beside the earlier ones (each row has its `at`), so every run a document cites stays
 * in the file.
 */
function recordResults(results: BenchResult[]): string {
  const at = new Date().toISOString();
  const file = join(here, 'results', `${at.slice(0, 10)}-node${process.versions.node.split('.')[0]}.json`);
  mkdirSync(dirname(file), { recursive: true });
  const machine = `${os.type()} ${os.release()} ${os.arch()}, ${os.cpus().length} x ${os.cpus()[0]?.model ?? '?'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`;
  const settings = Object.entries(process.env)
    .filter(([k]) => k.startsWith('BENCH_') && k !== 'BENCH_NOTE')
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  const run = {
    at,
    node: process.version,
    machine,
    loadStart: loadAtStart,
    load1: Number(os.loadavg()[0]!.toFixed(1)),
    note: process.env['BENCH_NOTE'] ?? '',
    command: `${settings ? `${settings} ` : ''}npm run bench${filter ? ` -- ${filter}` : ''}`,
  };
  const rows: string[] = [];
  if (existsSync(file)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const m = /^ {4}(\{"name":"[^"]+".*\}),?$/.exec(line);
      if (m) rows.push(m[1]!);
    }
  }
  for (const r of results)
    rows.push(
      JSON.stringify({
        name: r.name,
        value: r.value,
        unit: r.unit,
        target: r.target,
        ok: r.ok,
        detail: r.detail,
        ...run,
      }),
    );
  const body = rows.map((r) => `    ${r}`).join(',\n');
  writeFileSync(file, `{\n  "rows": [\n${body}\n  ]\n}\n`);
  return file;
}
