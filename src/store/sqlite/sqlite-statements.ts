/** Every statement the SQLite adapter runs, prepared once per connection. */
import type Database from 'better-sqlite3';
import type { SqliteDatabase } from './sqlite-database.js';
import { INTENT_COLUMNS } from './sqlite-rows.js';

type Stmt = Database.Statement;

export class SqliteStatements {
  readonly getScope: Stmt;
  readonly getFenceGrant: Stmt;
  readonly listScopes: Stmt;
  readonly insertScope: Stmt;
  readonly updateAuthority: Stmt;
  readonly updateLease: Stmt;
  readonly releaseHolder: Stmt;
  readonly markDeleted: Stmt;

  readonly getRecord: Stmt;
  readonly getRecordRevision: Stmt;
  readonly listRecords: Stmt;
  readonly listLiveRecordNames: Stmt;
  readonly upsertRecord: Stmt;
  readonly tombstoneRecord: Stmt;
  readonly recordDeletion: Stmt;
  readonly wasDeletedAt: Stmt;

  readonly getOperation: Stmt;
  readonly insertOperation: Stmt;

  readonly intentExists: Stmt;
  readonly insertIntent: Stmt;
  readonly getIntent: Stmt;
  readonly pendingIntentKeys: Stmt;
  readonly cancelIntent: Stmt;

  readonly appendAudit: Stmt;

  readonly upsertJob: Stmt;

  readonly insertToken: Stmt;
  readonly findToken: Stmt;
  readonly deleteToken: Stmt;
  readonly countTokens: Stmt;
  readonly listTokens: Stmt;
  readonly listTenantTokens: Stmt;

  constructor(db: SqliteDatabase) {
    this.getScope = db.prepare(
      `SELECT scope, fence, holder, lease_expires_at, policy_version, status, updated_at
       FROM scopes WHERE tenant = ? AND scope = ?`,
    );
    this.getFenceGrant = db.prepare(
      'SELECT holder FROM fence_grants WHERE tenant = ? AND scope = ? AND fence = ?',
    );
    this.listScopes = db.prepare(
      `SELECT scope, fence, holder, lease_expires_at, policy_version, status, updated_at
       FROM scopes WHERE tenant = @tenant AND scope > @after AND scope >= @prefix AND scope < @prefixEnd
       ORDER BY scope LIMIT @limit`,
    );
    this.insertScope = db.prepare(
      `INSERT INTO scopes (tenant, scope, fence, holder, lease_expires_at, policy_version, status, updated_at)
       VALUES (@tenant, @scope, @fence, @holder, @leaseExpiresAt, @policyVersion, 'active', @now)`,
    );
    this.updateAuthority = db.prepare(
      `UPDATE scopes SET fence = @fence, holder = @holder, lease_expires_at = @leaseExpiresAt,
         policy_version = @policyVersion, status = 'active', updated_at = @now
       WHERE tenant = @tenant AND scope = @scope`,
    );
    this.updateLease = db.prepare(
      `UPDATE scopes SET lease_expires_at = @leaseExpiresAt, updated_at = @now
       WHERE tenant = @tenant AND scope = @scope`,
    );
    this.releaseHolder = db.prepare(
      `UPDATE scopes SET holder = NULL, lease_expires_at = NULL, updated_at = @now
       WHERE tenant = @tenant AND scope = @scope`,
    );
    this.markDeleted = db.prepare(
      `UPDATE scopes SET fence = @fence, holder = NULL, lease_expires_at = NULL, status = 'deleted',
         updated_at = @now
       WHERE tenant = @tenant AND scope = @scope`,
    );

    this.getRecord = db.prepare(
      `SELECT name, present, value, revision, incarnation, fingerprint, updated_at
       FROM records WHERE tenant = ? AND scope = ? AND name = ?`,
    );
    this.getRecordRevision = db.prepare(
      `SELECT present, revision, incarnation FROM records WHERE tenant = ? AND scope = ? AND name = ?`,
    );
    this.listRecords = db.prepare(
      `SELECT name, present, value, revision, incarnation, fingerprint, updated_at
       FROM records WHERE tenant = ? AND scope = ? ORDER BY name`,
    );
    this.listLiveRecordNames = db.prepare(
      `SELECT name, revision, incarnation FROM records
       WHERE tenant = ? AND scope = ? AND present = 1 ORDER BY name`,
    );
    this.upsertRecord = db.prepare(
      `INSERT INTO records (tenant, scope, name, present, value, revision, incarnation, fingerprint, updated_at)
       VALUES (@tenant, @scope, @name, 1, @value, @revision, @incarnation, @fingerprint, @now)
       ON CONFLICT (tenant, scope, name) DO UPDATE SET present = 1, value = excluded.value,
         revision = excluded.revision, incarnation = excluded.incarnation,
         fingerprint = excluded.fingerprint, updated_at = excluded.updated_at`,
    );
    this.tombstoneRecord = db.prepare(
      `UPDATE records SET present = 0, value = NULL, fingerprint = NULL, revision = @revision,
         updated_at = @now
       WHERE tenant = @tenant AND scope = @scope AND name = @name`,
    );

    this.recordDeletion = db.prepare(
      `INSERT INTO record_deletions (tenant, scope, name, revision) VALUES (@tenant, @scope, @name, @revision)`,
    );
    this.wasDeletedAt = db.prepare(
      `SELECT 1 FROM record_deletions WHERE tenant = ? AND scope = ? AND name = ? AND revision = ?`,
    );

    this.getOperation = db.prepare(
      `SELECT request_fingerprint, outcome FROM operations WHERE tenant = ? AND operation_id = ?`,
    );
    this.insertOperation = db.prepare(
      `INSERT INTO operations (tenant, operation_id, request_fingerprint, outcome, created_at)
       VALUES (?, ?, ?, ?, ?)`,
    );

    this.intentExists = db.prepare(`SELECT 1 FROM intents WHERE tenant = ? AND effect_key = ?`);
    this.insertIntent = db.prepare(
      `INSERT INTO intents (tenant, effect_key, scope, target, payload, status, fence, operation_id,
         next_attempt_at, created_at, updated_at)
       VALUES (@tenant, @effectKey, @scope, @target, @payload, 'pending', @fence, @operationId,
         @now, @now, @now)`,
    );
    this.getIntent = db.prepare(
      `SELECT ${INTENT_COLUMNS} FROM intents WHERE tenant = ? AND effect_key = ?`,
    );
    this.pendingIntentKeys = db.prepare(
      `SELECT effect_key FROM intents WHERE tenant = ? AND scope = ? AND status = 'pending'
       ORDER BY effect_key`,
    );
    this.cancelIntent = db.prepare(
      `UPDATE intents SET status = 'cancelled', updated_at = ? WHERE tenant = ? AND effect_key = ?`,
    );

    // Positional parameters: this runs on every commit, and binding by name costs twice as much.
    this.appendAudit = db.prepare(
      `INSERT INTO audit (at, tenant, scope, kind, outcome, reason, task_id, operation_id, holder,
         policy_version, fence, current_fence, lease_expires_at, records, effect_key, reads)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    // A job keeps its latest state: an event older than the stored one changes nothing.
    // Positional: a fenced queue job records its states with its acquire and its release.
    this.upsertJob = db.prepare(
      `INSERT INTO jobs (tenant, job_id, scope, policy_version, fence, state, attempt, at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant, job_id) DO UPDATE SET scope = excluded.scope,
         policy_version = excluded.policy_version, fence = excluded.fence, state = excluded.state,
         attempt = excluded.attempt, at = excluded.at
       WHERE excluded.at >= jobs.at`,
    );

    this.insertToken = db.prepare(
      `INSERT INTO tokens (id, tenant, role, label, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
    );
    this.findToken = db.prepare(
      `SELECT id, tenant, role, label, hash, created_at FROM tokens WHERE hash = ?`,
    );
    this.deleteToken = db.prepare(`DELETE FROM tokens WHERE id = ?`);
    this.countTokens = db.prepare(`SELECT COUNT(*) AS n FROM tokens`);
    this.listTokens = db.prepare(
      `SELECT id, tenant, role, label, hash, created_at FROM tokens ORDER BY created_at, id`,
    );
    this.listTenantTokens = db.prepare(
      `SELECT id, tenant, role, label, hash, created_at FROM tokens WHERE tenant = ?
       ORDER BY created_at, id`,
    );
  }
}
