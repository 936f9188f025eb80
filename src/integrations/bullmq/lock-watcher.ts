/**
 * BullMQ's lock events of one worker, dispatched to the runs of the jobs they name. A worker gets
 * one pair of listeners however many jobs it runs at once (one pair per run would pile up past
 * Node's listener warning at concurrency 11).
 */

/** The part of a BullMQ Worker the processor listens to; BullMQ calls processors with it as `this`. */
export interface LockEvents {
  opts: { lockDuration?: number };
  on(event: 'locksRenewed', listener: (data: { jobIds: string[] }) => void): unknown;
  on(event: 'lockRenewalFailed', listener: (jobIds: string[]) => void): unknown;
}

export interface LockListener {
  /** BullMQ extended the job's lock. */
  renewed(): void;
  /** BullMQ could not extend the job's lock: another worker may get the job. */
  lost(): void;
}

export class LockWatcher {
  readonly #runs = new Map<string, Set<LockListener>>();

  constructor(readonly worker: LockEvents) {
    worker.on('locksRenewed', ({ jobIds }) => {
      for (const id of jobIds) for (const run of this.#runs.get(id) ?? []) run.renewed();
    });
    worker.on('lockRenewalFailed', (jobIds) => {
      for (const id of jobIds) for (const run of this.#runs.get(id) ?? []) run.lost();
    });
  }

  /** Starts passing the job's lock events to `listener`; the returned function stops it. */
  watch(jobId: string, listener: LockListener): () => void {
    const runs = this.#runs.get(jobId) ?? new Set<LockListener>();
    runs.add(listener);
    this.#runs.set(jobId, runs);
    return () => {
      runs.delete(listener);
      if (runs.size === 0) this.#runs.delete(jobId);
    };
  }
}

const watchers = new WeakMap<object, LockWatcher>();

/** The watcher of the worker BullMQ called the processor with (`this`). */
export function lockWatcherOf(worker: unknown): LockWatcher {
  const candidate = worker as Partial<LockEvents> | undefined;
  if (
    candidate === undefined ||
    typeof candidate.on !== 'function' ||
    typeof candidate.opts !== 'object'
  ) {
    throw new Error(
      'fencedProcessor must be passed to new Worker(queue, processor, options) as it is: ' +
        'BullMQ calls it with the worker, whose lock events keep the lease',
    );
  }
  let watcher = watchers.get(candidate);
  if (watcher === undefined) {
    watcher = new LockWatcher(candidate as LockEvents);
    watchers.set(candidate, watcher);
  }
  return watcher;
}
