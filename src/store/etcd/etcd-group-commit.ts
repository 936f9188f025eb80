/**
 * Group commit on etcd: commits waiting together are planned together and applied in one Txn.
 * etcd forbids two writes of one key in a Txn, and two commits touching one key must see each
 * other anyway, so a commit that shares a key with one already in the batch waits for the next
 * batch. Each caller gets its own outcome; a batch that keeps conflicting falls back to one Txn
 * per commit.
 */
import { planCommit } from '../../core/plan/plan-commit.js';
import type { NormalizedCommit } from '../../core/validate.js';
import { FencegateError, isFencegateError } from '../../errors.js';
import type { CommitResult } from '../../types.js';
import { outcomeUnknown } from './etcd-errors.js';
import type { EtcdEngine, Planned } from './etcd-engine.js';
import { CallState } from './etcd-snapshot.js';

interface Job {
  tenant: string;
  request: NormalizedCommit;
  resolve: (value: CommitResult) => void;
  reject: (error: unknown) => void;
}

const MAX_BATCH = 64;
const MAX_IN_FLIGHT = 4;
const BATCH_ATTEMPTS = 3;

export class EtcdGroupCommitter {
  #queue: Job[] = [];
  #inFlight = 0;
  #scheduled = false;

  constructor(
    private readonly engine: EtcdEngine,
    private readonly target: string,
  ) {}

  submit(tenant: string, request: NormalizedCommit): Promise<CommitResult> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ tenant, request, resolve, reject });
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
      let plans: Planned<CommitResult>[];
      try {
        plans = [];
        for (const job of selected) {
          plans.push(await this.engine.plan(job.tenant, call, (s) => planCommit(s, job.request)));
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
          .run(job.tenant, (s) => planCommit(s, job.request), {
            operationId: job.request.operationId,
          })
          .then(job.resolve, job.reject),
      ),
    );
  }

  /** Commits whose keys are disjoint and whose Txn fits; the rest wait for the next batch. */
  #choose(
    jobs: Job[],
    plans: Planned<CommitResult>[],
    call: CallState,
  ): { chosen: { job: Job; plan: Planned<CommitResult> }[]; deferred: Job[] } {
    const chosen: { job: Job; plan: Planned<CommitResult> }[] = [];
    const deferred: Job[] = [];
    const taken = new Set<string>();
    jobs.forEach((job, i) => {
      const plan = plans[i];
      if (plan === undefined) return;
      const keys = new Set(plan.snapshot.read.keys());
      for (const put of plan.transition.put) {
        const { row: _row, ...ref } = put;
        keys.add(plan.snapshot.key(ref));
      }
      if ([...keys].some((key) => taken.has(key))) {
        deferred.push(job);
        return;
      }
      try {
        this.engine.build([...chosen.map((c) => c.plan), plan], call);
      } catch (error) {
        if (chosen.length === 0 && isFencegateError(error)) job.reject(error);
        else deferred.push(job);
        return;
      }
      for (const key of keys) taken.add(key);
      chosen.push({ job, plan });
    });
    return { chosen, deferred };
  }

  #forJob(error: unknown, job: Job): unknown {
    if (error instanceof FencegateError && error.code === 'outcome_unknown') {
      return outcomeUnknown(this.target, error.cause, job.request.operationId);
    }
    return error;
  }
}
