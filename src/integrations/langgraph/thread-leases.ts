/**
 * The leases a saver holds for runs that bring no fence of their own: one per thread scope,
 * acquired on the thread's first write and renewed every third of its ttl until it is released or
 * lost. A lost lease is kept, not re-acquired: the superseded run's next write still carries its
 * old fence, so the store rejects it `stale_fence` and the run stops.
 */
import type { FencegateApi } from '../../api.js';
import { acquireLease, type HeldLease } from '../lease-keeper.js';

export class ThreadLeases {
  readonly #held = new Map<string, Promise<HeldLease>>();
  readonly #timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly gate: FencegateApi,
    private readonly holder: string,
    private readonly ttlMs: number,
  ) {}

  /** The lease on `scope`, acquired now if this saver holds none. */
  hold(scope: string): Promise<HeldLease> {
    let lease = this.#held.get(scope);
    if (lease === undefined) {
      lease = acquireLease(this.gate, { scope, holder: this.holder, ttlMs: this.ttlMs });
      this.#held.set(scope, lease);
      lease.then(
        (held) => this.#keepRenewed(scope, held),
        () => this.#held.delete(scope),
      );
    }
    return lease;
  }

  /** Releases the lease on `scope` if this saver still holds it; the next write acquires again. */
  async release(scope: string): Promise<void> {
    const lease = this.#held.get(scope);
    this.forget(scope);
    if (lease !== undefined) await (await lease).release();
  }

  /** Drops the lease without a word to the store (its scope was deleted). */
  forget(scope: string): void {
    clearInterval(this.#timers.get(scope));
    this.#timers.delete(scope);
    this.#held.delete(scope);
  }

  async releaseAll(): Promise<void> {
    const scopes = [...this.#held.keys()];
    await Promise.allSettled(scopes.map((scope) => this.release(scope)));
  }

  #keepRenewed(scope: string, lease: HeldLease): void {
    const timer = setInterval(
      () => {
        lease.renew().catch(() => {
          // A lost lease stops here; a store that cannot be reached is tried again next tick.
          if (lease.lost) clearInterval(timer);
        });
      },
      Math.max(1, Math.floor(this.ttlMs / 3)),
    );
    timer.unref();
    this.#timers.set(scope, timer);
  }
}
