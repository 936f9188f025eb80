/**
 * The deliveries a running dispatcher has in flight. It claims again as soon as enough of them
 * have finished, rather than waiting for a whole batch: one slow delivery never holds up the rest.
 */
export class InFlight {
  readonly #running = new Set<Promise<void>>();
  #roomMade: (() => void) | null = null;

  get size(): number {
    return this.#running.size;
  }

  /** Tracks `work` until it settles. */
  add(work: Promise<void>): void {
    this.#running.add(work);
    const finished = (): void => {
      this.#running.delete(work);
      const roomMade = this.#roomMade;
      this.#roomMade = null;
      roomMade?.();
    };
    work.then(finished, finished);
  }

  /** Resolves once a delivery in flight has finished, or at once when `signal` aborts. */
  waitForRoom(signal: AbortSignal): Promise<void> {
    if (signal.aborted || this.#running.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.#roomMade = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Resolves once every delivery in flight has finished. */
  async drained(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running);
  }
}
