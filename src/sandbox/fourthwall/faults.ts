/**
 * Fault injection for API operations of the Fourthwall sandbox. A rule targets one operation
 * (or `*`) and applies to its next `times` calls: answer 5xx, answer 429 with Retry-After,
 * delay, hang (accept and never answer until the server closes), or process the request and
 * then drop the connection (the caller cannot know the outcome while state changed).
 * Rules are consumed in the order they were added. It only stores and hands out rules; the
 * server applies them.
 */

export type FaultKind = 'status' | 'rate-limit' | 'delay' | 'hang' | 'drop-after-processing';

export interface FaultSpec {
  kind: FaultKind;
  /** How many matching calls it applies to (default 1). */
  times?: number;
  /** `status`: the status to answer (default 503). */
  status?: number;
  /** `rate-limit`: the Retry-After value in seconds (default 1). */
  retryAfterSeconds?: number;
  /** `delay`: how long to wait before processing (ms). */
  delayMs?: number;
}

export interface FaultRule extends Required<Pick<FaultSpec, 'kind'>> {
  operation: string;
  remaining: number;
  status: number;
  retryAfterSeconds: number;
  delayMs: number;
}

const KINDS: readonly FaultKind[] = ['status', 'rate-limit', 'delay', 'hang', 'drop-after-processing'];

/** Validates a fault spec coming from a test or the HTTP control API. */
function checkFaultSpec(spec: FaultSpec): void {
  if (!KINDS.includes(spec.kind)) throw new RangeError(`fault kind must be one of ${KINDS.join(', ')}`);
  if (spec.times !== undefined && (!Number.isInteger(spec.times) || spec.times < 1)) {
    throw new RangeError('fault times must be a positive integer');
  }
  if (spec.status !== undefined && (!Number.isInteger(spec.status) || spec.status < 400 || spec.status > 599)) {
    throw new RangeError('fault status must be an HTTP error status (400-599)');
  }
  if (spec.delayMs !== undefined && !(spec.delayMs >= 0)) throw new RangeError('fault delayMs must be >= 0');
  if (spec.retryAfterSeconds !== undefined && !(spec.retryAfterSeconds >= 0)) {
    throw new RangeError('fault retryAfterSeconds must be >= 0');
  }
}

/** The pending fault rules. */
export class FaultBook {
  private rules: FaultRule[] = [];

  add(operation: string, spec: FaultSpec): void {
    checkFaultSpec(spec);
    this.rules.push({
      operation,
      kind: spec.kind,
      remaining: spec.times ?? 1,
      status: spec.status ?? 503,
      retryAfterSeconds: spec.retryAfterSeconds ?? 1,
      delayMs: spec.delayMs ?? 0,
    });
  }

  /** Takes one use of the first rule matching `operation`, if any. */
  take(operation: string): FaultRule | undefined {
    const rule = this.rules.find((r) => r.operation === operation || r.operation === '*');
    if (!rule) return undefined;
    rule.remaining--;
    if (rule.remaining <= 0) this.rules = this.rules.filter((r) => r !== rule);
    return { ...rule };
  }

  /** Rules not yet used up. */
  pending(): FaultRule[] {
    return this.rules.map((r) => ({ ...r }));
  }

  clear(): void {
    this.rules = [];
  }
}
