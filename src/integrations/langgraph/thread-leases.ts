/**
 * The leases a saver holds for runs that bring no fence of their own: one per thread scope,
 * acquired on the thread's first write and renewed every third of its ttl until it is released or
 * lost. A lost lease is kept, not re-acquired: the superseded run's next write still carries its
 * old fence, so the store rejects it `stale_fence` and the run stops.
 */
import { randomUUID } from 'node:crypto';
import type { FencegateApi } from '../../api.js';
import { FencegateError, isFencegateError } from '../../errors.js';
import { acquireLease, HeldLease, type LeaseRequest } from '../lease-keeper.js';
import { fitName } from '../name-escape.js';
import { keepRenewed } from './lease-renewal.js';

/** An acquire refused for these reasons is a claim's cue to take the thread over. */
const TAKE_OVER_ON = new Set(['lease_held', 'scope_deleted']);

export class ThreadLeases {
  readonly #held = new Map<string, Promise<HeldLease>>();
  /** Per scope, the function that stops its lease's renewals. */
  readonly #renewals = new Map<string, () => void>();

  constructor(
    private readonly gate: FencegateApi,
    private readonly holder: string,
    private readonly ttlMs: number,
    /** The version the saver's leases are acquired and taken over under, if it names one. */
    private readonly policyVersion?: string,
  ) {}

  /** The lease on `scope`, acquired now if this saver holds none. */
  hold(scope: string): Promise<HeldLease> {
    let lease = this.#held.get(scope);
    if (lease === undefined) {
      lease = acquireLease(this.gate, this.#request(scope));
      this.#keep(scope, lease);
    }
    return lease;
  }

  /**
   * Takes `scope` for a new owner, so its fence moves past every earlier writer's: acquires it
   * when nobody holds it, else takes it over (from another holder, or from this saver's own
   * earlier claim, whose lease is marked lost). Each claim holds the scope as a holder of its own,
   * `<holder>:<claim id>`: a replica given the same holder holding the thread is then taken over,
   * not answered its live grant. Over HTTP the takeover needs an operator token or a worker token
   * whose take-over right covers the scope.
   */
  claim(scope: string): Promise<HeldLease> {
    const previous = this.#held.get(scope);
    this.forget(scope);
    const request = { ...this.#request(scope), holder: fitName(`${this.holder}:${randomUUID()}`) };
    const lease = this.#takeFresh(request, previous === undefined);
    this.#keep(scope, lease);
    void previous?.then(
      (held) =>
        held.lose(
          new FencegateError('stale_fence', `a newer claim of ${scope} superseded this one`),
        ),
      () => undefined,
    );
    return lease;
  }

  /** Releases the lease on `scope` if this saver still holds it; the next write acquires again. */
  async release(scope: string): Promise<void> {
    const lease = this.#held.get(scope);
    this.forget(scope);
    if (lease !== undefined) await (await lease).release();
  }

  /**
   * Releases `lease` (a claim's); if it is still this saver's lease on `scope`, forgets it, so the
   * saver's next write to the thread acquires it again. A newer claim's lease is left alone.
   */
  async releaseLease(scope: string, lease: HeldLease): Promise<void> {
    const current = this.#held.get(scope);
    if (current !== undefined && (await current.catch(() => undefined)) === lease) {
      this.forget(scope);
    }
    await lease.release();
  }

  /** Drops the lease without a word to the store (its scope was deleted). */
  forget(scope: string): void {
    this.#renewals.get(scope)?.();
    this.#renewals.delete(scope);
    this.#held.delete(scope);
  }

  async releaseAll(): Promise<void> {
    const scopes = [...this.#held.keys()];
    await Promise.allSettled(scopes.map((scope) => this.release(scope)));
  }

  async #takeFresh(request: LeaseRequest, mayAcquire: boolean): Promise<HeldLease> {
    if (mayAcquire) {
      try {
        return await acquireLease(this.gate, request);
      } catch (error) {
        if (!isFencegateError(error) || !TAKE_OVER_ON.has(error.code)) throw error;
      }
    }
    const sentAt = Date.now();
    const grant = await this.gate.takeover(request.scope, {
      holder: request.holder,
      ttlMs: request.ttlMs,
      ...(this.policyVersion === undefined ? {} : { policyVersion: this.policyVersion }),
    });
    return new HeldLease(this.gate, request, grant, sentAt);
  }

  #request(scope: string): LeaseRequest {
    const policy = this.policyVersion === undefined ? {} : { policyVersion: this.policyVersion };
    return { scope, holder: this.holder, ttlMs: this.ttlMs, ...policy };
  }

  #keep(scope: string, lease: Promise<HeldLease>): void {
    this.#held.set(scope, lease);
    lease.then(
      (held) => {
        if (this.#held.get(scope) === lease)
          this.#renewals.set(scope, keepRenewed(held, this.ttlMs));
      },
      () => {
        if (this.#held.get(scope) === lease) this.#held.delete(scope);
      },
    );
  }
}
