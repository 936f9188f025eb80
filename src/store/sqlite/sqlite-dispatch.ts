/** Intent claims and completions on SQLite, inside the caller's write transaction. */
import { auditEntry } from '../../core/audit-entry.js';
import { completionAuditReason, decideCompletion, isClaimable } from '../../core/intent-rules.js';
import { FencegateError } from '../../errors.js';
import type {
  ClaimIntentsRequest,
  CompleteIntentRequest,
  Intent,
  IntentStatus,
} from '../../types.js';
import { appendAudit } from './sqlite-audit.js';
import type { SqliteDatabase } from './sqlite-database.js';
import type { LeaseContext } from './sqlite-leases.js';
import { INTENT_COLUMNS, toIntent, type IntentRow } from './sqlite-rows.js';

export function claimIntents(
  db: SqliteDatabase,
  ctx: LeaseContext,
  request: ClaimIntentsRequest,
): Intent[] {
  // One indexed branch per claimable state, so the cost of a claim does not grow with the number
  // of delivered intents the tenant has accumulated.
  const targetFilter =
    request.targets === undefined ? '' : 'WHERE target IN (SELECT value FROM json_each(@targets))';
  const candidates = db
    .prepare(
      `SELECT * FROM (
         SELECT ${INTENT_COLUMNS} FROM intents INDEXED BY intents_due
         WHERE tenant = @tenant AND status = 'pending' AND (next_attempt_at IS NULL OR next_attempt_at <= @now)
         UNION ALL
         SELECT ${INTENT_COLUMNS} FROM intents INDEXED BY intents_due
         WHERE tenant = @tenant AND status = 'unknown' AND (next_attempt_at IS NULL OR next_attempt_at <= @now)
         UNION ALL
         SELECT ${INTENT_COLUMNS} FROM intents INDEXED BY intents_by_status
         WHERE tenant = @tenant AND status = 'claimed' AND claim_expires_at <= @now
       ) ${targetFilter}
       ORDER BY COALESCE(next_attempt_at, created_at), effect_key LIMIT @limit`,
    )
    .all({
      tenant: ctx.tenant,
      now: ctx.now,
      limit: request.limit,
      targets: JSON.stringify(request.targets ?? []),
    }) as IntentRow[];
  const claim = db.prepare(
    `UPDATE intents SET status = 'claimed', claim_fence = claim_fence + 1, claimed_by = @dispatcher,
       claim_expires_at = @expiresAt, attempts = attempts + 1, updated_at = @now
     WHERE tenant = @tenant AND effect_key = @effectKey`,
  );
  const expiresAt = ctx.now + request.ttlMs;
  const claimed: Intent[] = [];
  for (const row of candidates) {
    const intent = toIntent(row);
    if (!isClaimable(intent, ctx.now)) continue;
    claim.run({
      tenant: ctx.tenant,
      effectKey: intent.effectKey,
      dispatcher: request.dispatcher,
      expiresAt,
      now: ctx.now,
    });
    const next: Intent = {
      ...intent,
      status: 'claimed',
      claimFence: intent.claimFence + 1,
      claimedBy: request.dispatcher,
      claimExpiresAt: expiresAt,
      attempts: intent.attempts + 1,
      updatedAt: ctx.now,
    };
    appendAudit(
      ctx.statements,
      auditEntry({
        at: ctx.now,
        tenant: ctx.tenant,
        scope: intent.scope,
        kind: 'intent',
        outcome: 'claimed',
        reason: intent.status === 'pending' ? null : `from_${intent.status}`,
        holder: request.dispatcher,
        fence: next.claimFence,
        operationId: intent.operationId,
        effectKey: intent.effectKey,
      }),
    );
    claimed.push(next);
  }
  return claimed;
}

/** Returns the completed intent, or the error to throw once the audit entry is committed. */
export function completeIntent(
  db: SqliteDatabase,
  ctx: LeaseContext,
  effectKey: string,
  request: CompleteIntentRequest,
): Intent | FencegateError {
  const row = ctx.statements.getIntent.get(ctx.tenant, effectKey) as IntentRow | undefined;
  if (row === undefined) {
    return new FencegateError('not_found', `intent ${effectKey} does not exist`, { effectKey });
  }
  const intent = toIntent(row);
  const decision = decideCompletion(effectKey, intent, request, ctx.now);
  if (!decision.ok) {
    appendAudit(
      ctx.statements,
      auditEntry({
        at: ctx.now,
        tenant: ctx.tenant,
        scope: intent.scope,
        kind: 'intent',
        outcome: 'rejected',
        reason: decision.error.code,
        fence: request.claimFence,
        operationId: intent.operationId,
        effectKey,
      }),
    );
    return decision.error;
  }
  const effect = decision.value;
  const providerRef = request.providerRef ?? intent.providerRef;
  const lastError = effect.status === 'delivered' ? null : (request.error ?? intent.lastError);
  db.prepare(
    `UPDATE intents SET status = @status, next_attempt_at = @nextAttemptAt, claimed_by = NULL,
       claim_expires_at = NULL, unknown_outcomes = unknown_outcomes + @unknownIncrement,
       provider_ref = @providerRef, last_error = @lastError, updated_at = @now
     WHERE tenant = @tenant AND effect_key = @effectKey`,
  ).run({ ...effect, providerRef, lastError, now: ctx.now, tenant: ctx.tenant, effectKey });
  appendAudit(
    ctx.statements,
    auditEntry({
      at: ctx.now,
      tenant: ctx.tenant,
      scope: intent.scope,
      kind: 'intent',
      outcome: effect.status,
      reason: completionAuditReason(request),
      holder: intent.claimedBy,
      fence: request.claimFence,
      operationId: intent.operationId,
      effectKey,
    }),
  );
  return {
    ...intent,
    status: effect.status,
    nextAttemptAt: effect.nextAttemptAt,
    claimedBy: null,
    claimExpiresAt: null,
    unknownOutcomes: intent.unknownOutcomes + effect.unknownIncrement,
    providerRef,
    lastError,
    updatedAt: ctx.now,
  };
}

export function countIntents(
  db: SqliteDatabase,
  tenant: string | undefined,
): Partial<Record<IntentStatus, number>> {
  const rows = db
    .prepare(
      `SELECT status, COUNT(*) AS n FROM intents ${tenant === undefined ? '' : 'WHERE tenant = ?'} GROUP BY status`,
    )
    .all(...(tenant === undefined ? [] : [tenant])) as { status: IntentStatus; n: number }[];
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

/**
 * Tenants with open intents, by a loose index scan: one index probe per tenant (the next tenant
 * name, then whether it has an open intent), not a scan of every intent ever delivered.
 */
export function listTenantsWithOpenIntents(db: SqliteDatabase): string[] {
  const rows = db
    .prepare(
      `WITH RECURSIVE tenants(tenant) AS (
         SELECT min(tenant) FROM intents
         UNION ALL
         SELECT (SELECT min(tenant) FROM intents WHERE tenant > tenants.tenant) FROM tenants
         WHERE tenants.tenant IS NOT NULL)
       SELECT tenant FROM tenants WHERE tenant IS NOT NULL AND EXISTS (
         SELECT 1 FROM intents i WHERE i.tenant = tenants.tenant
           AND i.status IN ('pending', 'claimed', 'unknown'))`,
    )
    .all() as { tenant: string }[];
  return rows.map((row) => row.tenant);
}
