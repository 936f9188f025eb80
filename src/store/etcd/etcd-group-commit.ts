/**
 * Group commit on etcd: operations waiting together (commits, and the lease operations next to
 * them) are planned together and applied in one Txn. etcd forbids two writes of one key in a Txn,
 * and two operations touching one key must see each other anyway, so an operation that shares a
 * key with one already in the batch waits for the next batch. Each caller gets its own outcome; a
 * batch that keeps conflicting falls back to one Txn per operation.
 */
import { BatchKeys } from '../batch-keys.js';
import type { Transition } from '../../core/plan/transition.js';
import { FencegateError, isFencegateError } from '../../errors.js';
import { outcomeUnknown } from './etcd-errors.js';
import type { EtcdEngine, Planned, TxnSize } from './etcd-engine.js';
import { CallState, type EtcdSnapshot } from './etcd-snapshot.js';

interface Job {
  tenant: string;
  plan: (snapshot: EtcdSnapshot) => Transition<unknown>;
  /** The commit's operationId, for an outcome_unknown answer. */
  operationId: string | undefined;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

const MAX_BATCH = 64;
const MAX_IN_FLIGHT = 8;
const BATCH_ATTEMPTS = 3;

export class EtcdBatcher {
  #queue: Job[] = [];
  #inFlight = 0;
  #scheduled = false;

  constructor(
    private readonly engine: EtcdEngine,
    private readonly target: string,
  ) {}

  submit<A>(
    tenant: string,
    plan: (snapshot: EtcdSnapshot) => Transition<A>,
    operationId?: string,
  ): Promise<A> {
    return new Promise<A>((resolve, reject) => {
      this.#queue.push({
        tenant,
        plan,
        operationId,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#flush();
    });
  }

  #flush(): void {
    while (this.#queue.length > 0 && this.#inFlight < MAX_IN_FLIGHT) {
      const batch = this.#queue.splice(0, MAX_BATCH);
      this.#inFlight += 1;
      void this.#runBatch(batch).finally(() => {
        this.#inFlight -= 1;
        if (this.#queue.length > 0) this.#schedule();
      });
    }
  }

  async #runBatch(jobs: Job[]): Promise<void> {
    const call = new CallState();
    let selected = jobs;
    for (let attempt = 0; attempt < BATCH_ATTEMPTS; attempt += 1) {
      let plans: Planned<unknown>[];
      try {
        plans = [];
        for (const job of selected) {
          plans.push(await this.engine.plan(job.tenant, call, job.plan));
        }
      } catch (error) {
        for (const job of selected) job.reject(error);
        return;
      }
      const { chosen, deferred } = this.#choose(selected, plans, call);
      if (deferred.length > 0) {
        this.#queue.unshift(...deferred);
        this.#schedule();
      }
      selected = chosen.map((c) => c.job);
      if (selected.length === 0) return;
      try {
        const outcome = await this.engine.apply(
          chosen.map((c) => c.plan),
          call,
        );
        if (outcome === 'applied') {
          for (const { job, plan } of chosen) {
            const answer = plan.transition.answer;
            if (answer.ok) job.resolve(answer.value);
            else job.reject(answer.error);
          }
          return;
        }
      } catch (error) {
        for (const job of selected) job.reject(this.#forJob(error, job));
        return;
      }
    }
    // The batch kept conflicting: each commit on its own.
    await Promise.all(
      selected.map((job) =>
        this.engine
          .run(job.tenant, job.plan, { operationId: job.operationId })
          .then(job.resolve, job.reject),
      ),
    );
  }

  /** Commits whose keys do not conflict (store/batch-keys.ts) and whose Txn fits; the rest wait. */
  #choose(
    jobs: Job[],
    plans: Planned<unknown>[],
    call: CallState,
  ): { chosen: { job: Job; plan: Planned<unknown> }[]; deferred: Job[] } {
    const chosen: { job: Job; plan: Planned<unknown> }[] = [];
    const deferred: Job[] = [];
    const taken = new BatchKeys();
    let total: TxnSize = { compares: 0, ops: 0, entries: 0, bytes: 0 };
    jobs.forEach((job, i) => {
      const plan = plans[i];
      if (plan === undefined) return;
      const written = plan.transition.put.map(({ row: _row, ...ref }) => plan.snapshot.key(ref));
      const read = new Set([...plan.snapshot.read.keys(), ...written]);
      let size: TxnSize;
      try {
        size = this.engine.size(plan, call);
      } catch (error) {
        if (isFencegateError(error)) job.reject(error);
        else deferred.push(job);
        return;
      }
      if (!this.engine.fits(add(total, size)) || !taken.take(read, written)) {
        deferred.push(job);
        return;
      }
      total = add(total, size);
      chosen.push({ job, plan });
    });
    return { chosen, deferred };
  }

  #forJob(error: unknown, job: Job): unknown {
    if (error instanceof FencegateError && error.code === 'outcome_unknown') {
      return outcomeUnknown(this.target, error.cause, job.operationId);
    }
    return error;
  }
}

function add(a: TxnSize, b: TxnSize): TxnSize {
  return {
    compares: a.compares + b.compares,
    ops: a.ops + b.ops,
    entries: a.entries + b.entries,
    bytes: a.bytes + b.bytes,
  };
}
