/**
 * The process's shutdown signals (platform/signals.ts: SIGINT, SIGTERM and SIGHUP; on Windows
 * SIGINT, SIGBREAK, SIGHUP, and SIGTERM from the parent watchdog) each run the given clean stop once
 * (its reason in words: platform/stop-cause.ts, so a stop the npm watchdog asked for is not called
 * a SIGTERM) and exit 0 when it finished, 1 when it failed (after `onFailed` said why: what could not be
 * saved). Contract:
 * - a repeat of a signal within REPEAT_GRACE_MS is the same request delivered twice (Ctrl+C on a
 *   terminal reaches the whole process group, and `npm start` forwards it again) and is ignored;
 *   a later one means "now" and exits 130 at once;
 * - a stop still running after `deadlineMs` (default 9 s: service managers and docs/operating.md promise
 *   a stop within 10 s) exits 1 with one line saying so; open draws are journaled as they go, so
 *   the next start resumes them either way.
 */
import { shutdownSignals } from '../platform/signals.js';
import { stopCause } from '../platform/stop-cause.js';

const REPEAT_GRACE_MS = 1000;

export interface SignalOptions {
  deadlineMs?: number;
  /** Told when the deadline passed (one line). */
  onDeadline?: (ms: number) => void;
  /** Told why the stop failed (one line), before the exit 1. */
  onFailed?: (err: unknown) => void;
  /** The OS whose shutdown signals are listened to (default process.platform). */
  platform?: NodeJS.Platform;
  /** Where the signals arrive and who exits (default this process; tests pass an emitter). */
  target?: SignalTarget;
}

/** The part of `process` the handler uses. */
interface SignalTarget {
  on(signal: NodeJS.Signals, listener: () => void): unknown;
  exit(code: number): void;
}

export function onShutdownSignals(stop: (reason: string) => Promise<void>, options: SignalOptions = {}): void {
  const deadlineMs = options.deadlineMs ?? 9000;
  const target: SignalTarget = options.target ?? process;
  let firstAt: number | undefined;
  for (const sig of shutdownSignals(options.platform ?? process.platform)) {
    target.on(sig, () => {
      const now = performance.now();
      if (firstAt !== undefined) {
        if (now - firstAt >= REPEAT_GRACE_MS) target.exit(130);
        return;
      }
      firstAt = now;
      setTimeout(() => {
        options.onDeadline?.(deadlineMs);
        target.exit(1);
      }, deadlineMs).unref();
      void stop(stopCause(sig)).then(
        () => target.exit(0),
        (err: unknown) => {
          options.onFailed?.(err);
          target.exit(1);
        },
      );
    });
  }
}
