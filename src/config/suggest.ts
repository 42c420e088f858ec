/**
 * "Did you mean": for a settings-file key the schema does not know, finds the known key at the
 * same place that is closest by edit distance (a typo such as `drawSecond` or `comands`).
 * Contract: `knownKeysAt(schema, path)` lists the object keys a zod schema accepts at `path`
 * (empty when the path does not lead to an object); `closest(word, candidates)` returns the
 * best candidate within a distance of a third of the word (at least 2), or undefined.
 */
import type { z } from 'zod';

interface ZodInternals {
  _zod?: {
    def?: { type?: string; shape?: Record<string, unknown>; innerType?: unknown; element?: unknown; in?: unknown };
  };
}

/** Unwraps optional/default/prefault/pipe/array layers down to an object schema, if any. */
function objectShape(schema: unknown): Record<string, unknown> | undefined {
  let s = schema as ZodInternals | undefined;
  for (let depth = 0; depth < 16 && s; depth++) {
    const def = s._zod?.def;
    if (!def) return undefined;
    if (def.type === 'object') return def.shape;
    s = (def.innerType ?? def.in ?? def.element) as ZodInternals | undefined;
  }
  return undefined;
}

/** The keys the schema accepts at `path` (numeric segments step into arrays). */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let shape = objectShape(schema);
  for (const segment of path) {
    if (!shape) return [];
    if (typeof segment === 'number') continue;
    shape = objectShape(shape[String(segment)]);
  }
  return shape ? Object.keys(shape) : [];
}

function distance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = Math.min(up + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length]!;
}

/** The candidate closest to `word` (case-insensitive), when it is close enough to be a typo. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const c of candidates) {
    const d = distance(w, c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}
