/**
 * The deliveries a running dispatcher has in flight. It claims again as soon as enough of them
 * have finished, rather than waiting for a whole batch: one slow delivery never holds up the rest.
 * A delivery makes room once its verdict is known; its outcome may still be on its way to the
 * store then (so it can go with the next claim), and only stopping waits for that. Room may also
 * be held for intents a commit is creating claimed for this dispatcher (core/claim-at-commit.ts):
 * it counts as in flight until the commit is answered.
 */
export class InFlight {
  readonly #running = new Set<Promise<void>>();
  readonly #stopping: AbortSignal;
  #delivering = 0;
  #reserved = 0;
  #roomMade: (() => void) | null = null;
  #released: (() => void) | null = null;

  /** Waits for room end at once when `stopping` aborts (one listener for the dispatcher's run). */
  constructor(stopping: AbortSignal) {
    this.#stopping = stopping;
    stopping.addEventListener('abort', () => this.#wake(), { once: true });
  }

  /** Deliveries whose verdict is not known yet, and room held: what counts against the batch. */
  get size(): number {
    return this.#delivering + this.#reserved;
  }

  /** Holds room for up to `wanted` deliveries of a batch of `capacity`; answers how many. */
  reserve(wanted: number, capacity: number): number {
    if (this.#stopping.aborted) return 0;
    const held = Math.max(0, Math.min(wanted, capacity - this.size));
    this.#reserved += held;
    return held;
  }

  /** Frees room held by reserve (after adding the deliveries it was held for). */
  release(count: number): void {
    this.#reserved -= count;
    this.#wake();
    const released = this.#released;
    this.#released = null;
    released?.();
  }

  /** Tracks `work` until it settles; it holds a place in the batch until `delivered` settles. */
  add(work: Promise<void>, delivered: Promise<unknown> = work): void {
    this.#running.add(work);
    this.#delivering += 1;
    const roomMade = (): void => {
      this.#delivering -= 1;
      this.#wake();
    };
    delivered.then(roomMade, roomMade);
    const finished = (): void => {
      this.#running.delete(work);
    };
    work.then(finished, finished);
  }

  /** Resolves once a delivery in flight has finished or room was freed, or at once when stopping. */
  waitForRoom(): Promise<void> {
    if (this.#stopping.aborted || this.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#roomMade = resolve;
    });
  }

  /**
   * Resolves once no room is held and every delivery in flight has finished and its outcome is
   * recorded.
   */
  async drained(): Promise<void> {
    for (;;) {
      if (this.#running.size > 0) await Promise.all(this.#running);
      else if (this.#reserved > 0) {
        await new Promise<void>((resolve) => {
          this.#released = resolve;
        });
      } else return;
    }
  }

  #wake(): void {
    const waiting = this.#roomMade;
    this.#roomMade = null;
    waiting?.();
  }
}
