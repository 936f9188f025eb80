/**
 * Renewing a held lease every third of its ttl while a piece of work runs. A renewal the store
 * refuses for good (a takeover moved the fence) aborts the lease's signal and ends the renewals;
 * a store that cannot be reached is tried again at the next tick.
 */
import type { HeldLease } from '../lease-keeper.js';

/** Starts renewing; answers the function that stops it. */
export function keepRenewed(lease: HeldLease, ttlMs: number): () => void {
  const timer = setInterval(
    () => {
      lease.renew().catch(() => {
        if (lease.lost) clearInterval(timer);
      });
    },
    Math.max(1, Math.floor(ttlMs / 3)),
  );
  timer.unref();
  return () => clearInterval(timer);
}
