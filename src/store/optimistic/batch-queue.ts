/**
 * The queue in front of an optimistic store's group commit: writes wait here, are admitted into
 * batches tenant by tenant (FairQueue: deficit round-robin, so one tenant's backlog cannot starve
 * another's write), and at most `maxInFlight` batches run at once. What a batch does (plan its
 * writes, take those of distinct keys, send them together, put the rest back) is the store's
 * `run`; each write is settled by `run` through its own resolve and reject. Writes sent together
 * (`together`) wait until the last of them is queued, then enter batches as one group.
 */
import type { Transition } from '../../core/plan/transition.js';
import { FairQueue, type QueueDepths, type TenantJob } from './fair-queue.js';

/** A write waiting for a batch; `run` settles it. */
export interface QueuedJob extends TenantJob {
  /** The commit's operationId, for an outcome_unknown answer naming it. */
  operationId: string | undefined;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface BatchQueueOptions {
  /** The most writes one batch holds. */
  maxBatch: number;
  /** The most batches running at once. */
  maxInFlight: number;
  /** The writes a tenant is admitted per turn (FairQueue). */
  quantum: number;
  /** A batch holds one tenant's writes (one statement per tenant), or any tenants'. */
  oneTenant: boolean;
  /**
   * Collect writes until the event loop turns before forming a batch (the callers woken by the
   * previous batch enqueue first), rather than forming one as soon as a batch may start.
   */
  gather: boolean;
}

export class BatchQueue<J extends QueuedJob> {
  readonly #waiting: FairQueue<J>;
  #inFlight = 0;
  #scheduled = false;
  /** The group of the writes `together` is queuing, while it runs. */
  #group: object | undefined;

  constructor(
    private readonly options: BatchQueueOptions,
    private readonly run: (batch: J[]) => Promise<void>,
  ) {
    this.#waiting = new FairQueue(options.quantum);
  }

  /** The writes waiting for a batch, by tenant (those of batches running are not counted). */
  depths(): QueueDepths {
    return this.#waiting.depths();
  }

  /** Queues a write; the promise settles when a batch (or the write alone) answered it. */
  submit<A>(job: Omit<J, 'resolve' | 'reject' | 'group'>): Promise<A> {
    return new Promise<A>((resolve, reject) => {
      const queued = { ...job, resolve: resolve as (value: unknown) => void, reject } as J;
      if (this.#group !== undefined) queued.group = this.#group;
      this.#waiting.push(queued);
      this.#next();
    });
  }

  /**
   * Runs `send`, which submits writes without waiting for them, and only then lets batches form:
   * a queue that starts a batch as soon as a write arrives (an idle store) would otherwise send
   * the first writes alone and the rest after them. The writes are one group, which a batch takes
   * whole when it has room (FairQueue), behind the writes of their tenant already waiting.
   */
  together<T>(send: () => T): T {
    if (this.#group !== undefined) return send();
    this.#group = {};
    try {
      return send();
    } finally {
      this.#group = undefined;
      if (this.#waiting.size > 0) this.#next();
    }
  }

  /** Puts writes a batch set aside back at the front of their tenants' queues. */
  putBack(jobs: readonly J[]): void {
    if (jobs.length === 0) return;
    this.#waiting.pushFront(jobs);
    if (this.options.gather) this.#schedule();
  }

  #next(): void {
    // Inside `together`, nothing starts before its last write is queued.
    if (this.#group !== undefined) return;
    if (this.options.gather) this.#schedule();
    else this.#pump();
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#pump();
    });
  }

  #pump(): void {
    const { maxBatch, maxInFlight, oneTenant } = this.options;
    while (this.#inFlight < Math.max(1, maxInFlight) && this.#waiting.size > 0) {
      const batch = this.#waiting.take(maxBatch, oneTenant);
      this.#inFlight += 1;
      void this.run(batch).finally(() => {
        this.#inFlight -= 1;
        if (this.#waiting.size > 0) this.#next();
      });
    }
  }
}

/** Answers a write of a batch whose transition applied: its value, or its refusal. */
export function settle(job: QueuedJob, transition: Transition<unknown>): void {
  if (transition.answer.ok) job.resolve(transition.answer.value);
  else job.reject(transition.answer.error);
}
