/**
 * Opening a SQLite file: pragmas, the schema (sqlite-migrations.ts), and the write-transaction wrapper that makes several
 * processes sharing one file safe. Every write runs under BEGIN IMMEDIATE, so the write lock is
 * taken before anything is read and a transaction never has to upgrade a read snapshot (the
 * upgrade is where WAL mode returns SQLITE_BUSY without waiting).
 */
import Database from 'better-sqlite3';
import { FencegateError } from '../../errors.js';
import { BUSY_SLICE_MS } from './sqlite-busy.js';
import { migrate } from './sqlite-migrations.js';

export type SqliteDatabase = Database.Database;

export type Synchronous = 'OFF' | 'NORMAL' | 'FULL';

/**
 * FULL: the WAL is synced before every answer, so an acknowledged grant or commit survives an OS
 * crash or power loss (the store does the syncing off the event loop: sqlite-wal-sync.ts). NORMAL
 * syncs only at checkpoints and may lose the last acknowledged transactions then; one sync serves
 * every transaction committed while the previous one ran, so FULL costs little.
 */
export const DEFAULT_SYNCHRONOUS: Synchronous = 'FULL';

export interface SqliteOpenOptions {
  path: string;
  /**
   * How long opening waits for another process's lock. Afterwards the connection waits only
   * BUSY_SLICE_MS per attempt; the store retries from the event loop (sqlite-busy.ts).
   */
  busyTimeoutMs?: number;
  synchronous?: Synchronous;
}

export const DEFAULT_BUSY_TIMEOUT_MS = 10_000;
export const WAL_AUTOCHECKPOINT_PAGES = 10_000;

export function openDatabase(options: SqliteOpenOptions): SqliteDatabase {
  let db: SqliteDatabase;
  try {
    db = new Database(options.path === ':memory:' ? ':memory:' : options.path, {
      timeout: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
    });
  } catch (error) {
    throw storeUnavailable(error);
  }
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous ?? DEFAULT_SYNCHRONOUS}`);
    db.pragma('foreign_keys = OFF');
    db.pragma('temp_store = MEMORY');
    // Fold the WAL back every ~40 MiB rather than every ~4 MiB: each checkpoint fsyncs the
    // database file, and a guarded commit writes several pages (record, outcome, audit).
    db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    migrate(db);
    db.pragma(`busy_timeout = ${BUSY_SLICE_MS}`);
  } catch (error) {
    db.close();
    throw error instanceof FencegateError ? error : storeUnavailable(error);
  }
  return db;
}

const SYNCHRONOUS_LEVELS: readonly Synchronous[] = ['OFF', 'NORMAL', 'FULL'];

/** The journal mode SQLite settled on: 'wal' for a file, 'memory' for an in-memory database. */
export function journalModeOf(db: SqliteDatabase): string {
  return String(db.pragma('journal_mode', { simple: true })).toLowerCase();
}

/** The path of the main database file as SQLite resolved it (symlinks followed). */
export function mainFileOf(db: SqliteDatabase): string {
  const list = db.pragma('database_list') as { name: string; file: string }[];
  return list.find((entry) => entry.name === 'main')?.file ?? db.name;
}

/** The synchronous mode in force on this connection, read back from SQLite. */
export function synchronousOf(db: SqliteDatabase): Synchronous | 'EXTRA' {
  const level = db.pragma('synchronous', { simple: true }) as number;
  return SYNCHRONOUS_LEVELS[level] ?? 'EXTRA';
}

/** SQLite result codes that mean the file could not be used; nothing was committed. */
const UNAVAILABLE_CODES =
  /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|READONLY|NOTADB|CORRUPT|PROTOCOL)/;

export function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.test(code)) return true;
  return error instanceof TypeError && /database connection is not open/.test(error.message);
}

export function storeUnavailable(cause: unknown): FencegateError {
  const code = (cause as { code?: unknown } | null)?.code;
  const reason = typeof code === 'string' ? code : 'the database could not be opened';
  return new FencegateError(
    'store_unavailable',
    `the SQLite store is unavailable (${reason})`,
    {},
    { cause },
  );
}

/**
 * Runs `work` in a BEGIN IMMEDIATE transaction. A failure of the file itself becomes
 * store_unavailable: SQLite rolled the transaction back, so nothing happened and the caller may
 * retry. Catalog errors thrown by `work` pass through (and roll back).
 */
export function writeTransaction<T>(db: SqliteDatabase, work: () => T): T {
  try {
    return runnerOf(db).immediate(work) as T;
  } catch (error) {
    if (isUnavailable(error)) throw storeUnavailable(error);
    throw error;
  }
}

/**
 * One transaction wrapper per connection, the work passed in: better-sqlite3 builds a wrapper's
 * four BEGIN/COMMIT variants each time `db.transaction` is called, which every write paid.
 */
const runners = new WeakMap<
  SqliteDatabase,
  Database.Transaction<(work: () => unknown) => unknown>
>();

function runnerOf(db: SqliteDatabase): Database.Transaction<(work: () => unknown) => unknown> {
  let runner = runners.get(db);
  if (runner === undefined) {
    runner = db.transaction((work: () => unknown) => work());
    runners.set(db, runner);
  }
  return runner;
}

/** Runs a read; a failure of the file becomes store_unavailable. */
export function read<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (isUnavailable(error)) throw storeUnavailable(error);
    throw error;
  }
}
