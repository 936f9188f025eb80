/**
 * The statements behind the plans' rows on SQLite (core/plan/transition.ts): one primary-key
 * SELECT and one upsert per row type, and one SELECT per range. Prepared once per connection;
 * positional parameters, which bind at half the cost of named ones on the commit path. A SELECT
 * names its columns as the row's fields where no conversion is needed.
 */
import type Database from 'better-sqlite3';
import { OPEN_INTENT_SQL_LIST } from '../open-intent-sql.js';
import type { SqliteDatabase } from './sqlite-database.js';
import { INTENT_COLUMNS } from './sqlite-rows.js';

type Stmt = Database.Statement;

/** The intent columns of the `intents AS i` of a join. */
const INTENT_COLUMNS_OF_I = INTENT_COLUMNS.split(',')
  .map((column) => `i.${column.trim()}`)
  .join(', ');

const AUDIT_INSERT = `INSERT INTO audit (at, tenant, scope, kind, outcome, reason, task_id, operation_id,
  holder, policy_version, fence, current_fence, lease_expires_at, records, effect_key, reads, token_id)`;
const AUDIT_COLUMNS = 17;

const OPERATION_INSERT = `INSERT INTO operations (tenant, operation_id, request_fingerprint, outcome,
  created_at)`;
const OPERATION_COLUMNS = 5;

export class SqliteRowStatements {
  readonly getScope: Stmt;
  readonly putScope: Stmt;
  readonly getFenceGrant: Stmt;
  readonly putFenceGrant: Stmt;
  readonly getRecord: Stmt;
  readonly putRecord: Stmt;
  readonly getDeletion: Stmt;
  readonly putDeletion: Stmt;
  readonly getOperation: Stmt;
  readonly getIntent: Stmt;
  readonly putIntent: Stmt;
  readonly getPolicy: Stmt;
  readonly putPolicy: Stmt;
  readonly getCutover: Stmt;
  readonly cutoverScopes: Stmt;
  readonly insertCutover: Stmt;
  readonly updateCutover: Stmt;
  readonly planCutoverScope: Stmt;
  readonly getCutoverStep: Stmt;
  readonly putCutoverStep: Stmt;
  readonly getJob: Stmt;
  readonly putJob: Stmt;
  readonly getRollout: Stmt;
  readonly putRollout: Stmt;
  readonly deleteRollout: Stmt;

  readonly listScopeRecords: Stmt;
  readonly listScopeIntents: Stmt;
  readonly listOpenIntents: Stmt;
  readonly listScopes: Stmt;
  readonly listCutoverSteps: Stmt;
  readonly listRolloutKeys: Stmt;
  readonly pageScopes: Stmt;
  readonly pageRolloutKeys: Stmt;
  readonly pageCutoverScopes: Stmt;
  readonly pageScopeIntents: Stmt;
  readonly lastAuditSeq: Stmt;

  readonly #db: SqliteDatabase;
  readonly #dueIntents = new Map<boolean, Stmt>();
  readonly #appendAudit = new Map<number, Stmt>();
  readonly #insertOperations = new Map<number, Stmt>();

  constructor(db: SqliteDatabase) {
    this.#db = db;
    this.getScope = db.prepare(
      `SELECT fence, holder, lease_expires_at AS leaseExpiresAt, policy_version AS policyVersion,
         status, updated_at AS updatedAt, grant_token_id AS grantTokenId
       FROM scopes WHERE tenant = ? AND scope = ?`,
    );
    this.putScope = db.prepare(
      `INSERT INTO scopes (tenant, scope, fence, holder, lease_expires_at, policy_version, status,
         updated_at, grant_token_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant, scope) DO UPDATE SET fence = excluded.fence, holder = excluded.holder,
         lease_expires_at = excluded.lease_expires_at, policy_version = excluded.policy_version,
         status = excluded.status, updated_at = excluded.updated_at,
         grant_token_id = excluded.grant_token_id`,
    );
    this.getFenceGrant = db.prepare(
      'SELECT holder FROM fence_grants WHERE tenant = ? AND scope = ? AND fence = ?',
    );
    this.putFenceGrant = db.prepare(
      'INSERT OR IGNORE INTO fence_grants (tenant, scope, fence, holder) VALUES (?, ?, ?, ?)',
    );
    this.getRecord = db.prepare(
      `SELECT present, value, revision, incarnation, fingerprint, updated_at
       FROM records WHERE tenant = ? AND scope = ? AND name = ?`,
    );
    this.putRecord = db.prepare(
      `INSERT INTO records (tenant, scope, name, present, value, revision, incarnation, fingerprint, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant, scope, name) DO UPDATE SET present = excluded.present,
         value = excluded.value, revision = excluded.revision, incarnation = excluded.incarnation,
         fingerprint = excluded.fingerprint, updated_at = excluded.updated_at`,
    );
    this.getDeletion = db.prepare(
      `SELECT 1 FROM record_deletions WHERE tenant = ? AND scope = ? AND name = ? AND revision = ?`,
    );
    this.putDeletion = db.prepare(
      `INSERT OR IGNORE INTO record_deletions (tenant, scope, name, revision) VALUES (?, ?, ?, ?)`,
    );
    this.getOperation = db.prepare(
      `SELECT request_fingerprint, outcome, created_at FROM operations
       WHERE tenant = ? AND operation_id = ?`,
    );
    this.getIntent = db.prepare(
      `SELECT ${INTENT_COLUMNS} FROM intents WHERE tenant = ? AND effect_key = ?`,
    );
    this.putIntent = db.prepare(
      `INSERT INTO intents (tenant, effect_key, scope, target, payload, status, attempts, fence,
         operation_id, claim_fence, provider_ref, last_error, created_at, updated_at,
         unknown_outcomes, claimed_by, claim_expires_at, next_attempt_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant, effect_key) DO UPDATE SET status = excluded.status,
         attempts = excluded.attempts, claim_fence = excluded.claim_fence,
         provider_ref = excluded.provider_ref, last_error = excluded.last_error,
         updated_at = excluded.updated_at, unknown_outcomes = excluded.unknown_outcomes,
         claimed_by = excluded.claimed_by, claim_expires_at = excluded.claim_expires_at,
         next_attempt_at = excluded.next_attempt_at`,
    );
    this.getPolicy = db.prepare(
      `SELECT version, digest, description, registered_by AS registeredBy,
         registered_at AS registeredAt
       FROM policies WHERE tenant = ? AND version = ?`,
    );
    // A policy version never changes once registered.
    this.putPolicy = db.prepare(
      `INSERT INTO policies (tenant, version, digest, description, registered_by, registered_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
    );
    this.getCutover = db.prepare(
      `SELECT cutover_id AS cutoverId, request_fingerprint AS requestFingerprint,
         to_policy AS toPolicy, holder, lease_ttl_ms AS leaseTtlMs, reason, status,
         start_seq AS startSeq, started_at AS startedAt, completed_at AS completedAt
       FROM cutovers WHERE tenant = ? AND cutover_id = ?`,
    );
    this.cutoverScopes = db
      .prepare(
        `SELECT scope FROM cutover_scopes WHERE tenant = ? AND cutover_id = ? ORDER BY scope`,
      )
      .pluck();
    // A cutover's request is fixed when it is planned; only its status changes afterwards.
    this.insertCutover = db.prepare(
      `INSERT OR IGNORE INTO cutovers (tenant, cutover_id, request_fingerprint, to_policy, holder,
         lease_ttl_ms, reason, status, start_seq, started_at, completed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.updateCutover = db.prepare(
      `UPDATE cutovers SET status = ?, completed_at = ? WHERE tenant = ? AND cutover_id = ?`,
    );
    // A planned scope is a cutover_scopes row without a fence; its step gives it one.
    this.planCutoverScope = db.prepare(
      `INSERT OR IGNORE INTO cutover_scopes (tenant, cutover_id, scope, fence) VALUES (?, ?, ?, NULL)`,
    );
    this.getCutoverStep = db.prepare(
      `SELECT fence, skipped FROM cutover_scopes
       WHERE tenant = ? AND cutover_id = ? AND scope = ? AND fence IS NOT NULL`,
    );
    this.putCutoverStep = db.prepare(
      `INSERT INTO cutover_scopes (tenant, cutover_id, scope, fence, skipped) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (tenant, cutover_id, scope) DO UPDATE SET fence = excluded.fence,
         skipped = excluded.skipped`,
    );
    this.getJob = db.prepare(
      `SELECT job_id AS jobId, scope, policy_version AS policyVersion, fence, state, attempt, at
       FROM jobs WHERE tenant = ? AND job_id = ?`,
    );
    this.putJob = db.prepare(
      `INSERT INTO jobs (tenant, job_id, scope, policy_version, fence, state, attempt, at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant, job_id) DO UPDATE SET scope = excluded.scope,
         policy_version = excluded.policy_version, fence = excluded.fence, state = excluded.state,
         attempt = excluded.attempt, at = excluded.at`,
    );
    this.getRollout = db
      .prepare(`SELECT value FROM rollout_rows WHERE tenant = ? AND key = ?`)
      .pluck();
    this.putRollout = db.prepare(
      `INSERT INTO rollout_rows (tenant, key, value) VALUES (?, ?, ?)
       ON CONFLICT (tenant, key) DO UPDATE SET value = excluded.value`,
    );
    this.deleteRollout = db.prepare('DELETE FROM rollout_rows WHERE tenant = ? AND key = ?');

    this.listScopeRecords = db
      .prepare(`SELECT name FROM records WHERE tenant = ? AND scope = ? ORDER BY name`)
      .pluck();
    this.listScopeIntents = db
      .prepare(`SELECT effect_key FROM intents WHERE tenant = ? AND scope = ? ORDER BY effect_key`)
      .pluck();
    this.listOpenIntents = db
      .prepare(
        `SELECT effect_key FROM intents INDEXED BY intents_by_status
       WHERE tenant = ? AND status IN ${OPEN_INTENT_SQL_LIST} ORDER BY effect_key`,
      )
      .pluck();
    this.listScopes = db
      .prepare(
        `SELECT scope FROM scopes WHERE tenant = ? AND scope >= ? AND scope < ? ORDER BY scope`,
      )
      .pluck();
    this.listCutoverSteps = db
      .prepare(
        `SELECT scope FROM cutover_scopes WHERE tenant = ? AND cutover_id = ? AND fence IS NOT NULL
       ORDER BY scope`,
      )
      .pluck();
    this.listRolloutKeys = db
      .prepare(
        `SELECT key FROM rollout_rows WHERE tenant = ? AND key >= ? AND key < ? ORDER BY key`,
      )
      .pluck();
    // A page of a range: the names after a position, at most a limit, by the primary key.
    this.pageScopes = db
      .prepare(
        `SELECT scope FROM scopes WHERE tenant = ? AND scope >= ? AND scope < ? AND scope <> ?
         ORDER BY scope LIMIT ?`,
      )
      .pluck();
    this.pageRolloutKeys = db
      .prepare(
        `SELECT key FROM rollout_rows WHERE tenant = ? AND key >= ? AND key < ? AND key <> ?
         ORDER BY key LIMIT ?`,
      )
      .pluck();
    this.pageCutoverScopes = db
      .prepare(
        `SELECT scope FROM cutover_scopes WHERE tenant = ? AND cutover_id = ? AND scope > ?
         ORDER BY scope LIMIT ?`,
      )
      .pluck();
    // A scope's intents after an effect key, by the (tenant, scope, effect_key) index, with their
    // rows: a cancel's page reads these and no other of the scope's intents.
    this.pageScopeIntents = db.prepare(
      `SELECT ${INTENT_COLUMNS} FROM intents INDEXED BY intents_by_scope_key
       WHERE tenant = ? AND scope = ? AND effect_key > ? ORDER BY effect_key LIMIT ?`,
    );
    this.lastAuditSeq = db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM audit');
  }

  /**
   * Appends `rows` audit entries in one statement: a group commit's batch or a cutover's chunk
   * pays one statement for many entries, not one each.
   */
  appendAudit(rows: number): Stmt {
    return this.#multiRow(this.#appendAudit, AUDIT_INSERT, AUDIT_COLUMNS, rows);
  }

  /** Stores `rows` outcomes in one statement. An outcome is stored once and never changes. */
  insertOperations(rows: number): Stmt {
    return this.#multiRow(this.#insertOperations, OPERATION_INSERT, OPERATION_COLUMNS, rows);
  }

  #multiRow(cache: Map<number, Stmt>, insert: string, columns: number, rows: number): Stmt {
    let statement = cache.get(rows);
    if (statement === undefined) {
      const row = `(${new Array<string>(columns).fill('?').join(', ')})`;
      statement = this.#db.prepare(
        `${insert} VALUES ${new Array<string>(rows).fill(row).join(', ')}`,
      );
      cache.set(rows, statement);
    }
    return statement;
  }

  /**
   * The first `limit` intents claimable at `now` (the plan puts them in claim order). One indexed
   * branch per claimable state, so the cost of a claim does not grow with the delivered intents a
   * tenant accumulated. The branches pick and order effect keys only; the chosen rows are read
   * afterwards by primary key, so no whole row is copied through the merge and its sort.
   */
  dueIntents(filtered: boolean): Stmt {
    let statement = this.#dueIntents.get(filtered);
    if (statement === undefined) {
      const targetFilter = filtered ? 'AND target IN (SELECT value FROM json_each(@targets))' : '';
      // Each status in claim order from the index, stopping at `limit`; then the three merged.
      const dueOf = (status: string) =>
        `SELECT * FROM (SELECT effect_key, COALESCE(next_attempt_at, created_at) AS due_at
           FROM intents INDEXED BY intents_due_order
           WHERE tenant = @tenant AND status = '${status}'
             AND (next_attempt_at IS NULL OR next_attempt_at <= @now) ${targetFilter}
           ORDER BY COALESCE(next_attempt_at, created_at), effect_key LIMIT @limit)`;
      // CROSS JOIN keeps the chosen keys as the outer loop: one primary-key probe per key.
      statement = this.#db.prepare(
        `SELECT ${INTENT_COLUMNS_OF_I} FROM (
           SELECT effect_key FROM (
             ${dueOf('pending')}
             UNION ALL
             ${dueOf('unknown')}
             UNION ALL
             SELECT effect_key, COALESCE(next_attempt_at, created_at) AS due_at
             FROM intents INDEXED BY intents_by_status
             WHERE tenant = @tenant AND status = 'claimed' AND claim_expires_at <= @now ${targetFilter}
           )
           ORDER BY due_at, effect_key LIMIT @limit
         ) AS due
         CROSS JOIN intents AS i ON i.tenant = @tenant AND i.effect_key = due.effect_key`,
      );
      this.#dueIntents.set(filtered, statement);
    }
    return statement;
  }
}
