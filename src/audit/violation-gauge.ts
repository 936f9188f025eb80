/**
 * The number behind a Prometheus gauge of audit violations. The counter keeps one verifier alive,
 * so each call reads only the audit entries appended since the previous call.
 */
import type { Store } from '../store/store.js';
import { emptyCheckpoint, type VerifyCheckpoint } from './checkpoint.js';
import { HistoryVerifier } from './history-verifier.js';
import { readInto } from './verify.js';

export interface ViolationCounterOptions {
  /** Count one tenant's violations; undefined counts every tenant's. */
  tenant?: string;
  /** Start after an earlier run instead of from the first entry. */
  checkpoint?: VerifyCheckpoint;
}

/**
 * Returns a function giving the number of violations in the whole audit history so far.
 * Concurrent calls share one read of the store.
 */
export function createViolationCounter(
  store: Store,
  options: ViolationCounterOptions = {},
): () => Promise<number> {
  // Only counts are needed here; details of violations are not kept.
  const verifier = new HistoryVerifier(
    options.checkpoint ?? emptyCheckpoint(options.tenant ?? null),
    {
      maxViolations: 0,
    },
  );
  let running: Promise<number> | null = null;
  return () => {
    running ??= readInto(store, verifier, options.tenant)
      .then(() => verifier.totalViolations)
      .finally(() => {
        running = null;
      });
    return running;
  };
}
