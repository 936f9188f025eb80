/**
 * Authority transitions planned over a snapshot: the decision comes from lease-rules.ts, the rows
 * and audit entries from here, so `fence + 1`, the grant's audit entry and the refusal's audit
 * entry each exist once.
 */
import type {
  AcquireRequest,
  AuditKind,
  AuditRecordChange,
  CancelIntentsRequest,
  CancelIntentsResult,
  DeleteScopeResult,
  Grant,
  LeaseJobEvents,
  ReleaseRequest,
  ReleaseResult,
  RenewRequest,
  TakeoverRequest,
} from '../../types.js';
import { auditEntry, type NewAuditEntry } from '../audit-entry.js';
import { cancelIntentsPage, type CancelPageBounds } from '../cancel-intents-page.js';
import { cancelPageIntents } from './plan-cancel-page.js';
import type { FencegateError } from '../../errors.js';
import { boundToken, tokenField, type Caller } from '../grant-token.js';
import {
  checkActive,
  decideAcquire,
  decideHolding,
  decideRelease,
  decideRenew,
  decideTakeover,
  nextFence,
  type GrantState,
} from '../lease-rules.js';
import { leaseJobEvents, type LeaseGeneration } from '../lease-job-events.js';
import { refusalError } from '../refusal-messages.js';
import { planJobEvents } from './plan-jobs.js';
import { acquirePolicy, takeoverLeavesRollout } from './plan-rollout-moves.js';
import {
  refused,
  type Put,
  type Ref,
  type ScopeRow,
  type Snapshot,
  type Transition,
} from './transition.js';

export function scopeRef(scope: string): Ref {
  return { type: 'scope', scope };
}

export function refusal<A>(
  snapshot: Snapshot,
  kind: AuditKind,
  scope: string,
  row: ScopeRow | null,
  error: FencegateError,
  caller: Caller | undefined,
  fields: Partial<NewAuditEntry> = {},
): Transition<A> {
  return refused(
    [scopeRef(scope)],
    [
      auditEntry({
        at: snapshot.now,
        tenant: snapshot.tenant,
        scope,
        kind,
        outcome: 'rejected',
        reason: error.code,
        currentFence: row?.fence ?? null,
        ...tokenField(caller),
        ...fields,
      }),
    ],
    error,
  );
}

/**
 * The scope row of a grant that issues a new fence, bound to the caller's worker token
 * (grant-token.ts), and the record of whom it went to.
 */
function grantPuts(
  snapshot: Snapshot,
  scope: string,
  grant: GrantState,
  caller: Caller | undefined,
): Put[] {
  const row = { ...grant, grantTokenId: boundToken(caller), status: 'active' as const };
  return [
    { type: 'scope', scope, row: { ...row, updatedAt: snapshot.now } },
    fenceGrantPut(scope, grant.fence, grant.holder),
  ];
}

export function fenceGrantPut(scope: string, fence: number, holder: string): Put {
  return { type: 'fenceGrant', scope, fence, row: { holder } };
}

function grantAudit(
  snapshot: Snapshot,
  kind: AuditKind,
  scope: string,
  grant: GrantState,
  moved: boolean,
  caller: Caller | undefined,
  reason: string | null = null,
): NewAuditEntry {
  return auditEntry({
    at: snapshot.now,
    tenant: snapshot.tenant,
    scope,
    kind,
    outcome: moved ? 'granted' : 'ok',
    reason,
    holder: grant.holder,
    policyVersion: grant.policyVersion,
    currentFence: grant.fence,
    leaseExpiresAt: grant.leaseExpiresAt,
    ...tokenField(caller),
  });
}

/** The transition with the lease operation's job events (lease-job-events.ts) recorded in it. */
function withJobEvents<A>(
  snapshot: Snapshot,
  transition: Transition<A>,
  job: LeaseJobEvents | undefined,
  generation: LeaseGeneration,
): Transition<A> {
  const events = leaseJobEvents(job, generation);
  if (events.length === 0) return transition;
  const ledger = planJobEvents(snapshot, events);
  return {
    ...transition,
    expect: [...transition.expect, ...ledger.expect],
    put: [...transition.put, ...ledger.put],
  };
}

export function planAcquire(
  snapshot: Snapshot,
  request: AcquireRequest,
  caller?: Caller,
): Transition<Grant> {
  const row = snapshot.get({ type: 'scope', scope: request.scope });
  const policy = acquirePolicy(snapshot, request, row);
  const decision =
    policy.mismatch === null
      ? decideAcquire(
          request.scope,
          row,
          { ...request, policyVersion: policy.policyVersion },
          snapshot.now,
          caller,
        )
      : ({ ok: false, error: refusalError(policy.mismatch) } as const);
  if (!decision.ok) {
    const refused = refusal<Grant>(
      snapshot,
      'acquire',
      request.scope,
      row,
      decision.error,
      caller,
      { holder: request.holder },
    );
    return { ...refused, expect: [...refused.expect, ...policy.expect] };
  }
  const { reacquired, ...grant } = decision.value;
  return withJobEvents(
    snapshot,
    {
      expect: [scopeRef(request.scope), ...policy.expect],
      put: reacquired
        ? []
        : [...grantPuts(snapshot, request.scope, grant, caller), ...policy.puts(grant.fence)],
      audit: [grantAudit(snapshot, 'acquire', request.scope, grant, !reacquired, caller)],
      answer: { ok: true, value: { scope: request.scope, ...grant, reacquired } },
    },
    request.job,
    { scope: request.scope, fence: grant.fence, policyVersion: grant.policyVersion },
  );
}

export function planRenew(
  snapshot: Snapshot,
  request: RenewRequest,
  caller?: Caller,
): Transition<Grant> {
  const row = snapshot.get({ type: 'scope', scope: request.scope });
  const decision = decideRenew(request.scope, row, request, snapshot.now, caller);
  if (!decision.ok || row === null) {
    const error = decision.ok ? null : decision.error;
    return refusal(snapshot, 'renew', request.scope, row, error as FencegateError, caller, {
      holder: request.holder,
      fence: request.fence,
    });
  }
  const grant = decision.value;
  return {
    expect: [scopeRef(request.scope)],
    put: [
      {
        type: 'scope',
        scope: request.scope,
        row: { ...row, leaseExpiresAt: grant.leaseExpiresAt, updatedAt: snapshot.now },
      },
    ],
    audit: [
      auditEntry({
        at: snapshot.now,
        tenant: snapshot.tenant,
        scope: request.scope,
        kind: 'renew',
        outcome: 'ok',
        holder: grant.holder,
        policyVersion: grant.policyVersion,
        fence: request.fence,
        currentFence: grant.fence,
        leaseExpiresAt: grant.leaseExpiresAt,
        ...tokenField(caller),
      }),
    ],
    answer: { ok: true, value: { scope: request.scope, ...grant, reacquired: false } },
  };
}

export function planRelease(
  snapshot: Snapshot,
  request: ReleaseRequest,
  caller?: Caller,
): Transition<ReleaseResult> {
  const row = snapshot.get({ type: 'scope', scope: request.scope });
  const decision = decideRelease(request.scope, row, request, caller);
  if (!decision.ok || row === null) {
    const error = decision.ok ? null : decision.error;
    return refusal(snapshot, 'release', request.scope, row, error as FencegateError, caller, {
      holder: request.holder,
      fence: request.fence,
    });
  }
  const { alreadyReleased } = decision.value;
  return withRelease(
    snapshot,
    {
      expect: [scopeRef(request.scope)],
      put: [],
      audit: [],
      answer: { ok: true, value: { released: true, alreadyReleased } },
    },
    row,
    request,
    caller,
  );
}

/**
 * Adds a release of the lease at `request.fence` to a transition that holds the scope: the lease
 * ends (the fence stays), the release's audit entry, and the job's events. A release on its own
 * and a commit with `release: true` both end the lease through here.
 */
export function withRelease<A>(
  snapshot: Snapshot,
  transition: Transition<A>,
  row: ScopeRow,
  request: { scope: string; fence: number; job?: LeaseJobEvents | undefined },
  caller: Caller | undefined,
): Transition<A> {
  const alreadyReleased = row.holder === null;
  return withJobEvents(
    snapshot,
    {
      ...transition,
      put: alreadyReleased
        ? transition.put
        : [
            ...transition.put,
            {
              type: 'scope',
              scope: request.scope,
              row: { ...row, holder: null, leaseExpiresAt: null, updatedAt: snapshot.now },
            },
          ],
      audit: [
        ...transition.audit,
        auditEntry({
          at: snapshot.now,
          tenant: snapshot.tenant,
          scope: request.scope,
          kind: 'release',
          outcome: 'ok',
          reason: alreadyReleased ? 'already_released' : null,
          fence: request.fence,
          currentFence: request.fence,
          ...tokenField(caller),
        }),
      ],
    },
    request.job,
    { scope: request.scope, fence: request.fence, policyVersion: row.policyVersion },
  );
}

export function planTakeover(
  snapshot: Snapshot,
  scope: string,
  request: TakeoverRequest,
  caller?: Caller,
): Transition<Grant> {
  const row = snapshot.get({ type: 'scope', scope });
  const decision = decideTakeover(scope, row, request, snapshot.now, caller);
  if (!decision.ok) {
    return refusal(snapshot, 'takeover', scope, row, decision.error, caller, {
      holder: request.holder,
    });
  }
  const grant = decision.value;
  const leaves = takeoverLeavesRollout(snapshot, scope, row);
  return {
    expect: [scopeRef(scope), ...leaves.expect],
    put: [...grantPuts(snapshot, scope, grant, caller), ...leaves.put],
    audit: [grantAudit(snapshot, 'takeover', scope, grant, true, caller, request.reason ?? null)],
    answer: { ok: true, value: { scope, ...grant, reacquired: false } },
  };
}

/**
 * The holder cancels the pending intents of the runs it superseded: those committed under a fence
 * from `committedFrom` up to, not including, its own, one page of them (cancel-intents-page.ts) a
 * call. Its fence stays; the intents its own commits made, and the older runs' ones, are
 * untouched. Claimed intents are being delivered and stay as they are. Answers every intent of the
 * page now cancelled, so a resend of the page answers the same.
 */
export function planCancelIntents(
  snapshot: Snapshot,
  request: CancelIntentsRequest,
  caller?: Caller,
  bounds: CancelPageBounds = {},
): Transition<CancelIntentsResult> {
  const { scope } = request;
  const row = snapshot.get({ type: 'scope', scope });
  const decision = decideHolding(scope, row, request, caller);
  if (!decision.ok || row === null) {
    const error = decision.ok ? null : decision.error;
    return refusal(snapshot, 'intent', scope, row, error as FencegateError, caller, {
      holder: request.holder,
      fence: request.fence,
    });
  }
  const fences = { from: request.committedFrom, before: row.fence };
  const page = cancelIntentsPage(snapshot, scope, fences, request.cursor, bounds);
  const cancels = cancelPageIntents(snapshot, page.intents, row.fence, request.reason ?? null);
  // Cancelled by this page or before it, in key order: the same page resent after a lost reply
  // answers what the first one did.
  const cancelled = page.intents
    .filter((intent) => intent.status === 'pending' || intent.status === 'cancelled')
    .map((intent) => intent.effectKey);
  return {
    // Not the scope's range: with the holder's fence unchanged (the scope's row), an intent that
    // joined the scope since is under that fence, outside the range, and the page passes it over.
    expect: [scopeRef(scope), ...cancels.expect],
    put: cancels.put,
    audit: cancels.audit,
    answer: { ok: true, value: { cancelled, nextCursor: page.nextCursor } },
  };
}

/** Delete: fence+1, status deleted, every live record tombstoned at revision+1. */
export function planDeleteScope(
  snapshot: Snapshot,
  scope: string,
  reason: string | undefined,
  caller?: Caller,
): Transition<DeleteScopeResult> {
  const row = snapshot.get({ type: 'scope', scope });
  const error = checkActive(scope, row);
  if (error !== null || row === null) {
    return refusal(snapshot, 'delete', scope, row, error as FencegateError, caller);
  }
  const fence = nextFence(row);
  const range = { type: 'scopeRecords' as const, scope };
  const transition: Transition<DeleteScopeResult> = {
    expect: [scopeRef(scope), range],
    put: [
      {
        type: 'scope',
        scope,
        row: {
          ...row,
          fence,
          status: 'deleted',
          holder: null,
          leaseExpiresAt: null,
          updatedAt: snapshot.now,
        },
      },
    ],
    audit: [],
    answer: { ok: true, value: { fence } },
  };
  const records: AuditRecordChange[] = [];
  for (const name of snapshot.list(range)) {
    const record = snapshot.get({ type: 'record', scope, name });
    transition.expect.push({ type: 'record', scope, name });
    if (record === null || !record.exists) continue;
    const revision = record.revision + 1;
    transition.put.push(...tombstone(snapshot, scope, name, record, revision));
    records.push({
      name,
      expected: record.revision,
      actual: record.revision,
      resulting: revision,
      fingerprint: null,
      deleted: true,
    });
  }
  transition.audit.push(
    auditEntry({
      at: snapshot.now,
      tenant: snapshot.tenant,
      scope,
      kind: 'delete',
      outcome: 'ok',
      reason: reason ?? null,
      policyVersion: row.policyVersion,
      currentFence: fence,
      records,
      ...tokenField(caller),
    }),
  );
  return transition;
}

/**
 * A deletion: the record stays as a tombstone carrying the deletion's revision, and the deletion is
 * remembered so a later stale write can tell a read of absence from a lifetime that has ended.
 */
export function tombstone(
  snapshot: Snapshot,
  scope: string,
  name: string,
  record: { incarnation: number },
  revision: number,
): Transition<unknown>['put'] {
  return [
    {
      type: 'record',
      scope,
      name,
      row: {
        exists: false,
        valueJson: null,
        revision,
        incarnation: record.incarnation,
        fingerprint: null,
        updatedAt: snapshot.now,
      },
    },
    { type: 'deletion', scope, name, revision, row: { at: snapshot.now } },
  ];
}
