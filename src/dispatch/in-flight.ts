/**
 * The deliveries a running dispatcher has in flight. It claims again as soon as enough of them
 * have finished, rather than waiting for a whole batch: one slow delivery never holds up the rest.
 * A delivery makes room once its verdict is known; its outcome may still be on its way to the
 * store then (so it can go with the next claim), and only stopping waits for that.
 */
export class InFlight {
  readonly #running = new Set<Promise<void>>();
  readonly #stopping: AbortSignal;
  #delivering = 0;
  #roomMade: (() => void) | null = null;

  /** Waits for room end at once when `stopping` aborts (one listener for the dispatcher's run). */
  constructor(stopping: AbortSignal) {
    this.#stopping = stopping;
    stopping.addEventListener('abort', () => this.#wake(), { once: true });
  }

  /** Deliveries whose verdict is not known yet: what counts against the batch. */
  get size(): number {
    return this.#delivering;
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

  /** Resolves once a delivery in flight has finished, or at once when stopping. */
  waitForRoom(): Promise<void> {
    if (this.#stopping.aborted || this.#delivering === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#roomMade = resolve;
    });
  }

  /** Resolves once every delivery in flight has finished and its outcome is recorded. */
  async drained(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running);
  }

  #wake(): void {
    const waiting = this.#roomMade;
    this.#roomMade = null;
    waiting?.();
  }
}
