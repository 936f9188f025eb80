/**
 * Group commit on PostgreSQL: operations waiting together are planned at one store time and
 * applied in one statement (one transaction, one WAL flush). Under light load an operation still
 * goes alone at once, so batching adds no latency; `maxInFlight` bounds the statements running.
 *
 * A batch holds one tenant's operations with distinct rows: an operation that shares a row with
 * one already in the batch waits for the next (it must see the other's write), and one that
 * listed a range runs alone. A transition that did not hold is planned again on the current rows
 * its answer carried. A lost connection answers each operation of the batch outcome_unknown with
 * its own operationId; a batch that fails for another reason runs its operations alone, so one
 * bad request cannot fail its neighbours.
 */
import { isRangeRef, type Transition } from '../../core/plan/transition.js';
import { isFencegateError } from '../../errors.js';
import { touchedKeys, type PlannedOn } from './postgres-apply-payload.js';
import { OPTIMISTIC_ATTEMPTS, type PostgresEngine } from './postgres-engine.js';
import { outcomeUnknown } from './postgres-errors.js';
import { CallState, type PostgresSnapshot } from './postgres-snapshot.js';

interface Job {
  tenant: string;
  plan: (snapshot: PostgresSnapshot) => Transition<unknown>;
  operationId: string | undefined;
  call: CallState;
  attempts: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class PostgresBatcher {
  #queue: Job[] = [];
  #inFlight = 0;

  constructor(
    private readonly engine: PostgresEngine,
    private readonly target: string,
    private readonly maxInFlight: number,
    private readonly maxBatch = 64,
  ) {}

  submit<A>(
    tenant: string,
    plan: (snapshot: PostgresSnapshot) => Transition<A>,
    operationId?: string,
  ): Promise<A> {
    return new Promise<A>((resolve, reject) => {
      this.#queue.push({
        tenant,
        plan,
        operationId,
        call: new CallState(),
        attempts: 0,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#inFlight < Math.max(1, this.maxInFlight) && this.#queue.length > 0) {
      const tenant = (this.#queue[0] as Job).tenant;
      const batch: Job[] = [];
      const rest: Job[] = [];
      for (const job of this.#queue) {
        if (job.tenant === tenant && batch.length < this.maxBatch) batch.push(job);
        else rest.push(job);
      }
      this.#queue = rest;
      this.#inFlight += 1;
      void this.#run(tenant, batch).finally(() => {
        this.#inFlight -= 1;
        this.#pump();
      });
    }
  }

  async #run(tenant: string, jobs: Job[]): Promise<void> {
    const members: Job[] = [];
    const planned: PlannedOn<unknown>[] = [];
    let held: boolean[];
    try {
      held = await this.engine.session(async (send) => {
        // Store time once the connection is held: the batch plans at the time it applies.
        const now = this.engine.now();
        const later: Job[] = [];
        const taken = new Set<string>();
        for (const job of jobs) {
          let plan: PlannedOn<unknown>;
          try {
            plan = await this.engine.plan(tenant, job.call, job.plan, now, send);
          } catch (error) {
            job.reject(error);
            continue;
          }
          if (plan.transition.expect.some(isRangeRef)) {
            this.#alone(job);
            continue;
          }
          const keys = [...touchedKeys(plan).keys()];
          if (keys.some((key) => taken.has(key))) {
            later.push(job);
            continue;
          }
          for (const key of keys) taken.add(key);
          planned.push(plan);
          members.push(job);
        }
        this.#queue.unshift(...later);
        if (members.length === 0) return [];
        return this.engine.apply(tenant, now, planned, members[0]?.operationId, send);
      });
    } catch (error) {
      if (members.length <= 1 || !isFencegateError(error)) {
        for (const job of members.length > 0 ? members : jobs) job.reject(error);
        return;
      }
      if (error.code === 'outcome_unknown') {
        for (const job of members) {
          job.reject(outcomeUnknown(this.target, error.cause, job.operationId));
        }
        return;
      }
      if (error.code === 'store_unavailable') {
        for (const job of members) job.reject(error);
        return;
      }
      for (const job of members) this.#alone(job);
      return;
    }
    members.forEach((job, i) => {
      if (held[i] === true) {
        const answer = (planned[i] as PlannedOn<unknown>).transition.answer;
        if (answer.ok) job.resolve(answer.value);
        else job.reject(answer.error);
        return;
      }
      // Rows many writers change at once: go alone, which ends holding its locks.
      job.attempts += 1;
      if (job.attempts >= OPTIMISTIC_ATTEMPTS) this.#alone(job);
      else this.#queue.unshift(job);
    });
  }

  #alone(job: Job): void {
    this.engine.run(job.tenant, job.plan, job.operationId).then(job.resolve, job.reject);
  }
}
