/**
 * The deliveries a running dispatcher has in flight. It claims again as soon as enough of them
 * have finished, rather than waiting for a whole batch: one slow delivery never holds up the rest.
 * A delivery makes room once its verdict is known; its outcome may still be on its way to the
 * store then (so it can go with the next claim), and only stopping waits for that.
 */
export class InFlight {
  readonly #running = new Set<Promise<void>>();
  #delivering = 0;
  #roomMade: (() => void) | null = null;

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
      const waiting = this.#roomMade;
      this.#roomMade = null;
      waiting?.();
    };
    delivered.then(roomMade, roomMade);
    const finished = (): void => {
      this.#running.delete(work);
    };
    work.then(finished, finished);
  }

  /** Resolves once a delivery in flight has finished, or at once when `signal` aborts. */
  waitForRoom(signal: AbortSignal): Promise<void> {
    if (signal.aborted || this.#delivering === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.#roomMade = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Resolves once every delivery in flight has finished and its outcome is recorded. */
  async drained(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running);
  }
}
