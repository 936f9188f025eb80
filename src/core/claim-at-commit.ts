/**
 * A claim made by the commit that creates the intents: a dispatcher in the committing process that
 * has room takes them in the commit's own transaction, so a delivered intent costs the store two
 * writes (created claimed, completed) instead of three (created, claimed, completed). The claim is
 * the one a claim would make (claim fence 1, one attempt, a lease of ttlMs, audited `claimed`):
 * every dispatch rule holds unchanged. A claim that never reaches its dispatcher (its process
 * died, the commit's answer was lost) lapses as any claim does and is claimed again by anyone,
 * reconciled first (attempts > 1).
 *
 * Only the library attaches it, after validation, from a dispatcher of the same store and tenant:
 * nothing a worker sends can claim. It is kept beside the request, not in it, so the request's
 * fingerprint is that of the worker's request: a replay without the claim is still a replay.
 */
import type { Intent } from '../types.js';
import { auditEntry, type NewAuditEntry } from './audit-entry.js';
import type { NormalizedCommit } from './validate.js';

export interface ClaimAtCommit {
  /** The dispatcher that takes the intents (recorded as their claimedBy and audit holder). */
  dispatcher: string;
  /** The claim's lease. */
  ttlMs: number;
  /** The targets the dispatcher delivers to: only intents for these are claimed. */
  targets: ReadonlySet<string>;
  /** At most this many of the commit's intents, the first ones of its targets in request order. */
  limit: number;
}

/** The audit reason of a claim made by the commit that created the intent. */
export const CLAIMED_AT_COMMIT = 'at_commit';

const claims = new WeakMap<NormalizedCommit, ClaimAtCommit>();

/** Has `request`'s commit claim its intents for `claim`'s dispatcher. */
export function claimAtCommit(request: NormalizedCommit, claim: ClaimAtCommit): void {
  claims.set(request, claim);
}

/** The claim attached to `request`, if any. */
export function claimAtCommitOf(request: NormalizedCommit): ClaimAtCommit | undefined {
  return claims.get(request);
}

/** The effect keys of `request`'s intents that `claim` takes. */
export function claimedAtCommit(
  request: NormalizedCommit,
  claim: ClaimAtCommit | undefined,
): ReadonlySet<string> {
  const taken = new Set<string>();
  if (claim === undefined) return taken;
  for (const intent of request.intents) {
    if (taken.size >= claim.limit) break;
    if (claim.targets.has(intent.target)) taken.add(intent.effectKey);
  }
  return taken;
}

/** The intents `request` creates at store time `now`: pending, or claimed by the commit's claim. */
export function createdIntents(
  request: NormalizedCommit,
  now: number,
  claim: ClaimAtCommit | undefined,
): Intent[] {
  const taken = claimedAtCommit(request, claim);
  return request.intents.map((intent): Intent => {
    const pending: Intent = {
      effectKey: intent.effectKey,
      scope: request.scope,
      target: intent.target,
      payload: intent.payload,
      status: 'pending',
      attempts: 0,
      fence: request.fence,
      operationId: request.operationId,
      claimFence: 0,
      providerRef: null,
      lastError: null,
      createdAt: now,
      updatedAt: now,
      unknownOutcomes: 0,
      claimedBy: null,
      claimExpiresAt: null,
      nextAttemptAt: now,
    };
    return claim === undefined || !taken.has(intent.effectKey)
      ? pending
      : {
          ...pending,
          status: 'claimed',
          attempts: 1,
          claimFence: 1,
          claimedBy: claim.dispatcher,
          claimExpiresAt: now + claim.ttlMs,
        };
  });
}

/**
 * The audit entries of the created intents: each `pending` (its creation by the commit), and for
 * each claimed one its claim, as a claim would record it, with reason `at_commit`.
 */
export function createdIntentAudit(
  tenant: string,
  request: NormalizedCommit,
  intents: readonly Intent[],
  now: number,
): NewAuditEntry[] {
  const base = {
    at: now,
    tenant,
    scope: request.scope,
    kind: 'intent' as const,
    operationId: request.operationId,
  };
  const entries = intents.map((intent) =>
    auditEntry({
      ...base,
      outcome: 'pending',
      currentFence: request.fence,
      effectKey: intent.effectKey,
    }),
  );
  for (const intent of intents) {
    if (intent.status !== 'claimed') continue;
    entries.push(
      auditEntry({
        ...base,
        outcome: 'claimed',
        reason: CLAIMED_AT_COMMIT,
        holder: intent.claimedBy,
        fence: intent.claimFence,
        effectKey: intent.effectKey,
      }),
    );
  }
  return entries;
}
