/**
 * Prepared statements of the list reads whose SQL depends on the query (record pages, audit and
 * intent pages), kept per connection by their text. Preparing one took longer than running it: a
 * LangGraph thread's first read of a step, the newest checkpoint, paid for the parse each time.
 * The texts come from a few fixed shapes (order, direction, which filters are set), never from
 * values, which are bound, so the cache stays small.
 */
import type Database from 'better-sqlite3';
import type { SqliteDatabase } from './sqlite-database.js';

const statements = new WeakMap<SqliteDatabase, Map<string, Database.Statement>>();

/** The statement of `sql` on `db`, prepared on its first use. */
export function preparedOnce(db: SqliteDatabase, sql: string): Database.Statement {
  let byText = statements.get(db);
  if (byText === undefined) {
    byText = new Map();
    statements.set(db, byText);
  }
  let statement = byText.get(sql);
  if (statement === undefined) {
    statement = db.prepare(sql);
    byText.set(sql, statement);
  }
  return statement;
}
