/**
 * The statements of the SQLite adapter's public reads and of its tokens, prepared once per
 * connection. The plans' rows have theirs in sqlite-row-statements.ts.
 */
import type Database from 'better-sqlite3';
import type { SqliteDatabase } from './sqlite-database.js';
import { TOKEN_COLUMNS } from '../rows.js';
import { INTENT_COLUMNS } from './sqlite-rows.js';

type Stmt = Database.Statement;

export class SqliteStatements {
  readonly getScope: Stmt;
  readonly listScopes: Stmt;
  readonly getRecord: Stmt;
  readonly listRecords: Stmt;
  readonly getOperation: Stmt;
  readonly getIntent: Stmt;

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
    this.listScopes = db.prepare(
      `SELECT scope, fence, holder, lease_expires_at, policy_version, status, updated_at
       FROM scopes WHERE tenant = @tenant AND scope > @after AND scope >= @prefix AND scope < @prefixEnd
       ORDER BY scope LIMIT @limit`,
    );
    this.getRecord = db.prepare(
      `SELECT name, present, value, revision, incarnation, fingerprint, updated_at
       FROM records WHERE tenant = ? AND scope = ? AND name = ?`,
    );
    this.listRecords = db.prepare(
      `SELECT name, present, value, revision, incarnation, fingerprint, updated_at
       FROM records WHERE tenant = ? AND scope = ? ORDER BY name`,
    );
    this.getOperation = db.prepare(
      `SELECT outcome FROM operations WHERE tenant = ? AND operation_id = ?`,
    );
    this.getIntent = db.prepare(
      `SELECT ${INTENT_COLUMNS} FROM intents WHERE tenant = ? AND effect_key = ?`,
    );

    this.insertToken = db.prepare(
      `INSERT INTO tokens (${TOKEN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.findToken = db.prepare(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE hash = ?`);
    this.deleteToken = db.prepare(`DELETE FROM tokens WHERE id = ?`);
    this.countTokens = db.prepare(`SELECT COUNT(*) AS n FROM tokens`);
    this.listTokens = db.prepare(`SELECT ${TOKEN_COLUMNS} FROM tokens ORDER BY created_at, id`);
    this.listTenantTokens = db.prepare(
      `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE tenant = ?
       ORDER BY created_at, id`,
    );
  }
}
