/**
 * Policies, cutovers and the jobs ledger on SQLite. A cutover is planned in one transaction (the
 * scope list is fixed then) and carried out in chunks, each scope's fence bump and its progress
 * mark in the same transaction, so a cutover resumed after a crash never bumps a scope twice.
 */
import type Database from 'better-sqlite3';
import { decodeCutoverCursor } from '../../core/cutover-cursor.js';
import { DEFAULT_LIST_LIMIT } from '../../core/limits.js';
import { CUTOVER_CHUNK, cutoverFingerprint } from '../../cutover/plan.js';
import { FencegateError } from '../../errors.js';
import type {
  CutoverRecord,
  CutoverRequest,
  CutoverSummary,
  JobEvent,
  JobRecord,
  JobState,
  ListCutoversQuery,
  Page,
  Policy,
  RegisterPolicyRequest,
} from '../../types.js';
import { cutoverPage, cutoverSummaryColumns, type CutoverSummaryRow } from '../cutover-list.js';
import type { SqliteDatabase } from './sqlite-database.js';
import type { LeaseContext } from './sqlite-leases.js';

type Statement = Database.Statement;

interface PolicyRow {
  version: string;
  digest: string | null;
  description: string | null;
  registered_by: string | null;
  registered_at: number;
}

function toPolicy(row: PolicyRow): Policy {
  return {
    version: row.version,
    digest: row.digest,
    description: row.description,
    registeredBy: row.registered_by,
    registeredAt: row.registered_at,
  };
}

export function registerPolicy(
  db: SqliteDatabase,
  ctx: LeaseContext,
  request: RegisterPolicyRequest,
  registeredBy: string | null,
): { policy: Policy; created: boolean } {
  const existing = db
    .prepare('SELECT * FROM policies WHERE tenant = ? AND version = ?')
    .get(ctx.tenant, request.version) as PolicyRow | undefined;
  if (existing !== undefined) {
    if ((request.digest ?? null) !== existing.digest) {
      throw new FencegateError(
        'policy_conflict',
        `policy ${request.version} is registered with digest ${existing.digest ?? 'none'}; a version never changes`,
        { version: request.version, digest: existing.digest },
      );
    }
    return { policy: toPolicy(existing), created: false };
  }
  const row: PolicyRow = {
    version: request.version,
    digest: request.digest ?? null,
    description: request.description ?? null,
    registered_by: registeredBy,
    registered_at: ctx.now,
  };
  db.prepare(
    `INSERT INTO policies (tenant, version, digest, description, registered_by, registered_at)
     VALUES (@tenant, @version, @digest, @description, @registered_by, @registered_at)`,
  ).run({ tenant: ctx.tenant, ...row });
  return { policy: toPolicy(row), created: true };
}

export function listPolicies(db: SqliteDatabase, tenant: string): Policy[] {
  return (
    db
      .prepare('SELECT * FROM policies WHERE tenant = ? ORDER BY registered_at, version')
      .all(tenant) as PolicyRow[]
  ).map(toPolicy);
}

/** Plans the cutover, or checks that a cutover with this id is the same request. */
export function planCutover(
  db: SqliteDatabase,
  ctx: LeaseContext,
  request: CutoverRequest & { cutoverId: string },
): void {
  const fingerprint = cutoverFingerprint(request);
  const existing = db
    .prepare('SELECT request_fingerprint FROM cutovers WHERE tenant = ? AND cutover_id = ?')
    .get(ctx.tenant, request.cutoverId) as { request_fingerprint: string } | undefined;
  if (existing !== undefined) {
    if (existing.request_fingerprint !== fingerprint) {
      throw new FencegateError(
        'operation_id_conflict',
        `cutoverId ${request.cutoverId} already names a different cutover`,
        { cutoverId: request.cutoverId },
      );
    }
    return;
  }
  const policy = db
    .prepare('SELECT 1 FROM policies WHERE tenant = ? AND version = ?')
    .get(ctx.tenant, request.toPolicy);
  if (policy === undefined) {
    throw new FencegateError(
      'invalid_request',
      `toPolicy ${request.toPolicy} is not registered; register it with POST /v1/policies first`,
      { field: 'toPolicy' },
    );
  }
  const startSeq = (
    db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM audit').get() as { seq: number }
  ).seq;
  db.prepare(
    `INSERT INTO cutovers (tenant, cutover_id, request_fingerprint, to_policy, holder, lease_ttl_ms, reason,
       status, start_seq, started_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)`,
  ).run(
    ctx.tenant,
    request.cutoverId,
    fingerprint,
    request.toPolicy,
    request.holder,
    request.leaseTtlMs ?? null,
    request.reason ?? null,
    startSeq,
    ctx.now,
  );
  if (request.scopes !== undefined) {
    db.prepare(
      `INSERT OR IGNORE INTO cutover_scopes (tenant, cutover_id, scope, fence)
       SELECT ?, ?, value, NULL FROM json_each(?)`,
    ).run(ctx.tenant, request.cutoverId, JSON.stringify(request.scopes));
  } else {
    const prefix = request.prefix ?? '';
    db.prepare(
      `INSERT INTO cutover_scopes (tenant, cutover_id, scope, fence)
       SELECT tenant, ?, scope, NULL FROM scopes
       WHERE tenant = ? AND scope >= ? AND scope < ? AND status = 'active'`,
    ).run(request.cutoverId, ctx.tenant, prefix, `${prefix}\uffff`);
  }
}

/**
 * The statements of a chunk, prepared once per connection. A chunk is a few set-based statements
 * over the chunk's scope list (a JSON array), not four statements per scope: the per-statement
 * overhead, not SQLite's work, was most of a cutover's time.
 */
interface ChunkStatements {
  cutover: Statement;
  pending: Statement;
  createMissing: Statement;
  skipDeleted: Statement;
  bump: Statement;
  mark: Statement;
  audit: Statement;
  complete: Statement;
}

const chunkStatements = new WeakMap<SqliteDatabase, ChunkStatements>();

const IN_CHUNK = 'scope IN (SELECT value FROM json_each(@scopes))';

function prepareChunk(db: SqliteDatabase): ChunkStatements {
  let statements = chunkStatements.get(db);
  if (statements !== undefined) return statements;
  statements = {
    cutover: db.prepare(
      'SELECT to_policy, holder, lease_ttl_ms FROM cutovers WHERE tenant = ? AND cutover_id = ?',
    ),
    pending: db.prepare(
      `SELECT COUNT(*) AS n, json_group_array(scope) AS scopes FROM (
         SELECT scope FROM cutover_scopes WHERE tenant = ? AND cutover_id = ? AND fence IS NULL
         ORDER BY scope LIMIT ?)`,
    ),
    // A listed scope that was never created starts at fence 0 here and gets fence 1 below.
    createMissing: db.prepare(
      `INSERT OR IGNORE INTO scopes (tenant, scope, fence, holder, lease_expires_at, policy_version,
         status, updated_at)
       SELECT @tenant, value, 0, NULL, NULL, NULL, 'active', @now FROM json_each(@scopes)`,
    ),
    // Only a takeover re-creates a deleted scope: the cutover leaves it, marked skipped.
    skipDeleted: db.prepare(
      `UPDATE cutover_scopes SET skipped = 1, fence = (SELECT s.fence FROM scopes s
         WHERE s.tenant = cutover_scopes.tenant AND s.scope = cutover_scopes.scope)
       WHERE tenant = @tenant AND cutover_id = @cutoverId AND ${IN_CHUNK}
         AND EXISTS (SELECT 1 FROM scopes s WHERE s.tenant = cutover_scopes.tenant
           AND s.scope = cutover_scopes.scope AND s.status = 'deleted')`,
    ),
    bump: db.prepare(
      `UPDATE scopes SET fence = fence + 1, holder = @holder, lease_expires_at = @leaseExpiresAt,
         policy_version = @policyVersion, updated_at = @now
       WHERE tenant = @tenant AND status = 'active' AND ${IN_CHUNK}`,
    ),
    mark: db.prepare(
      `UPDATE cutover_scopes SET fence = (SELECT s.fence FROM scopes s
         WHERE s.tenant = cutover_scopes.tenant AND s.scope = cutover_scopes.scope)
       WHERE tenant = @tenant AND cutover_id = @cutoverId AND skipped = 0 AND ${IN_CHUNK}`,
    ),
    // The same entry auditEntry() builds for a grant, one per scope, in scope order.
    audit: db.prepare(
      `INSERT INTO audit (at, tenant, scope, kind, outcome, reason, task_id, operation_id, holder,
         policy_version, fence, current_fence, lease_expires_at, records, effect_key)
       SELECT @now, tenant, scope, 'cutover', 'granted', @cutoverId, NULL, NULL, @holder,
         @policyVersion, NULL, fence, @leaseExpiresAt, NULL, NULL
       FROM cutover_scopes
       WHERE tenant = @tenant AND cutover_id = @cutoverId AND skipped = 0 AND ${IN_CHUNK}
       ORDER BY scope`,
    ),
    complete: db.prepare(
      `UPDATE cutovers SET status = 'completed', completed_at = ?
       WHERE tenant = ? AND cutover_id = ? AND status = 'running'`,
    ),
  };
  chunkStatements.set(db, statements);
  return statements;
}

/** Moves up to CUTOVER_CHUNK planned scopes; returns how many moved (0 when done). */
export function moveCutoverChunk(db: SqliteDatabase, ctx: LeaseContext, cutoverId: string): number {
  const statements = prepareChunk(db);
  const cutover = statements.cutover.get(ctx.tenant, cutoverId) as {
    to_policy: string;
    holder: string;
    lease_ttl_ms: number | null;
  };
  const pending = statements.pending.get(ctx.tenant, cutoverId, CUTOVER_CHUNK) as {
    n: number;
    scopes: string;
  };
  if (pending.n === 0) {
    statements.complete.run(ctx.now, ctx.tenant, cutoverId);
    return 0;
  }
  const params = {
    tenant: ctx.tenant,
    cutoverId,
    scopes: pending.scopes,
    now: ctx.now,
    holder: cutover.holder,
    policyVersion: cutover.to_policy,
    leaseExpiresAt: cutover.lease_ttl_ms === null ? null : ctx.now + cutover.lease_ttl_ms,
  };
  statements.createMissing.run(params);
  statements.skipDeleted.run(params);
  statements.bump.run(params);
  statements.mark.run(params);
  statements.audit.run(params);
  return pending.n;
}

export function readCutover(
  db: SqliteDatabase,
  tenant: string,
  cutoverId: string,
): CutoverRecord | null {
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
  query: ListCutoversQuery,
): Page<CutoverSummary> {
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

export function recordJobEvents(ctx: LeaseContext, events: JobEvent[]): void {
  for (const event of events) {
    ctx.statements.upsertJob.run(
      ctx.tenant,
      event.jobId,
      event.scope,
      event.policyVersion,
      event.fence,
      event.state,
      event.attempt,
      event.at ?? ctx.now,
    );
  }
}

interface JobRow {
  job_id: string;
  scope: string;
  policy_version: string;
  fence: number;
  state: JobState;
  attempt: number;
  at: number;
}

export function listJobs(
  db: SqliteDatabase,
  tenant: string,
  scopes?: readonly string[],
): JobRecord[] {
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
