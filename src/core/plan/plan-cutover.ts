/**
 * Policies, cutovers and the jobs ledger planned over a snapshot. A cutover is planned once (its
 * scope list fixed then) and carried out in chunks; each scope's fence bump and its step row go in
 * the same transition, so a resumed cutover never bumps a scope twice.
 */
import { cutoverFingerprint } from '../cutover-rules.js';
import type { FencegateError } from '../../errors.js';
import type { CutoverRequest, Policy, RegisterPolicyRequest } from '../../types.js';
import { auditEntry } from '../audit-entry.js';
import { tokenField, type Caller } from '../grant-token.js';
import { nextFence } from '../lease-rules.js';
import {
  cutoverIdConflict,
  policyConflict,
  refusalError,
  rolloutOverlap,
  unregisteredCutoverPolicy,
} from '../refusal-messages.js';
import {
  ACTIVE_ROLLOUTS_REF,
  RUNNING_CUTOVERS_REF,
  cutoverCursorPut,
  cutoverCursorRef,
  readCutoverCursor,
  readActiveRollouts,
  readRunningCutovers,
  runningCutoversPut,
} from '../rollout-rows.js';
import { overlaps } from '../rollout-rules.js';
import type { NewAuditEntry } from '../audit-entry.js';
import {
  cutoverList,
  cutoverUpdate,
  readOnly,
  type CutoverRow,
  type Put,
  type RangeRef,
  type Ref,
  type ScopeRow,
  type Snapshot,
  type Transition,
} from './transition.js';
import { planListingPage } from './plan-cutover-listing.js';
import { fenceGrantPut } from './plan-leases.js';
import { rolloutMover } from './plan-rollout-moves.js';
import { intentsCursorOf, planRollbackIntentsPage } from './plan-rollback-intents.js';
import type { CancelPageBounds } from '../cancel-intents-page.js';

export function planRegisterPolicy(
  snapshot: Snapshot,
  request: RegisterPolicyRequest,
  registeredBy: string | null,
): Transition<{ policy: Policy; created: boolean }> {
  const ref = { type: 'policy' as const, version: request.version };
  const existing = snapshot.get(ref);
  if (existing !== null) {
    if ((request.digest ?? null) !== existing.digest) {
      return {
        expect: [ref],
        put: [],
        audit: [],
        answer: {
          ok: false,
          error: refusalError(policyConflict(request.version, existing.digest)),
        },
      };
    }
    return {
      expect: [ref],
      put: [],
      audit: [],
      answer: { ok: true, value: { policy: existing, created: false } },
    };
  }
  const policy: Policy = {
    version: request.version,
    digest: request.digest ?? null,
    description: request.description ?? null,
    registeredBy,
    registeredAt: snapshot.now,
  };
  return {
    expect: [ref],
    put: [{ ...ref, row: policy }],
    audit: [],
    answer: { ok: true, value: { policy, created: true } },
  };
}

/**
 * Starts a cutover, or checks that an existing one with this id is the same request. `lastSeq` is
 * the last audit seq the snapshot saw: later entries happened after the cutover began. A cutover
 * whose scopes meet an active rollout's selection is refused: the rollout's steps and rollback
 * are the only movers of those scopes until it ends. A started cutover is listed among the
 * tenant's running cutovers until it completes, so a rollout over its scopes waits for it.
 */
export function planCutoverStart(
  snapshot: Snapshot,
  request: CutoverRequest & { cutoverId: string },
  lastSeq: number,
): Transition<void> {
  const fingerprint = cutoverFingerprint(request);
  const ref = { type: 'cutover' as const, cutoverId: request.cutoverId };
  const existing = snapshot.get(ref);
  if (existing !== null) {
    if (existing.requestFingerprint !== fingerprint) {
      return failed([ref], refusalError(cutoverIdConflict(request.cutoverId)));
    }
    return { expect: [ref], put: [], audit: [], answer: { ok: true, value: undefined } };
  }
  const policyRef = { type: 'policy' as const, version: request.toPolicy };
  if (snapshot.get(policyRef) === null) {
    return failed([ref, policyRef], refusalError(unregisteredCutoverPolicy(request.toPolicy)));
  }
  const selection =
    request.scopes !== undefined ? { scopes: request.scopes } : { prefix: request.prefix ?? '' };
  const active = readActiveRollouts(snapshot).find((rollout) =>
    overlaps(rollout.selection, selection),
  );
  if (active !== undefined) {
    return failed(
      [ref, policyRef, ACTIVE_ROLLOUTS_REF],
      refusalError(rolloutOverlap(active.rolloutId)),
    );
  }
  // A list is the request's own; a prefix is listed in pages by the chunks that follow, from the
  // active scopes under it (plan-cutover-listing.ts).
  const cutover = newCutover(
    snapshot,
    { ...request, requestFingerprint: fingerprint },
    lastSeq,
    request.scopes !== undefined ? [...new Set(request.scopes)].sort() : [],
  );
  const running = readRunningCutovers(snapshot);
  return {
    expect: [ref, policyRef, ACTIVE_ROLLOUTS_REF, RUNNING_CUTOVERS_REF],
    put: [
      cutover,
      ...(request.scopes !== undefined
        ? []
        : [
            cutoverCursorPut(request.cutoverId, {
              next: 0,
              listing: { of: 'prefix', prefix: request.prefix ?? '', after: '' },
            }),
          ]),
      runningCutoversPut([...running, { cutoverId: request.cutoverId, selection }]),
    ],
    audit: [],
    answer: { ok: true, value: undefined },
  };
}

/**
 * The put of a new cutover over `scopes`: a plain cutover's or a rollout's; empty for one whose
 * list its cursor's listing builds.
 */
export function newCutover(
  snapshot: Snapshot,
  request: {
    cutoverId: string;
    requestFingerprint: string;
    toPolicy: string;
    holder: string;
    leaseTtlMs?: number;
    reason?: string;
  },
  lastSeq: number,
  scopes: string[],
): Put {
  return {
    type: 'cutover',
    cutoverId: request.cutoverId,
    row: {
      cutoverId: request.cutoverId,
      requestFingerprint: request.requestFingerprint,
      toPolicy: request.toPolicy,
      holder: request.holder,
      leaseTtlMs: request.leaseTtlMs ?? null,
      reason: request.reason ?? null,
      status: 'running',
      startedAt: snapshot.now,
      completedAt: null,
      startSeq: lastSeq,
      scopes,
    },
  };
}

function failed<A>(expect: Ref[], error: FencegateError): Transition<A> {
  return { expect, put: [], audit: [], answer: { ok: false, error } };
}

/**
 * What a cutover does to one listed scope when its chunk runs: moves it (fence + 1) to `policy`,
 * held by `holder` (or left released), with the extra rows of the move; or leaves it, skipped.
 */
export type ScopeMove =
  | { move: false; expect?: Ref[] }
  | {
      move: true;
      holder: string | null;
      leaseExpiresAt: number | null;
      policyVersion: string;
      puts: (fence: number) => Put[];
      /** Refs the decision read, expected unchanged when the chunk applies. */
      expect?: Ref[];
      /** What else the move does under its new fence, after its own audit entry. */
      alongside?: (fence: number) => {
        expect: (Ref | RangeRef)[];
        put: Put[];
        audit: NewAuditEntry[];
      };
    };

export type CutoverMover = (scope: string, row: ScopeRow | null) => ScopeMove;

/** A plain cutover moves every listed scope but a deleted one (only a takeover re-creates it). */
function plainMover(cutover: CutoverRow, now: number): CutoverMover {
  const leaseExpiresAt = cutover.leaseTtlMs === null ? null : now + cutover.leaseTtlMs;
  return (_scope, row) =>
    row?.status === 'deleted'
      ? { move: false }
      : {
          move: true,
          holder: cutover.holder,
          leaseExpiresAt,
          policyVersion: cutover.toPolicy,
          puts: () => [],
        };
}

/**
 * Handles the next `chunk` listed scopes from the cutover's cursor: moves each, or leaves it
 * skipped; answers how many it handled (0 marks the cutover completed). A cutover whose list is
 * still being built lists its next page instead (plan-cutover-listing.ts): `listPage` names of a
 * range, whose rows come with it, or `chunk` names of a list, each read by its key as a chunk
 * reads its scopes. A chunk reads the cursor, the cutover and its own scopes' rows, never
 * every step so far: its cost follows the chunk, not the list. The cursor and each scope's step
 * row are expected unchanged, so two senders of one chunk never both apply it, and a scope with a
 * step row already (moved by a chunk of a cutover started before cursors were kept) is passed over.
 * A rollback with cancelIntents cancels the intents of the scopes it moved before it moves more
 * (plan-rollback-intents.ts): such a call handles a page of intents instead of a chunk, and
 * answers 1 or more. `bounds` is what one transaction holds of such a page.
 */
export function planCutoverChunk(
  snapshot: Snapshot,
  cutoverId: string,
  chunk: number,
  caller?: Caller,
  bounds: CancelPageBounds = {},
  listPage: number = chunk,
): Transition<number> {
  const { now, tenant } = snapshot;
  const ref = { type: 'cutover' as const, cutoverId };
  const cutover = snapshot.get(ref);
  if (cutover === null) throw new Error('a planned cutover disappeared');
  const cursorRef = cutoverCursorRef(cutoverId);
  const cursor = readCutoverCursor(snapshot, cutoverId);
  if (cursor.listing !== undefined) {
    return planListingPage(snapshot, cutover, cursor.listing, { range: listPage, list: chunk });
  }
  const start = cursor.next;
  // A list is read a page at a time, with its step and scope rows, after the last name the chunks
  // handled: a chunk reads its own scopes, not the list (which may hold 100,000, given at the
  // start or built in pages). Only a cursor an older build left past the start of a list given at
  // the start has no last name: that chunk cuts its window from the whole list, and stores its
  // last name for the next.
  const after = cursor.after ?? (start === 0 ? '' : undefined);
  const window =
    after !== undefined
      ? snapshot.list({
          type: 'page',
          of: { type: 'cutoverScopes', cutoverId },
          after,
          limit: chunk,
        })
      : cutoverList(snapshot, cutover).slice(start, start + chunk);
  if (window.length === 0 && cutover.status === 'completed') {
    return readOnly([ref, cursorRef], 0);
  }
  const rollout = rolloutMover(
    snapshot,
    cutover,
    after === undefined ? undefined : { after, limit: chunk },
  );
  if (rollout?.intents !== undefined) {
    const from = intentsCursorOf(cursor);
    // A rollback cancels the intents of the scopes it moved before it moves more.
    if (from.next < start) {
      return planRollbackIntentsPage(snapshot, {
        cutover,
        intents: rollout.intents,
        moved: start,
        listAfter: after,
        from,
        chunk,
        bounds,
        expect: [ref, cursorRef, ...rollout.expect],
      });
    }
  }
  if (window.length === 0) {
    const running = readRunningCutovers(snapshot);
    const others = running.filter((entry) => entry.cutoverId !== cutoverId);
    return {
      expect: [ref, cursorRef, RUNNING_CUTOVERS_REF, ...(rollout?.expect ?? [])],
      put: [
        cutoverUpdate(cutover, { status: 'completed', completedAt: now }, []),
        ...(others.length === running.length ? [] : [runningCutoversPut(others)]),
      ],
      audit: [],
      answer: { ok: true, value: 0 },
    };
  }
  const pending = window.filter(
    (scope) => snapshot.get({ type: 'cutoverStep', cutoverId, scope }) === null,
  );
  const mover = rollout?.mover ?? plainMover(cutover, now);
  const transition: Transition<number> = {
    expect: [
      ref,
      cursorRef,
      ...window.map((scope) => ({ type: 'cutoverStep' as const, cutoverId, scope })),
      ...(rollout?.expect ?? []),
    ],
    put: [
      cutoverCursorPut(cutoverId, {
        next: start + window.length,
        after: window.at(-1),
        intents: cursor.intents,
      }),
    ],
    audit: [],
    answer: { ok: true, value: window.length },
  };
  const steps: Put[] = [];
  for (const scope of pending) {
    const row = snapshot.get({ type: 'scope', scope });
    transition.expect.push({ type: 'scope', scope });
    const move = mover(scope, row);
    transition.expect.push(...(move.expect ?? []));
    if (!move.move) {
      // The scope keeps its fence, which the step row records; it is no longer pending.
      steps.push({
        type: 'cutoverStep',
        cutoverId,
        scope,
        row: { fence: row?.fence ?? 0, skipped: true },
      });
      continue;
    }
    // A listed scope that was never created gets fence 1.
    const fence = nextFence(row);
    transition.put.push({
      type: 'scope',
      scope,
      row: {
        fence,
        holder: move.holder,
        leaseExpiresAt: move.holder === null ? null : move.leaseExpiresAt,
        policyVersion: move.policyVersion,
        status: 'active',
        updatedAt: now,
      },
    });
    if (move.holder !== null) transition.put.push(fenceGrantPut(scope, fence, move.holder));
    transition.put.push(...move.puts(fence));
    steps.push({ type: 'cutoverStep', cutoverId, scope, row: { fence } });
    const alongside = move.alongside?.(fence);
    transition.audit.push(
      auditEntry({
        at: now,
        tenant,
        scope,
        kind: 'cutover',
        outcome: 'granted',
        reason: cutoverId,
        holder: move.holder,
        policyVersion: move.policyVersion,
        currentFence: fence,
        leaseExpiresAt: move.holder === null ? null : move.leaseExpiresAt,
        ...tokenField(caller),
      }),
    );
    if (alongside !== undefined) {
      transition.expect.push(...alongside.expect);
      transition.put.push(...alongside.put);
      transition.audit.push(...alongside.audit);
    }
  }
  transition.put.push(...steps);
  return transition;
}
