/**
 * fencedProcessor: a BullMQ processor whose every run holds the job's fencegate scope for exactly
 * as long as it holds BullMQ's lock on the job.
 *
 * BullMQ renews a job's lock every half lockDuration; when a renewal fails it emits
 * `lockRenewalFailed` and lets the processor run on, and its stalled checker hands the job to
 * another worker: the job runs twice ("at least once"). Here each run acquires the job's scope (a
 * new fence) and renews that lease only when BullMQ reports the lock renewed (`locksRenewed`), so
 * a run whose lock lapsed also loses its lease, `ctx.signal` aborts, and its commits are refused
 * `lease_expired`, then `stale_fence` once the next run has acquired. The next run waits out the
 * old lease (`lease_held` says until when) before it acquires.
 */
import type { Job, Processor } from 'bullmq';
import type { FencegateApi, FencegateOpsApi } from '../../api.js';
import { FencegateError, isAuthorityLostOnCommit, isFencegateError } from '../../errors.js';
import type { CommitRequest, CommitResult, JobState, LeaseJobEvents } from '../../types.js';
import { LazyAbort } from '../lazy-abort.js';
import { acquireLease, type HeldLease } from '../lease-keeper.js';
import { escapeName, fitName } from '../name-escape.js';
import { ledgerAttempt, ledgerJobId, recordJobStates } from './job-ledger.js';
import { lockWatcherOf, type LockWatcher } from './lock-watcher.js';
import {
  handBack,
  handlerVersions,
  mismatchVersion,
  noVersionHere,
  type HandBackQueue,
  type HandedBack,
} from './version-handlers.js';

/** What a fenced run needs of fencegate: a Fencegate, or a FencegateClient with a worker token. */
export type FencedGate = FencegateApi & Pick<FencegateOpsApi, 'recordJobEvents'>;

export interface FencedProcessorOptions<D = unknown, R = unknown, N extends string = string> {
  /** The scope a job works on: the unit of authority its run holds. */
  scope: (job: Job<D, R, N>) => string;
  /** The lease; default the worker's lockDuration, so both lapse together. */
  ttlMs?: number;
  /** Pins the scope's policy on first acquire and labels the ledger events. */
  policyVersion?: string;
  /**
   * A handler per policy version, instead of the third argument: the run acquires naming these
   * versions (`policyVersions`) and runs the handler of the version the grant says the scope runs.
   * The first version pins a new scope outside any rollout. Not with `policyVersion`.
   */
  handlers?: Record<string, FencedHandler<D, R, N>>;
  /**
   * The queue of each version this worker has no handler for (a fleet per version): a job whose
   * scope runs such a version is added to its queue and completes here as `HandedBack`. A version
   * with neither a handler nor a queue fails the job `policy_mismatch`. Only with `handlers`.
   */
  versionQueues?: Record<string, HandBackQueue>;
}

/** The processor's work for one job, under the run's fence. */
export type FencedHandler<D = unknown, R = unknown, N extends string = string> = (
  job: Job<D, R, N>,
  ctx: FencedJobContext,
) => Promise<R>;

/**
 * A commit of the run: scope and fence are the run's; operationId names it within the run. With
 * `release: true` it is the run's last commit: committed, it also gives up the scope and records
 * the job `succeeded`, in its transaction, so the run needs no release of its own.
 */
export type FencedCommit = Omit<CommitRequest, 'scope' | 'fence' | 'operationId' | 'job'> & {
  operationId?: string;
};

export interface FencedJobContext {
  scope: string;
  fence: number;
  /** The policy version the scope runs, as granted: the version whose handler runs. */
  policyVersion: string | null;
  /** Aborts when the run loses authority: its lock or its lease is gone. */
  signal: AbortSignal;
  /**
   * Commits under the run's fence. The stored operationId is the job's, the fence's and this
   * commit's (its `operationId`, or its position in the run), so a lost reply retried replays
   * while a stale run's refusal never blocks the next run.
   */
  commit(request: FencedCommit): Promise<CommitResult>;
}

/** Refusals of a release: the scope moved on after the run's last commit. */
const REFUSED_RELEASE = new Set(['stale_fence', 'not_holder', 'scope_deleted', 'scope_not_found']);

/** With `handlers`, a processor per version; a handed-back job completes as `HandedBack`. */
export function fencedProcessor<D = unknown, R = unknown, N extends string = string>(
  gate: FencedGate,
  options: FencedProcessorOptions<D, R, N> & { handlers: Record<string, FencedHandler<D, R, N>> },
): Processor<D, R | HandedBack, N>;
export function fencedProcessor<D = unknown, R = unknown, N extends string = string>(
  gate: FencedGate,
  options: FencedProcessorOptions<D, R, N>,
  fn: FencedHandler<D, R, N>,
): Processor<D, R, N>;
export function fencedProcessor<D = unknown, R = unknown, N extends string = string>(
  gate: FencedGate,
  options: FencedProcessorOptions<D, R, N>,
  fn?: FencedHandler<D, R, N>,
): Processor<D, R | HandedBack, N> {
  const versions = checkVersionOptions(options, fn);
  // A function, not an arrow: BullMQ calls `this.processFn(job, token)` on the Worker.
  return async function fenced(
    this: unknown,
    queued: Job<D, R | HandedBack, N>,
    token?: string,
  ): Promise<R | HandedBack> {
    // The job's result type differs only by the hand-back, which no handler ever returns.
    const job = queued as Job<D, R, N>;
    const run = new FencedRun(gate, lockWatcherOf(this), job, token ?? '', options, versions);
    try {
      await run.start();
    } catch (error) {
      run.stop();
      const version = mismatchVersion(error);
      const queue = version === null ? undefined : options.versionQueues?.[version];
      if (version === null || queue === undefined) throw error;
      return await handBack(gate, job as Job, run.scope, version, queue);
    }
    const handler = fn ?? handlerOf(options, run.policyVersion, versions);
    if (handler === undefined) {
      await run.finish('failed').catch(() => undefined);
      throw noVersionHere(run.scope, run.policyVersion ?? 'none', versions ?? []);
    }
    let result: R;
    try {
      result = await handler(job, run.context());
    } catch (error) {
      const retrying = job.attemptsMade + 1 < (job.opts.attempts ?? 1);
      await run.finish(retrying ? 'retrying' : 'failed').catch(() => undefined);
      throw error;
    }
    await run.finish('succeeded');
    return result;
  };
}

/** The handler versions (null for the single-handler form), refusing options that contradict. */
function checkVersionOptions<D, R, N extends string>(
  options: FencedProcessorOptions<D, R, N>,
  fn: FencedHandler<D, R, N> | undefined,
): string[] | null {
  const refuse = (message: string, field: string): never => {
    throw new FencegateError('invalid_request', message, { field });
  };
  if (options.handlers === undefined) {
    if (typeof fn !== 'function') {
      refuse('fencedProcessor needs a handler: a function, or handlers by version', 'handlers');
    }
    if (options.versionQueues !== undefined) {
      refuse('versionQueues goes with handlers: name the versions this worker runs', 'handlers');
    }
    return null;
  }
  if (fn !== undefined) refuse('give handlers by version or one function, not both', 'handlers');
  if (options.policyVersion !== undefined) {
    refuse('give handlers by version or policyVersion, not both', 'policyVersion');
  }
  return handlerVersions(options.handlers);
}

function handlerOf<D, R, N extends string>(
  options: FencedProcessorOptions<D, R, N>,
  version: string | null,
  versions: string[] | null,
): FencedHandler<D, R, N> | undefined {
  if (version === null || versions === null || !versions.includes(version)) return undefined;
  return options.handlers?.[version];
}

class FencedRun<D, R, N extends string> {
  readonly #lockLost = new LazyAbort();
  /** The run's scope and its ledger id, each taken once. */
  readonly #scope: string;
  readonly #jobId: string;
  #lease: HeldLease | null = null;
  #commits = 0;
  /** A commit with `release: true` ended the lease and recorded `succeeded`. */
  #releasedByCommit = false;

  constructor(
    private readonly gate: FencedGate,
    private readonly locks: LockWatcher,
    private readonly job: Job<D, R, N>,
    private readonly token: string,
    private readonly options: FencedProcessorOptions<D, R, N>,
    /** The versions of the handlers, or null for one handler (and `policyVersion`, if any). */
    private readonly versions: string[] | null,
  ) {
    this.#scope = options.scope(job);
    this.#jobId = ledgerJobId(job);
  }

  get scope(): string {
    return this.#scope;
  }

  /** The version the grant says the scope runs. */
  get policyVersion(): string | null {
    return this.#lease?.grant.policyVersion ?? null;
  }

  #policy(): { policyVersion?: string; policyVersions?: string[] } {
    if (this.versions !== null) return { policyVersions: this.versions };
    return this.options.policyVersion === undefined
      ? {}
      : { policyVersion: this.options.policyVersion };
  }

  #unwatch: () => void = () => undefined;
  /** Set when BullMQ reported the job's lock lost: every later commit is refused with it. */
  #lockLostError: FencegateError | null = null;

  #onRenewed(): void {
    // A refusal aborts the lease's signal itself; an unreachable store leaves it to expire.
    this.#lease?.renew().catch(() => undefined);
  }

  /**
   * The lock is gone, so BullMQ may hand the job to another worker at any moment: from now on this
   * run's commits are refused here, and its lease is released in the store, so the next run
   * acquires at once instead of after the lease's ttl, and a commit already on its way is refused
   * `authority_revoked` by the store.
   */
  #onLockLost(): void {
    if (this.#lockLostError !== null) return;
    const lost = new FencegateError(
      'authority_revoked',
      `BullMQ lost the lock of job ${this.job.id ?? ''}; this run no longer owns it`,
      { scope: this.#scope },
    );
    this.#lockLostError = lost;
    this.#lockLost.abort(lost);
    void this.#lease?.relinquish(lost);
  }

  async start(): Promise<void> {
    this.#unwatch = this.locks.watch(this.job.id ?? '', {
      renewed: () => this.#onRenewed(),
      lost: () => this.#onLockLost(),
    });
    const ttlMs = this.options.ttlMs ?? this.locks.worker.opts.lockDuration ?? 30_000;
    this.#lease = await acquireLease(
      this.gate,
      {
        scope: this.#scope,
        holder: fitName(`bullmq:${this.#jobId}:${escapeName(this.token)}`),
        ttlMs,
        job: this.#ledger(['reserved', 'running']),
        ...this.#policy(),
      },
      { wait: true, signal: this.#lockLost },
    );
    // The lock may have gone while the grant was on its way: give the new lease straight back.
    if (this.#lockLostError !== null) {
      await this.#lease.relinquish(this.#lockLostError);
      throw this.#lockLostError;
    }
  }

  /**
   * The job's states for the ledger, recorded with the lease operation that reaches them: reserved
   * (the scope is the run's) and running (the processor starts) with the grant, the final state
   * with the release.
   */
  #ledger(states: JobState[]): LeaseJobEvents {
    return { jobId: this.#jobId, attempt: ledgerAttempt(this.job), states };
  }

  context(): FencedJobContext {
    const lease = this.#requireLease();
    const scope = this.#scope;
    const policyVersion = lease.grant.policyVersion;
    // Commits of a handler by version are labelled with it: the version whose fence they carry.
    const labelled = this.versions !== null && policyVersion !== null ? { policyVersion } : {};
    return {
      scope,
      fence: lease.fence,
      policyVersion,
      // Read on demand: a run that never reads its signal never makes one (lazy-abort.ts).
      get signal() {
        return lease.signal;
      },
      commit: async (request) => {
        this.#commits += 1;
        const key = request.operationId ?? String(this.#commits);
        const operationId = fitName(`bullmq:${this.#jobId}:${lease.fence}:${key}`);
        if (this.#lockLostError !== null) return refusedLocally(operationId, this.#lockLostError);
        const result = await this.gate.commit({
          ...request,
          ...labelled,
          scope,
          fence: lease.fence,
          operationId,
          ...(request.release === true ? { job: this.#ledger(['succeeded']) } : {}),
        });
        if (result.outcome === 'committed' && request.release === true) {
          this.#releasedByCommit = true;
          lease.released();
        } else if (result.outcome === 'rejected' && isAuthorityLostOnCommit(result.error.code)) {
          lease.lose(
            new FencegateError(result.error.code, result.error.message, result.error.details),
          );
        }
        return result;
      },
    };
  }

  /**
   * Records the final state with the release of the lease. A run that lost authority records
   * nothing: the job belongs to its successor (or to a cutover's controller) now, and the ledger
   * keeps the state the run was in when it lost it. A release refused because authority moved
   * after the run's last commit records the state on its own; a store that cannot be reached
   * fails the job, as its state could not be recorded. After a commit that released the scope
   * (and recorded `succeeded`), only a run that failed after it has a state left to record.
   */
  async finish(state: 'succeeded' | 'failed' | 'retrying'): Promise<void> {
    const lease = this.#lease;
    try {
      if (lease !== null && this.#releasedByCommit) {
        if (state !== 'succeeded') await recordJobStates(this.gate, this.job, lease.grant, [state]);
        return;
      }
      if (lease === null || lease.lost) return;
      const job = this.#ledger([state]);
      try {
        await lease.release(job);
      } catch (error) {
        if (!isFencegateError(error) || !REFUSED_RELEASE.has(error.code)) throw error;
        await recordJobStates(this.gate, this.job, lease.grant, job.states);
      }
    } finally {
      this.stop();
    }
  }

  stop(): void {
    this.#unwatch();
    if (this.#lease?.lost === false) {
      this.#lease.lose(() => new FencegateError('authority_revoked', 'the run has ended'));
    }
  }

  #requireLease(): HeldLease {
    if (this.#lease === null) throw new Error('the run has not acquired its scope');
    return this.#lease;
  }
}

/** The answer of a commit the run refuses itself, without asking the store: nothing was written. */
function refusedLocally(operationId: string, error: FencegateError): CommitResult {
  return {
    outcome: 'rejected',
    operationId,
    replayed: false,
    error: { code: 'authority_revoked', message: error.message, details: error.details },
  };
}
