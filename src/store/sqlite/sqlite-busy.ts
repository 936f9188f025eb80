/**
 * Waiting for another process's write lock without freezing this one. SQLite's own busy handler
 * sleeps synchronously, which in Node stops every timer, lease renewal and request of the process
 * for as long as it waits. So the connection's busy timeout is only a short slice, and a write that
 * still finds the file locked is retried from the event loop with growing pauses, bounded by the
 * store's busy timeout in total; past it the answer is store_unavailable, with nothing changed.
 */
import { FencegateError, isFencegateError } from '../../errors.js';

/** The longest SQLite may block the event loop in one attempt. */
export const BUSY_SLICE_MS = 2;
const FIRST_PAUSE_MS = 1;
const LONGEST_PAUSE_MS = 10;

/** A store_unavailable that only says another connection holds the lock: worth another try. */
export function isBusy(error: unknown): boolean {
  if (!isFencegateError(error) || error.code !== 'store_unavailable') return false;
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Runs `attempt` until it does not fail busy, or until `budgetMs` has passed: store_unavailable
 * then. `attempt` must change nothing when it fails busy (a transaction that could not
 * begin, or that SQLite rolled back).
 */
export async function retryWhileBusy<T>(attempt: () => T, budgetMs: number): Promise<T> {
  const deadline = Date.now() + budgetMs;
  let wait = FIRST_PAUSE_MS;
  for (;;) {
    try {
      return attempt();
    } catch (error) {
      if (!isBusy(error)) throw error;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new FencegateError(
          'store_unavailable',
          `another process held the SQLite file's write lock for more than ${budgetMs} ms; nothing was changed, retry`,
          {},
          { cause: (error as FencegateError).cause },
        );
      }
      // Jitter, so processes that met at the lock do not retry in step.
      await pause(Math.min(left, wait / 2 + Math.random() * (wait / 2)));
      wait = Math.min(wait * 2, LONGEST_PAUSE_MS);
    }
  }
}
