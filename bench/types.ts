/**
 * The shape every benchmark module returns. `bench/run.ts` runs each module's `run()` in one
 * process, prints a table and writes bench/results.json.
 */
export interface BenchResult {
  /** Stable identifier, e.g. `fourthwall.client.windowsOverBudget`. */
  name: string;
  value: number;
  unit: string;
  /** Human-readable target, e.g. `<= 1.05`. */
  target?: string;
  /** Whether the target is met (omit when there is none). */
  ok?: boolean;
  /** Extra context for the table. */
  detail?: string;
}

export type BenchModule = { run(): Promise<BenchResult[]> };
