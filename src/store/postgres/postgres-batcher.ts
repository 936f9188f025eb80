/**
 * Group commit on PostgreSQL: operations waiting together are planned at one store time and
 * applied in one statement (one transaction, one WAL flush). Under light load an operation still
 * goes alone at once, so batching adds no latency; `maxInFlight` bounds the statements running,
 * and the shared queue (store/optimistic/batch-queue.ts) admits tenants' batches in turn.
 * Operations sent together (one commitMany's commits, `together`) are all queued before a batch
 * forms, so an idle store does not send the first of them alone and the rest after them.
 *
 * A batch holds one tenant's operations that may share rows they only read (store/batch-keys.ts):
 * an operation that reads or writes a row another member writes waits for the next (it must see
 * the other's write), and one that listed a range runs alone. A transition that did not hold is planned again on the current rows
 * its answer carried. A lost connection answers each operation of the batch outcome_unknown with
 * its own operationId; a batch that fails for another reason runs its operations alone, so one
 * bad request cannot fail its neighbours.
 */
import { isRangeRef, refKey, type Transition } from '../../core/plan/transition.js';
import { isFencegateError } from '../../errors.js';
import { BatchKeys } from '../optimistic/batch-keys.js';
import { BatchQueue, settle, type QueuedJob } from '../optimistic/batch-queue.js';
import type { QueueDepths } from '../optimistic/fair-queue.js';
import { forBatchMember } from '../optimistic/store-errors.js';
import { touchedKeys, type PlannedOn } from './postgres-apply-payload.js';
import { OPTIMISTIC_ATTEMPTS, type PostgresEngine } from './postgres-engine.js';
import { connectionFailed } from './postgres-errors.js';
import { isNotSent, type Send } from './postgres-connection.js';
import { CallState, type PostgresSnapshot } from './postgres-snapshot.js';

interface Job extends QueuedJob {
  plan: (snapshot: PostgresSnapshot) => Transition<unknown>;
  call: CallState;
  attempts: number;
}

/** Where one run of a batch's work put its jobs. */
class Sorting {
  readonly members: Job[] = [];
  readonly planned: PlannedOn<unknown>[] = [];
  /** Jobs whose plan failed, with what it failed with. */
  readonly failed: { job: Job; error: unknown }[] = [];
  /** Jobs that listed a range: each runs alone. */
  readonly alone: Job[] = [];
  /** Jobs that share a row with a member: the next batch. */
  readonly later: Job[] = [];

  has(job: Job): boolean {
    return (
      this.members.includes(job) ||
      this.alone.includes(job) ||
      this.later.includes(job) ||
      this.failed.some((entry) => entry.job === job)
    );
  }
}

export class PostgresBatcher {
  readonly #queue: BatchQueue<Job>;

  constructor(
    private readonly engine: PostgresEngine,
    private readonly target: string,
    maxInFlight: number,
    maxBatch = 64,
  ) {
    this.#queue = new BatchQueue<Job>(
      // One statement applies one tenant's batch: a tenant's turn is one batch.
      { maxBatch, maxInFlight, quantum: maxBatch, oneTenant: true, gather: false },
      (batch) => this.#run(batch[0]?.tenant ?? '', batch),
    );
  }

  /** The writes waiting for a batch (metrics). */
  depths(): QueueDepths {
    return this.#queue.depths();
  }

  /** Runs `send`; the operations it submits enter batches together (BatchQueue.together). */
  together<T>(send: () => T): T {
    return this.#queue.together(send);
  }

  submit<A>(
    tenant: string,
    plan: (snapshot: PostgresSnapshot) => Transition<A>,
    operationId?: string,
  ): Promise<A> {
    return this.#queue.submit({ tenant, plan, operationId, call: new CallState(), attempts: 0 });
  }

  async #run(tenant: string, jobs: Job[]): Promise<void> {
    // The session runs its work again, on another connection, after a statement pg never sent:
    // each run sorts the jobs afresh, and only the last run's sorting is acted on, once.
    let sorted = new Sorting();
    let held: boolean[];
    try {
      held = await this.engine.session(async (send) => {
        sorted = new Sorting();
        // Store time once the connection is held: the batch plans at the time it applies.
        const now = this.engine.now();
        await this.#sort(tenant, jobs, now, send, sorted);
        const { members, planned } = sorted;
        if (members.length === 0) return [];
        return this.engine.send(planned, { send, operationId: members[0]?.operationId });
      });
    } catch (error) {
      this.#settleOthers(sorted);
      this.#fail(sorted, jobs, error);
      return;
    }
    this.#settleOthers(sorted);
    sorted.members.forEach((job, i) => {
      if (held[i] === true) {
        settle(job, (sorted.planned[i] as PlannedOn<unknown>).transition);
        return;
      }
      // Rows many writers change at once: go alone, which ends holding its locks.
      job.attempts += 1;
      if (job.attempts >= OPTIMISTIC_ATTEMPTS) this.#alone(job);
      else this.#queue.putBack([job]);
    });
  }

  /** Plans each job into `sorted`: a member of the batch, or set aside; nothing is answered yet. */
  async #sort(
    tenant: string,
    jobs: Job[],
    now: number,
    send: Send,
    sorted: Sorting,
  ): Promise<void> {
    const taken = new BatchKeys();
    for (const job of jobs) {
      let plan: PlannedOn<unknown>;
      try {
        plan = await this.engine.plan(tenant, job.call, job.plan, { send }, now);
      } catch (error) {
        if (isNotSent(error)) throw error;
        sorted.failed.push({ job, error });
        continue;
      }
      if (plan.transition.expect.some(isRangeRef)) {
        sorted.alone.push(job);
        continue;
      }
      const written = [...plan.transition.put, ...(plan.transition.delete ?? [])].map((ref) =>
        refKey(ref),
      );
      if (!taken.take(touchedKeys(plan).keys(), written)) {
        sorted.later.push(job);
        continue;
      }
      sorted.planned.push(plan);
      sorted.members.push(job);
    }
  }

  /** Acts on the jobs the last run set aside: refused by their plan, alone, or the next batch. */
  #settleOthers(sorted: Sorting): void {
    for (const { job, error } of sorted.failed) job.reject(error);
    for (const job of sorted.alone) this.#alone(job);
    this.#queue.putBack(sorted.later);
  }

  /** Answers the members of a batch that failed, and the jobs its last run did not reach. */
  #fail(sorted: Sorting, jobs: Job[], error: unknown): void {
    const { members } = sorted;
    for (const job of jobs) if (!sorted.has(job)) job.reject(error);
    if (members.length <= 1 || !isFencegateError(error)) {
      for (const job of members) job.reject(error);
      return;
    }
    if (error.code === 'outcome_unknown') {
      for (const job of members) {
        job.reject(forBatchMember(error, job.operationId, (c) => connectionFailed(this.target, c)));
      }
      return;
    }
    if (error.code === 'store_unavailable') {
      for (const job of members) job.reject(error);
      return;
    }
    for (const job of members) this.#alone(job);
  }

  #alone(job: Job): void {
    this.engine.run(job.tenant, job.plan, job.operationId).then(job.resolve, job.reject);
  }
}
