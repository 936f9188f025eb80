/**
 * Group commit: callers that commit concurrently are collected until the event loop turns, then
 * handed to `runBatch` together so one durable transaction (one fsync) serves all of them. Each
 * caller gets its own settlement; the batch runner decides that one caller's failure does not
 * abort the others. Given `tenantOf`, callers are admitted into batches by deficit round-robin per
 * tenant (FairQueue), so a tenant with thousands of writes waiting fills its quantum of a batch and
 * another tenant's write goes in the same batch; without it, in arrival order.
 */
import { FairQueue, type QueueDepths } from './optimistic/fair-queue.js';

export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Settlements now, or later when the batch had to wait (for a lock held by another process). */
export type BatchRun<O> = Settled<O>[] | Promise<Settled<O>[]>;

interface Waiter<I, O> {
  tenant: string;
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

export interface GroupCommitOptions<I> {
  /** The most items one batch holds (512). */
  maxBatch?: number;
  /** The tenant an item belongs to: admission by deficit round-robin per tenant. */
  tenantOf?: (item: I) => string;
  /** The items a tenant is admitted per turn when `tenantOf` is given (64). */
  quantum?: number;
}

export class GroupCommitter<I, O> {
  readonly #runBatch: (items: I[]) => BatchRun<O>;
  readonly #maxBatch: number;
  readonly #tenantOf: ((item: I) => string) | undefined;
  readonly #queue: FairQueue<Waiter<I, O>>;
  #scheduled = false;

  /** `runBatch` answers one settlement per item, in order; if it throws, every item fails. */
  constructor(runBatch: (items: I[]) => BatchRun<O>, options: number | GroupCommitOptions<I> = {}) {
    const {
      maxBatch = 512,
      tenantOf,
      quantum = 64,
    } = typeof options === 'number' ? { maxBatch: options } : options;
    this.#runBatch = runBatch;
    this.#maxBatch = maxBatch;
    this.#tenantOf = tenantOf;
    // Without tenants every item is the one tenant's: its turns are in arrival order.
    this.#queue = new FairQueue(tenantOf === undefined ? maxBatch : quantum);
  }

  /** The items waiting for a batch, by tenant (the batch running is not counted). */
  depths(): QueueDepths {
    return this.#queue.depths();
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#queue.push({ tenant: this.#tenantOf?.(item) ?? '', item, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        // setImmediate, not a microtask: callers woken by the previous batch enqueue first.
        setImmediate(() => this.#flush());
      }
    });
  }

  /** Runs the queued batches in order; only one flush runs at a time (#scheduled stays set). */
  #flush(): void {
    while (this.#queue.size > 0) {
      const batch = this.#queue.take(this.#maxBatch, false);
      let run: BatchRun<O>;
      try {
        run = this.#runBatch(batch.map((waiter) => waiter.item));
      } catch (error) {
        for (const waiter of batch) waiter.reject(error);
        continue;
      }
      if (run instanceof Promise) {
        // The batch waits without blocking the event loop; commits arriving meanwhile queue up
        // and run after it, in order.
        void run
          .then(
            (settled) => settle(batch, settled),
            (error: unknown) => {
              for (const waiter of batch) waiter.reject(error);
            },
          )
          .finally(() => this.#flush());
        return;
      }
      settle(batch, run);
    }
    this.#scheduled = false;
  }
}

function settle<I, O>(batch: Waiter<I, O>[], settled: Settled<O>[]): void {
  batch.forEach((waiter, i) => {
    const outcome = settled[i];
    if (outcome === undefined) waiter.reject(new Error('group commit lost an answer'));
    else if (outcome.ok) waiter.resolve(outcome.value);
    else waiter.reject(outcome.error);
  });
}
