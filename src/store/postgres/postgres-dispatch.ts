/**
 * Intent claims and completions on PostgreSQL: one call of `<schema>.claim_intents` or
 * `<schema>.complete_intent` each (postgres-sql-dispatch.ts), decided inside the database.
 */
import type {
  ClaimIntentsRequest,
  CompleteIntentRequest,
  Intent,
  IntentCompletion,
  IntentCompletionResult,
  IntentStatus,
} from '../../types.js';
import { completionAuditReason } from '../../core/intent-rules.js';
import { completionResult } from '../../core/plan/plan-intents.js';
import { completionRefusal, throwIfRefused, type Refusal } from './postgres-answers.js';
import { MUTATION, type PostgresCalls } from './postgres-calls.js';
import { toIntent, type IntentRow } from './postgres-rows.js';

export async function claimIntents(
  db: PostgresCalls,
  tenant: string,
  request: ClaimIntentsRequest,
): Promise<Intent[]> {
  const rows = await db.call<IntentRow[]>(
    MUTATION,
    'claim_intents',
    `SELECT ${db.schema}.claim_intents($1, $2, $3, $4, $5, $6) AS answer`,
    [tenant, request.dispatcher, request.ttlMs, request.limit, request.targets ?? null, db.now()],
  );
  return rows.map(toIntent);
}

export async function completeIntent(
  db: PostgresCalls,
  tenant: string,
  effectKey: string,
  request: CompleteIntentRequest,
): Promise<Intent> {
  const answer = throwIfRefused(
    await db.call<{ intent: IntentRow } | Refusal>(
      MUTATION,
      'complete_intent',
      `SELECT ${db.schema}.complete_intent($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) AS answer`,
      [
        tenant,
        effectKey,
        request.claimFence,
        request.outcome,
        request.retryable ?? null,
        request.retryAfterMs ?? null,
        request.providerRef ?? null,
        request.error ?? null,
        completionAuditReason(request),
        db.now(),
      ],
    ),
    completionRefusal(effectKey, request.claimFence),
  );
  return toIntent(answer.intent);
}

/**
 * One call of `complete_intents` for the batch, in the caller's order (a deadlock with another
 * batch is retried like any other).
 */
export async function completeIntents(
  db: PostgresCalls,
  tenant: string,
  completions: readonly IntentCompletion[],
): Promise<IntentCompletionResult[]> {
  const column = <T>(pick: (c: IntentCompletion) => T): T[] => completions.map(pick);
  const answers = await db.call<({ intent: IntentRow } | Refusal)[]>(
    MUTATION,
    'complete_intents',
    `SELECT ${db.schema}.complete_intents($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) AS answer`,
    [
      tenant,
      column((c) => c.effectKey),
      column((c) => c.claimFence),
      column((c) => c.outcome),
      column((c) => c.retryable ?? null),
      column((c) => c.retryAfterMs ?? null),
      column((c) => c.providerRef ?? null),
      column((c) => c.error ?? null),
      column(completionAuditReason),
      db.now(),
    ],
  );
  return answers.map((answer, i) => {
    const { effectKey, claimFence } = completions[i] as IntentCompletion;
    try {
      const refusalOf = completionRefusal(effectKey, claimFence);
      return { ok: true, intent: toIntent(throwIfRefused(answer, refusalOf).intent) };
    } catch (error) {
      return completionResult({ ok: false, error });
    }
  });
}

export async function countIntents(
  db: PostgresCalls,
  tenant: string | undefined,
): Promise<Partial<Record<IntentStatus, number>>> {
  const rows =
    tenant === undefined
      ? await db.rows<{ status: IntentStatus; n: number }>(
          `SELECT status, count(*)::integer AS n FROM ${db.schema}.intents GROUP BY status`,
          [],
          'count_intents_all',
        )
      : await db.rows<{ status: IntentStatus; n: number }>(
          `SELECT status, count(*)::integer AS n FROM ${db.schema}.intents WHERE tenant = $1
           GROUP BY status`,
          [tenant],
          'count_intents',
        );
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

/**
 * Tenants with open intents, by a loose index scan: one index probe per tenant (the next tenant
 * name, then whether it has an open intent), not a scan of every intent ever delivered.
 */
export async function listTenantsWithOpenIntents(db: PostgresCalls): Promise<string[]> {
  const rows = await db.rows<{ tenant: string }>(
    `WITH RECURSIVE tenants(tenant) AS (
       SELECT min(tenant) FROM ${db.schema}.intents
       UNION ALL
       SELECT (SELECT min(i.tenant) FROM ${db.schema}.intents i WHERE i.tenant > t.tenant)
       FROM tenants t WHERE t.tenant IS NOT NULL)
     SELECT tenant FROM tenants WHERE tenant IS NOT NULL AND EXISTS (
       SELECT 1 FROM ${db.schema}.intents i WHERE i.tenant = tenants.tenant
         AND i.status IN ('pending', 'claimed', 'unknown'))`,
    [],
    'open_intent_tenants',
  );
  return rows.map((row) => row.tenant);
}
