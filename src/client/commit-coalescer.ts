/**
 * Coalescing of a client's commits: `commit` calls made close together (in the same turn of the
 * event loop, or within a window of at most 1 ms) go out together, as one `POST /v1/commits` per
 * batch that fits, and each caller gets its own answer or error. A commit alone in its window goes
 * over `POST /v1/commit`, as without coalescing.
 */
import type { CommitRequest, CommitResult } from '../types.js';
import { commitInBatches, type BatchLink } from './commit-batch.js';

/** The longest window a client may wait for more commits before sending. */
export const MAX_COALESCE_WINDOW_MS = 1;

/**
 * `windowMs` when it is a window a client may wait, else a RangeError. Checked whether coalescing
 * is on or off, so a wrong value is found where it is written, not once coalescing is turned on.
 */
export function requireCoalesceWindow(windowMs: number): number {
  if (!(windowMs >= 0 && windowMs <= MAX_COALESCE_WINDOW_MS)) {
    throw new RangeError(
      `coalesceWindowMs must be 0 to ${MAX_COALESCE_WINDOW_MS} (0: the rest of this turn of the event loop), not ${windowMs}`,
    );
  }
  return windowMs;
}

interface Waiting {
  request: CommitRequest;
  resolve: (result: CommitResult) => void;
  reject: (error: unknown) => void;
}

export class CommitCoalescer {
  readonly #link: BatchLink;
  readonly #windowMs: number;
  #waiting: Waiting[] = [];

  /**
   * `windowMs` 0: until the current turn of the event loop ends; else that many ms (at most 1,
   * checked by requireCoalesceWindow when the client is made).
   */
  constructor(link: BatchLink, windowMs: number) {
    this.#link = link;
    this.#windowMs = windowMs;
  }

  commit(request: CommitRequest): Promise<CommitResult> {
    return new Promise<CommitResult>((resolve, reject) => {
      this.#waiting.push({ request, resolve, reject });
      if (this.#waiting.length > 1) return;
      if (this.#windowMs === 0) setImmediate(() => this.#flush());
      else setTimeout(() => this.#flush(), this.#windowMs);
    });
  }

  #flush(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    commitInBatches(
      this.#link,
      waiting.map((w) => w.request),
    ).then(
      (results) =>
        results.forEach((item, i) => {
          const caller = waiting[i]!;
          if (item.ok) caller.resolve(item.result);
          else caller.reject(item.error);
        }),
      (error: unknown) => {
        for (const caller of waiting) caller.reject(error);
      },
    );
  }
}
