/**
 * Reads of policies, cutovers and the jobs ledger on PostgreSQL. Their changes are core's plans
 * (core/plan/plan-cutover.ts), applied like every other write (postgres-engine.ts).
 */
import type * as T from '../../types.js';
import { decodeCutoverCursor } from '../../core/cutover-cursor.js';
import { DEFAULT_LIST_LIMIT } from '../../core/limits.js';
import { cutoverPage, cutoverSummaryColumns, type CutoverSummaryRow } from '../cutover-list.js';
import { toPolicy, type PolicyRow } from '../rows.js';
import type { PostgresCalls } from './postgres-calls.js';

type Bigint = string | number;

export async function listPolicies(db: PostgresCalls, tenant: string): Promise<T.Policy[]> {
  const rows = await db.rows<PolicyRow>(
    `SELECT version, digest, description, registered_by, registered_at FROM ${db.schema}.policies
     WHERE tenant = $1 ORDER BY registered_at, version`,
    [tenant],
    'list_policies',
  );
  return rows.map(toPolicy);
}

interface CutoverRow {
  cutover_id: string;
  to_policy: string;
  holder: string;
  status: 'running' | 'completed';
  started_at: Bigint;
  completed_at: Bigint | null;
  start_seq: Bigint;
  planned: number;
  /** [scope, fence] of every moved scope, in scope order. */
  fences: [string, number][];
  /** Scopes found deleted at their step, in scope order. */
  skipped: string[];
}

/** The cutover and its progress, read in one statement (one snapshot). */
export async function readCutover(
  db: PostgresCalls,
  tenant: string,
  cutoverId: string,
): Promise<T.CutoverRecord | null> {
  const [row] = await db.rows<CutoverRow>(
    `SELECT c.cutover_id, c.to_policy, c.holder, c.status, c.started_at, c.completed_at,
       c.start_seq,
       (SELECT count(*)::integer FROM ${db.schema}.cutover_scopes s
         WHERE s.tenant = c.tenant AND s.cutover_id = c.cutover_id) AS planned,
       (SELECT coalesce(jsonb_agg(jsonb_build_array(s.scope, s.fence) ORDER BY s.scope), '[]')
          FROM ${db.schema}.cutover_scopes s
         WHERE s.tenant = c.tenant AND s.cutover_id = c.cutover_id AND s.fence IS NOT NULL
           AND NOT s.skipped) AS fences,
       (SELECT coalesce(jsonb_agg(s.scope ORDER BY s.scope), '[]')
          FROM ${db.schema}.cutover_scopes s
         WHERE s.tenant = c.tenant AND s.cutover_id = c.cutover_id AND s.skipped) AS skipped
     FROM ${db.schema}.cutovers c WHERE c.tenant = $1 AND c.cutover_id = $2`,
    [tenant, cutoverId],
    'get_cutover',
  );
  if (row === undefined) return null;
  return {
    cutoverId: row.cutover_id,
    toPolicy: row.to_policy,
    holder: row.holder,
    status: row.status,
    startedAt: Number(row.started_at),
    completedAt: row.completed_at === null ? null : Number(row.completed_at),
    startSeq: Number(row.start_seq),
    fences: row.fences.map(([scope, fence]) => ({ scope, fence })),
    planned: row.planned,
    skipped: row.skipped,
  };
}

export async function listCutovers(
  db: PostgresCalls,
  tenant: string,
  query: T.ListCutoversQuery,
): Promise<T.Page<T.CutoverSummary>> {
  const limit = query.limit ?? DEFAULT_LIST_LIMIT;
  const after = decodeCutoverCursor(query.cursor);
  const rows = await db.rows<CutoverSummaryRow>(
    `SELECT ${cutoverSummaryColumns(`${db.schema}.cutover_scopes`)} FROM ${db.schema}.cutovers c
     WHERE c.tenant = $1 AND ($2::bigint IS NULL OR (c.started_at, c.cutover_id) < ($2, $3))
     ORDER BY c.started_at DESC, c.cutover_id DESC LIMIT $4`,
    [tenant, after?.startedAt ?? null, after?.cutoverId ?? '', limit + 1],
    after === null ? 'list_cutovers' : 'list_cutovers_after',
  );
  return cutoverPage(rows, limit);
}

interface JobRow {
  job_id: string;
  scope: string;
  policy_version: string;
  fence: Bigint;
  state: T.JobState;
  attempt: number;
  at: Bigint;
}

export async function listJobs(
  db: PostgresCalls,
  tenant: string,
  scopes?: readonly string[],
): Promise<T.JobRecord[]> {
  const columns = 'job_id, scope, policy_version, fence, state, attempt, at';
  const rows =
    scopes === undefined
      ? await db.rows<JobRow>(
          `SELECT ${columns} FROM ${db.schema}.jobs WHERE tenant = $1 ORDER BY job_id`,
          [tenant],
          'list_jobs_all',
        )
      : await db.rows<JobRow>(
          `SELECT ${columns} FROM ${db.schema}.jobs WHERE tenant = $1 AND scope = ANY ($2)
           ORDER BY job_id`,
          [tenant, scopes],
          'list_jobs',
        );
  return rows.map((row) => ({
    jobId: row.job_id,
    scope: row.scope,
    policyVersion: row.policy_version,
    fence: Number(row.fence),
    state: row.state,
    attempt: row.attempt,
    at: Number(row.at),
  }));
}
