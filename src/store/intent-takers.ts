/**
 * Dispatchers in this process that take intents as they are committed (core/claim-at-commit.ts):
 * a commit through any handle on the same Store object asks one of its tenant's takers for room,
 * has the store create that many of its intents already claimed by it, and hands them over once
 * the commit is answered. Keyed by the Store object, as the in-process news of intents are
 * (intent-signal.ts). Takers of a tenant are asked in turn, so several dispatchers share the work.
 */
import { performance } from 'node:perf_hooks';
import { claimAtCommit, createdIntents, type ClaimAtCommit } from '../core/claim-at-commit.js';
import type { NormalizedCommit } from '../core/validate.js';
import type { Intent } from '../types.js';

export interface IntentTaker {
  /** The dispatcher's id: the claim's claimedBy. */
  readonly dispatcher: string;
  /** The claim's lease. */
  readonly ttlMs: number;
  /** The targets it delivers to. */
  readonly targets: ReadonlySet<string>;
  /** Holds room for up to `wanted` intents; answers how many it holds (0: none). */
  reserve(wanted: number): number;
  /**
   * Ends a reservation of `reserved`: `intents` (at most that many) were committed claimed by this
   * dispatcher, at or after `claimedAt` (performance.now() before the commit was sent); the rest
   * of the room is free again.
   */
  take(reserved: number, intents: Intent[], claimedAt: number): void;
}

const takersByStore = new WeakMap<object, Map<string, IntentTaker[]>>();

/** Offers `taker` for `tenant`'s commits on `store`; returns the function that withdraws it. */
export function offerIntentTaker(store: object, tenant: string, taker: IntentTaker): () => void {
  let byTenant = takersByStore.get(store);
  if (byTenant === undefined) {
    byTenant = new Map();
    takersByStore.set(store, byTenant);
  }
  const takers = byTenant.get(tenant) ?? [];
  takers.push(taker);
  byTenant.set(tenant, takers);
  return () => {
    const index = takers.indexOf(taker);
    if (index >= 0) takers.splice(index, 1);
    if (takers.length === 0 && byTenant.get(tenant) === takers) byTenant.delete(tenant);
  };
}

/** A reservation made for one commit. */
export interface TakerReservation {
  taker: IntentTaker;
  reserved: number;
}

/**
 * Room for the intents of one commit (those of `targets`, in order) with one of `tenant`'s takers,
 * asked in turn starting after the one asked last; null when none has room.
 */
export function reserveTaker(
  store: object,
  tenant: string,
  targets: readonly string[],
): TakerReservation | null {
  const takers = takersByStore.get(store)?.get(tenant);
  if (takers === undefined || takers.length === 0 || targets.length === 0) return null;
  for (let turn = 0; turn < takers.length; turn++) {
    // The first taker moves to the end: the next commit asks another first.
    const taker = takers.shift()!;
    takers.push(taker);
    const servable = targets.filter((target) => taker.targets.has(target)).length;
    if (servable === 0) continue;
    const reserved = taker.reserve(servable);
    if (reserved > 0) return { taker, reserved };
  }
  return null;
}

/**
 * Has `request` claim its intents for one of `tenant`'s takers with room, if there is one. The
 * answer ends the reservation once the commit is answered: with `created` true (the commit was
 * applied now, not a replay) the claimed intents go to the taker, else its room is freed. It
 * answers whether every intent of the commit went to the taker (no other dispatcher need look).
 */
export function claimForTaker(
  store: object,
  tenant: string,
  request: NormalizedCommit,
): ((created: boolean) => boolean) | null {
  const reservation = reserveTaker(
    store,
    tenant,
    request.intents.map((intent) => intent.target),
  );
  if (reservation === null) return null;
  const { taker, reserved } = reservation;
  const claim: ClaimAtCommit = {
    dispatcher: taker.dispatcher,
    ttlMs: taker.ttlMs,
    targets: taker.targets,
    limit: reserved,
  };
  claimAtCommit(request, claim);
  // Before the store's clock started the claim's lease: the taker's deadline errs early.
  const claimedAt = performance.now();
  return (created) => {
    if (!created) {
      taker.take(reserved, [], claimedAt);
      return false;
    }
    // As the store created them; their times are this host's, which only logs would show.
    const claimed = createdIntents(request, Date.now(), claim).filter(
      (intent) => intent.status === 'claimed',
    );
    taker.take(reserved, claimed, claimedAt);
    return claimed.length === request.intents.length;
  };
}
