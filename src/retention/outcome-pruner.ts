/**
 * `fencegate serve --keep-outcomes DURATION`: deletes stored outcomes older than the window once
 * at start and then every `intervalMs` (default hourly), in the server process. A failed pass is
 * reported and retried at the next interval; it never stops the server.
 */
import { applyRetention, requireOutcomeWindow } from './retention.js';
import type { Store } from '../store/store.js';

export const DEFAULT_PRUNE_INTERVAL_MS = 3_600_000;

export interface OutcomePrunerOptions {
  keepOutcomesMs: number;
  intervalMs?: number;
  /** Told of each pass: the number deleted, or the error. */
  onPass?: (result: { deleted: number } | { error: unknown }) => void;
}

export function startOutcomePruner(
  store: Store,
  options: OutcomePrunerOptions,
): () => Promise<void> {
  requireOutcomeWindow(options.keepOutcomesMs, 'keepOutcomesMs');
  let running: Promise<void> = Promise.resolve();
  const pass = (): void => {
    running = running.then(async () => {
      try {
        const result = await applyRetention(store, { outcomeRetentionMs: options.keepOutcomesMs });
        options.onPass?.({ deleted: result.outcomesDeleted });
      } catch (error) {
        options.onPass?.({ error });
      }
    });
  };
  pass();
  const timer = setInterval(pass, options.intervalMs ?? DEFAULT_PRUNE_INTERVAL_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
