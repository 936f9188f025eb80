/**
 * Group commit on etcd: operations waiting together (commits, and the lease operations next to
 * them) are planned together and applied in one Txn. etcd forbids two writes of one key in a Txn,
 * and two operations touching one key must see each other anyway, so an operation that shares a
 * key with one already in the batch waits for the next batch, which forms once this one's Txn
 * settled, so it plans on what that Txn wrote and lands after it. A batch may hold several tenants'
 * operations (each tenant's audit entries under a key of its own); the shared queue admits them
 * tenant by tenant (store/optimistic/batch-queue.ts). Each caller gets its own outcome; a batch
 * that keeps conflicting falls back to one Txn per operation.
 */
import type { Transition } from '../../core/plan/transition.js';
import { isFencegateError } from '../../errors.js';
import { BatchKeys } from '../optimistic/batch-keys.js';
import { BatchQueue, settle, type QueuedJob } from '../optimistic/batch-queue.js';
import type { QueueDepths } from '../optimistic/fair-queue.js';
import { forBatchMember } from '../optimistic/store-errors.js';
import { unanswered } from './etcd-errors.js';
import type { EtcdEngine, Planned, TxnSize } from './etcd-engine.js';
import { EtcdCall, type EtcdSnapshot } from './etcd-snapshot.js';

interface Job extends QueuedJob {
  plan: (snapshot: EtcdSnapshot) => Transition<unknown>;
}

const BATCH_ATTEMPTS = 3;

export class EtcdBatcher {
  readonly #queue = new BatchQueue<Job>(
    // Up to 8 of a tenant's operations per turn: a batch of 64 mixes tenants as they wait.
    { maxBatch: 64, maxInFlight: 8, quantum: 8, oneTenant: false, gather: true },
    (batch) => this.#runBatch(batch),
  );

  constructor(
    private readonly engine: EtcdEngine,
    private readonly target: string,
  ) {}

  /** The writes waiting for a batch (metrics). */
  depths(): QueueDepths {
    return this.#queue.depths();
  }

  submit<A>(
    tenant: string,
    plan: (snapshot: EtcdSnapshot) => Transition<A>,
    operationId?: string,
  ): Promise<A> {
    return this.#queue.submit({ tenant, plan, operationId });
  }

  /**
   * Runs a batch; the operations it set aside go back to the queue only once its Txn settled, in
   * the order they came. One set aside for a key a member writes must plan on that write (a later
   * commit of one scope in a commitMany): planned while the member's Txn is in flight, it would
   * plan on the row before it and race it to etcd, and could land first. One set aside because
   * the Txn was full waits too, since it may share a key with a member or with another set aside.
   */
  async #runBatch(jobs: Job[]): Promise<void> {
    const deferred: Job[] = [];
    try {
      await this.#apply(jobs, deferred);
    } finally {
      if (deferred.length > 1) {
        const order = new Map(jobs.map((job, i) => [job, i]));
        deferred.sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
      }
      this.#queue.putBack(deferred);
    }
  }

  /** Plans and applies the batch, collecting in `deferred` the operations it sets aside. */
  async #apply(jobs: Job[], deferred: Job[]): Promise<void> {
    const call = new EtcdCall();
    let selected = jobs;
    for (let attempt = 0; attempt < BATCH_ATTEMPTS; attempt += 1) {
      let plans: Planned<unknown>[];
      try {
        plans = [];
        for (const job of selected) {
          plans.push(await this.engine.plan(job.tenant, call, job.plan, {}));
        }
      } catch (error) {
        for (const job of selected) job.reject(error);
        return;
      }
      const choice = this.#choose(selected, plans, call);
      const { chosen } = choice;
      deferred.push(...choice.deferred);
      selected = chosen.map((c) => c.job);
      if (selected.length === 0) return;
      try {
        const outcome = await this.engine.apply(
          chosen.map((c) => c.plan),
          call,
        );
        if (outcome === 'applied') {
          for (const { job, plan } of chosen) settle(job, plan.transition);
          return;
        }
      } catch (error) {
        for (const job of selected) {
          job.reject(forBatchMember(error, job.operationId, (c) => unanswered(this.target, c)));
        }
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
    call: EtcdCall,
  ): { chosen: { job: Job; plan: Planned<unknown> }[]; deferred: Job[] } {
    const chosen: { job: Job; plan: Planned<unknown> }[] = [];
    const deferred: Job[] = [];
    const taken = new BatchKeys();
    let total: TxnSize = { compares: 0, ops: 0, entries: 0, bytes: 0 };
    jobs.forEach((job, i) => {
      const plan = plans[i];
      if (plan === undefined) return;
      const written = [
        ...plan.transition.put.map(({ row: _row, ...ref }) => ref),
        ...(plan.transition.delete ?? []),
      ].map((ref) => plan.snapshot.key(ref));
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
}

function add(a: TxnSize, b: TxnSize): TxnSize {
  return {
    compares: a.compares + b.compares,
    ops: a.ops + b.ops,
    entries: a.entries + b.entries,
    bytes: a.bytes + b.bytes,
  };
}
