/**
 * Reads of policies, cutovers and the jobs ledger on SQLite; their writes are the plans of
 * core/plan/plan-cutover.ts, applied by sqlite-apply.ts.
 */
import { decodeCutoverCursor } from '../../core/cutover-cursor.js';
import { DEFAULT_LIST_LIMIT } from '../../core/limits.js';
import type * as T from '../../types.js';
import { cutoverPage, cutoverSummaryColumns, type CutoverSummaryRow } from '../cutover-list.js';
import { toPolicy, type PolicyRow } from '../rows.js';
import type { SqliteDatabase } from './sqlite-database.js';

export function listPolicies(db: SqliteDatabase, tenant: string): T.Policy[] {
  return (
    db
      .prepare('SELECT * FROM policies WHERE tenant = ? ORDER BY registered_at, version')
      .all(tenant) as PolicyRow[]
  ).map(toPolicy);
}

export function readCutover(
  db: SqliteDatabase,
  tenant: string,
  cutoverId: string,
): T.CutoverRecord | null {
  const row = db
    .prepare(
      `SELECT cutover_id, to_policy, holder, status, started_at, completed_at, start_seq
       FROM cutovers WHERE tenant = ? AND cutover_id = ?`,
    )
    .get(tenant, cutoverId) as
    | {
        cutover_id: string;
        to_policy: string;
        holder: string;
        status: 'running' | 'completed';
        started_at: number;
        completed_at: number | null;
        start_seq: number;
      }
    | undefined;
  if (row === undefined) return null;
  const scopes = db
    .prepare(
      `SELECT scope, fence, skipped FROM cutover_scopes WHERE tenant = ? AND cutover_id = ?
       ORDER BY scope`,
    )
    .all(tenant, cutoverId) as { scope: string; fence: number | null; skipped: 0 | 1 }[];
  return {
    cutoverId: row.cutover_id,
    toPolicy: row.to_policy,
    holder: row.holder,
    status: row.status,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    startSeq: row.start_seq,
    fences: scopes.flatMap((s) =>
      s.fence === null || s.skipped === 1 ? [] : [{ scope: s.scope, fence: s.fence }],
    ),
    planned: scopes.length,
    skipped: scopes.flatMap((s) => (s.skipped === 1 ? [s.scope] : [])),
  };
}

export function listCutovers(
  db: SqliteDatabase,
  tenant: string,
  query: T.ListCutoversQuery,
): T.Page<T.CutoverSummary> {
  const limit = query.limit ?? DEFAULT_LIST_LIMIT;
  const after = decodeCutoverCursor(query.cursor);
  const rows = db
    .prepare(
      `SELECT ${cutoverSummaryColumns('cutover_scopes')} FROM cutovers c
       WHERE c.tenant = @tenant AND (@startedAt IS NULL OR c.started_at < @startedAt
         OR (c.started_at = @startedAt AND c.cutover_id < @cutoverId))
       ORDER BY c.started_at DESC, c.cutover_id DESC LIMIT @limit`,
    )
    .all({
      tenant,
      startedAt: after?.startedAt ?? null,
      cutoverId: after?.cutoverId ?? null,
      limit: limit + 1,
    }) as CutoverSummaryRow[];
  return cutoverPage(rows, limit);
}

interface JobRow {
  job_id: string;
  scope: string;
  policy_version: string;
  fence: number;
  state: T.JobState;
  attempt: number;
  at: number;
}

export function listJobs(
  db: SqliteDatabase,
  tenant: string,
  scopes?: readonly string[],
): T.JobRecord[] {
  const rows = (
    scopes === undefined
      ? db.prepare('SELECT * FROM jobs WHERE tenant = ? ORDER BY job_id').all(tenant)
      : db
          .prepare(
            'SELECT * FROM jobs WHERE tenant = ? AND scope IN (SELECT value FROM json_each(?)) ORDER BY job_id',
          )
          .all(tenant, JSON.stringify(scopes))
  ) as JobRow[];
  return rows.map((row) => ({
    jobId: row.job_id,
    scope: row.scope,
    policyVersion: row.policy_version,
    fence: row.fence,
    state: row.state,
    attempt: row.attempt,
    at: row.at,
  }));
}
