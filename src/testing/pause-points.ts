/**
 * Pause points: named places where a worker stops until the test lets it go, so a test can put a
 * competing transition exactly between two steps of a worker without any sleep.
 *
 *   // worker
 *   const read = await gate.getRecord(scope, 'doc');
 *   await points.reach('after-read');
 *   return gate.commit({ ... expectRevision: read.revision ... });
 *
 *   // test
 *   const worker = runWorker();
 *   await points.waitUntilReached('after-read', worker);
 *   await competingCommit();
 *   points.release('after-read');
 *   const result = await worker;
 *
 * Each name is one-shot: it is reached once and released once. Use distinct names ('after-read:1',
 * 'after-read:2') for a point a worker passes several times.
 */

interface PointState {
  reached: boolean;
  released: boolean;
  /** Resolves the worker blocked in reach(). */
  resume: () => void;
  resumed: Promise<void>;
  /** Resolves the test blocked in waitUntilReached(). */
  markReached: () => void;
  reachedSignal: Promise<void>;
}

export class PausePointError extends Error {
  override readonly name = 'PausePointError';
}

export class PausePoints {
  readonly #points = new Map<string, PointState>();
  readonly #order: string[] = [];

  /** Called by a worker: blocks until the test releases this point (immediately if it already did). */
  reach(name: string): Promise<void> {
    const point = this.#point(name);
    if (point.reached) throw new PausePointError(`pause point ${name} was reached twice`);
    point.reached = true;
    this.#order.push(name);
    point.markReached();
    return point.resumed;
  }

  /**
   * Called by the test: resolves once a worker is paused at `name`. Pass the worker's promise so a
   * worker that fails or finishes before reaching the point fails the wait instead of hanging it.
   */
  async waitUntilReached(name: string, worker?: Promise<unknown>): Promise<void> {
    const point = this.#point(name);
    if (worker === undefined) return point.reachedSignal;
    const finishedFirst = worker.then(
      () => {
        if (!point.reached) {
          throw new PausePointError(`the worker finished without reaching pause point ${name}`);
        }
      },
      (error: unknown) => {
        if (!point.reached) {
          throw new PausePointError(`the worker failed before reaching pause point ${name}`, {
            cause: error,
          });
        }
      },
    );
    await Promise.race([point.reachedSignal, finishedFirst]);
  }

  /** Lets the worker paused at `name` go on. Releasing before it arrives makes reach() pass through. */
  release(name: string): void {
    const point = this.#point(name);
    if (point.released) throw new PausePointError(`pause point ${name} was released twice`);
    point.released = true;
    point.resume();
  }

  /** Releases every point, reached or not: for cleanup after a failed test. */
  releaseAll(): void {
    for (const point of this.#points.values()) {
      point.released = true;
      point.resume();
    }
  }

  hasReached(name: string): boolean {
    return this.#points.get(name)?.reached ?? false;
  }

  /** The names in the order workers reached them. */
  reachedInOrder(): readonly string[] {
    return [...this.#order];
  }

  #point(name: string): PointState {
    let point = this.#points.get(name);
    if (point === undefined) {
      const resumed = deferred();
      const reached = deferred();
      point = {
        reached: false,
        released: false,
        resume: () => resumed.resolve(),
        resumed: resumed.promise,
        markReached: () => reached.resolve(),
        reachedSignal: reached.promise,
      };
      this.#points.set(name, point);
    }
    return point;
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** A PausePoints stand-in for production code paths that take an optional pause hook. */
export const NO_PAUSE = { reach: (_name: string): Promise<void> => Promise.resolve() };
