/**
 * Holding a fencegate lease for as long as a piece of work runs: acquiring it (waiting out another
 * holder's lease when asked to), renewing it, and an AbortSignal that fires when authority is
 * lost: a renewal refused (a takeover or cutover moved the fence), or the lease running out
 * without one. The store still decides every commit; the signal only tells the work to stop
 * early instead of learning it from a rejection.
 */
import type { FencegateApi } from '../api.js';
import { FencegateError, isFencegateError, isLeaseLostOnRenewal } from '../errors.js';
import type { Grant, LeaseJobEvents } from '../types.js';
import { LazyAbort } from './lazy-abort.js';

export interface LeaseRequest {
  scope: string;
  holder: string;
  ttlMs: number;
  policyVersion?: string;
  /** The versions this work can run, instead of one policyVersion: the grant says which applies. */
  policyVersions?: string[];
  /** Job states the grant records in the jobs ledger, in its transaction. */
  job?: LeaseJobEvents;
}

/** The policy an acquire names: one version, or the versions the work can run. */
export type PolicyChoice = Pick<LeaseRequest, 'policyVersion' | 'policyVersions'>;

/** The policy fields of `request` that are set, to spread into another request. */
export function policyOf(request: PolicyChoice): PolicyChoice {
  if (request.policyVersions !== undefined) return { policyVersions: request.policyVersions };
  return request.policyVersion === undefined ? {} : { policyVersion: request.policyVersion };
}

export class HeldLease {
  readonly #gate: FencegateApi;
  readonly #request: LeaseRequest;
  readonly #abort = new LazyAbort();
  #grant: Grant;
  /** Local time by which the lease must have run out; null for a lease without expiry. */
  #deadline: number | null = null;
  /** Whether the signal was read: only then does a timer abort it at the deadline. */
  #watched = false;
  #expiryTimer: NodeJS.Timeout | undefined;

  constructor(gate: FencegateApi, request: LeaseRequest, grant: Grant, grantedAt: number) {
    this.#gate = gate;
    this.#request = request;
    this.#grant = grant;
    this.#armExpiry(grantedAt);
  }

  get fence(): number {
    return this.#grant.fence;
  }

  get grant(): Grant {
    return this.#grant;
  }

  /** Aborts when authority is lost; its reason is the FencegateError that said so. */
  get signal(): AbortSignal {
    if (!this.#watched) {
      this.#watched = true;
      this.#checkExpiry();
      this.#startTimer();
    }
    return this.#abort.signal;
  }

  get lost(): boolean {
    this.#checkExpiry();
    return this.#abort.aborted;
  }

  /**
   * Extends the lease by ttlMs. A refusal that means the lease is gone aborts the signal and is
   * thrown; a store that cannot be reached is thrown without aborting (the lease may still hold).
   */
  async renew(): Promise<void> {
    if (this.lost) return;
    const sentAt = Date.now();
    try {
      this.#grant = await this.#gate.renew({
        scope: this.#request.scope,
        holder: this.#request.holder,
        fence: this.#grant.fence,
        ttlMs: this.#request.ttlMs,
      });
      this.#armExpiry(sentAt);
    } catch (error) {
      if (isFencegateError(error) && isLeaseLostOnRenewal(error.code)) this.lose(error);
      throw error;
    }
  }

  /**
   * Gives the lease up early (the fence stays; the next grant moves it), recording `job`'s states
   * in the jobs ledger with the release. A lease already lost is not released and records nothing.
   */
  async release(job?: LeaseJobEvents): Promise<void> {
    if (this.lost) return;
    this.released();
    await this.#gate.release({
      scope: this.#request.scope,
      holder: this.#request.holder,
      fence: this.#grant.fence,
      ...(job === undefined ? {} : { job }),
    });
  }

  /**
   * Marks the lease as given up by a store operation that released it (a commit with
   * `release: true`): the signal aborts and renewals stop, as after release().
   */
  released(): void {
    this.lose(() => new FencegateError('authority_revoked', 'the lease was released'));
  }

  /**
   * Gives authority up because the work must stop writing (its job lock is gone): the signal aborts
   * at once, then the store releases the lease so nobody waits out its ttl. A release the store
   * refuses (the scope moved on) or cannot take (unreachable: the lease then runs out on its own)
   * changes nothing more.
   */
  async relinquish(reason: FencegateError): Promise<void> {
    if (this.lost) return;
    this.lose(reason);
    await this.#gate
      .release({
        scope: this.#request.scope,
        holder: this.#request.holder,
        fence: this.#grant.fence,
      })
      .catch(() => undefined);
  }

  /** Marks authority as lost: the signal aborts and renewals stop. */
  lose(reason: FencegateError | (() => FencegateError)): void {
    this.#stopTimer();
    this.#abort.abort(reason);
  }

  /**
   * The store judges expiry by its own clock; locally the lease counts as lost once it must have
   * run out, measured from when the grant or renewal was sent (so never late). `lost` compares
   * the clock when read; a timer aborts the signal at the deadline, once the signal was read
   * (a run that never reads it makes no timer).
   */
  #armExpiry(sentAt: number): void {
    this.#stopTimer();
    this.#deadline = this.#grant.leaseExpiresAt === null ? null : sentAt + this.#request.ttlMs;
    if (this.#watched) this.#startTimer();
  }

  #startTimer(): void {
    if (this.#deadline === null || this.#abort.aborted) return;
    const remaining = Math.max(0, this.#deadline - Date.now());
    this.#expiryTimer = setTimeout(() => {
      // Timers and Date.now() run on different clocks: one that fires early waits again.
      this.#expiryTimer = undefined;
      this.#checkExpiry();
      this.#startTimer();
    }, remaining);
    this.#expiryTimer.unref();
  }

  #checkExpiry(): void {
    if (this.#abort.aborted || this.#deadline === null || Date.now() < this.#deadline) return;
    const scope = this.#request.scope;
    this.lose(
      () => new FencegateError('lease_expired', `the lease on ${scope} ran out`, { scope }),
    );
  }

  #stopTimer(): void {
    if (this.#expiryTimer !== undefined) clearTimeout(this.#expiryTimer);
    this.#expiryTimer = undefined;
  }
}

export interface AcquireOptions {
  /** Wait out another holder's live lease (retrying at its expiry) instead of failing lease_held. */
  wait?: boolean;
  /** Stops the wait. */
  signal?: AbortSignal | LazyAbort;
}

/** The shortest pause between two acquire attempts while another holder's lease runs out. */
const MIN_WAIT_MS = 25;

export async function acquireLease(
  gate: FencegateApi,
  request: LeaseRequest,
  options: AcquireOptions = {},
): Promise<HeldLease> {
  for (;;) {
    options.signal?.throwIfAborted();
    const sentAt = Date.now();
    try {
      const grant = await gate.acquire(request);
      return new HeldLease(gate, request, grant, sentAt);
    } catch (error) {
      if (!options.wait || !isFencegateError(error) || error.code !== 'lease_held') throw error;
      // leaseExpiresAt is store time; the local clock may differ, so this only paces the retries.
      const expiresAt = Number(error.details.leaseExpiresAt ?? 0);
      const pause = Math.min(Math.max(expiresAt - Date.now(), MIN_WAIT_MS), request.ttlMs);
      const signal = options.signal;
      await sleep(pause, signal instanceof LazyAbort ? signal.signal : signal);
    }
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }
    function aborted(): void {
      clearTimeout(timer);
      reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    }
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
