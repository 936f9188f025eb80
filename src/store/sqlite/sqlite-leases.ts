/**
 * Authority transitions on SQLite. Each function runs inside the caller's write transaction: it
 * reads the scope row, asks core/lease-rules for the decision, then applies it and appends the
 * audit entry. A refusal is audited too, then thrown.
 */
import { auditEntry } from '../../core/audit-entry.js';
import {
  checkActive,
  decideAcquire,
  decideRelease,
  decideRenew,
  decideTakeover,
  type GrantState,
} from '../../core/lease-rules.js';
import type { FencegateError } from '../../errors.js';
import type {
  AcquireRequest,
  AuditKind,
  AuditRecordChange,
  CancelResult,
  DeleteScopeResult,
  Grant,
  ReleaseRequest,
  ReleaseResult,
  RenewRequest,
  TakeoverRequest,
} from '../../types.js';
import { leaseJobEvents } from '../../core/lease-job-events.js';
import { appendAudit } from './sqlite-audit.js';
import { recordJobEvents } from './sqlite-cutover.js';
import { tombstoneRecord } from './sqlite-records.js';
import { scopeSnapshot, type ScopeRow } from './sqlite-rows.js';
import type { SqliteStatements } from './sqlite-statements.js';

export interface LeaseContext {
  statements: SqliteStatements;
  tenant: string;
  now: number;
}

function loadScope(ctx: LeaseContext, scope: string): ScopeRow | undefined {
  return ctx.statements.getScope.get(ctx.tenant, scope) as ScopeRow | undefined;
}

function refuse(
  ctx: LeaseContext,
  kind: AuditKind,
  scope: string,
  error: FencegateError,
  fields: { holder?: string | null; fence?: number | null; currentFence?: number | null },
): never {
  appendAudit(
    ctx.statements,
    auditEntry({
      at: ctx.now,
      tenant: ctx.tenant,
      scope,
      kind,
      outcome: 'rejected',
      reason: error.code,
      ...fields,
    }),
  );
  throw error;
}

function writeGrant(ctx: LeaseContext, scope: string, existed: boolean, grant: GrantState): void {
  const params = { tenant: ctx.tenant, scope, now: ctx.now, ...grant };
  if (existed) ctx.statements.updateAuthority.run(params);
  else ctx.statements.insertScope.run(params);
}

function grantAudit(
  ctx: LeaseContext,
  kind: AuditKind,
  scope: string,
  grant: GrantState,
  moved: boolean,
  reason: string | null = null,
): void {
  appendAudit(
    ctx.statements,
    auditEntry({
      at: ctx.now,
      tenant: ctx.tenant,
      scope,
      kind,
      outcome: moved ? 'granted' : 'ok',
      reason,
      holder: grant.holder,
      policyVersion: grant.policyVersion,
      currentFence: grant.fence,
      leaseExpiresAt: grant.leaseExpiresAt,
    }),
  );
}

export function acquireScope(ctx: LeaseContext, request: AcquireRequest): Grant {
  const row = loadScope(ctx, request.scope);
  const decision = decideAcquire(request.scope, scopeSnapshot(row), request, ctx.now);
  if (!decision.ok) {
    refuse(ctx, 'acquire', request.scope, decision.error, {
      holder: request.holder,
      currentFence: row?.fence ?? null,
    });
  }
  const { reacquired, ...grant } = decision.value;
  if (!reacquired) writeGrant(ctx, request.scope, row !== undefined, grant);
  grantAudit(ctx, 'acquire', request.scope, grant, !reacquired);
  recordJobEvents(
    ctx,
    leaseJobEvents(request.job, {
      scope: request.scope,
      fence: grant.fence,
      policyVersion: grant.policyVersion,
    }),
  );
  return { scope: request.scope, ...grant, reacquired };
}

export function renewScope(ctx: LeaseContext, request: RenewRequest): Grant {
  const row = loadScope(ctx, request.scope);
  const decision = decideRenew(request.scope, scopeSnapshot(row), request, ctx.now);
  if (!decision.ok) {
    refuse(ctx, 'renew', request.scope, decision.error, {
      holder: request.holder,
      fence: request.fence,
      currentFence: row?.fence ?? null,
    });
  }
  const grant = decision.value;
  ctx.statements.updateLease.run({
    tenant: ctx.tenant,
    scope: request.scope,
    now: ctx.now,
    leaseExpiresAt: grant.leaseExpiresAt,
  });
  appendAudit(
    ctx.statements,
    auditEntry({
      at: ctx.now,
      tenant: ctx.tenant,
      scope: request.scope,
      kind: 'renew',
      outcome: 'ok',
      holder: grant.holder,
      policyVersion: grant.policyVersion,
      fence: request.fence,
      currentFence: grant.fence,
      leaseExpiresAt: grant.leaseExpiresAt,
    }),
  );
  return { scope: request.scope, ...grant, reacquired: false };
}

export function releaseScope(ctx: LeaseContext, request: ReleaseRequest): ReleaseResult {
  const row = loadScope(ctx, request.scope);
  const decision = decideRelease(request.scope, scopeSnapshot(row), request);
  if (!decision.ok) {
    refuse(ctx, 'release', request.scope, decision.error, {
      holder: request.holder,
      fence: request.fence,
      currentFence: row?.fence ?? null,
    });
  }
  const { alreadyReleased } = decision.value;
  if (!alreadyReleased) {
    ctx.statements.releaseHolder.run({ tenant: ctx.tenant, scope: request.scope, now: ctx.now });
  }
  appendAudit(
    ctx.statements,
    auditEntry({
      at: ctx.now,
      tenant: ctx.tenant,
      scope: request.scope,
      kind: 'release',
      outcome: 'ok',
      reason: alreadyReleased ? 'already_released' : null,
      fence: request.fence,
      currentFence: request.fence,
    }),
  );
  recordJobEvents(
    ctx,
    leaseJobEvents(request.job, {
      scope: request.scope,
      fence: request.fence,
      policyVersion: row?.policy_version ?? null,
    }),
  );
  return { released: true, alreadyReleased };
}

export function takeoverScope(ctx: LeaseContext, scope: string, request: TakeoverRequest): Grant {
  const row = loadScope(ctx, scope);
  const decision = decideTakeover(scope, scopeSnapshot(row), request, ctx.now);
  if (!decision.ok) {
    refuse(ctx, 'takeover', scope, decision.error, {
      holder: request.holder,
      currentFence: row?.fence ?? null,
    });
  }
  writeGrant(ctx, scope, row !== undefined, decision.value);
  grantAudit(ctx, 'takeover', scope, decision.value, true, request.reason ?? null);
  return { scope, ...decision.value, reacquired: false };
}

/** Cancel and delete act on an existing, active scope; anything else is refused and audited. */
function loadActiveScope(ctx: LeaseContext, kind: 'cancel' | 'delete', scope: string): ScopeRow {
  const row = loadScope(ctx, scope);
  const error = checkActive(scope, scopeSnapshot(row));
  if (error !== null) refuse(ctx, kind, scope, error, { currentFence: row?.fence ?? null });
  return row as ScopeRow;
}

export function cancelScope(
  ctx: LeaseContext,
  scope: string,
  reason: string | undefined,
): CancelResult {
  const row = loadActiveScope(ctx, 'cancel', scope);
  const fence = row.fence + 1;
  ctx.statements.updateAuthority.run({
    tenant: ctx.tenant,
    scope,
    now: ctx.now,
    fence,
    holder: null,
    leaseExpiresAt: null,
    policyVersion: row.policy_version,
  });
  appendAudit(
    ctx.statements,
    auditEntry({
      at: ctx.now,
      tenant: ctx.tenant,
      scope,
      kind: 'cancel',
      outcome: 'ok',
      reason: reason ?? null,
      policyVersion: row.policy_version,
      currentFence: fence,
    }),
  );
  const keys = ctx.statements.pendingIntentKeys.all(ctx.tenant, scope) as { effect_key: string }[];
  for (const { effect_key: effectKey } of keys) {
    ctx.statements.cancelIntent.run(ctx.now, ctx.tenant, effectKey);
    appendAudit(
      ctx.statements,
      auditEntry({
        at: ctx.now,
        tenant: ctx.tenant,
        scope,
        kind: 'intent',
        outcome: 'cancelled',
        currentFence: fence,
        effectKey,
      }),
    );
  }
  return { fence, cancelledIntents: keys.length };
}

export function deleteScope(
  ctx: LeaseContext,
  scope: string,
  reason: string | undefined,
): DeleteScopeResult {
  const row = loadActiveScope(ctx, 'delete', scope);
  const fence = row.fence + 1;
  ctx.statements.markDeleted.run({ tenant: ctx.tenant, scope, fence, now: ctx.now });
  const live = ctx.statements.listLiveRecordNames.all(ctx.tenant, scope) as {
    name: string;
    revision: number;
  }[];
  const records: AuditRecordChange[] = live.map(({ name, revision }) => {
    tombstoneRecord(ctx.statements, {
      tenant: ctx.tenant,
      scope,
      name,
      revision: revision + 1,
      now: ctx.now,
    });
    return {
      name,
      expected: revision,
      actual: revision,
      resulting: revision + 1,
      fingerprint: null,
      deleted: true,
    };
  });
  appendAudit(
    ctx.statements,
    auditEntry({
      at: ctx.now,
      tenant: ctx.tenant,
      scope,
      kind: 'delete',
      outcome: 'ok',
      reason: reason ?? null,
      policyVersion: row.policy_version,
      currentFence: fence,
      records,
    }),
  );
  return { fence };
}
