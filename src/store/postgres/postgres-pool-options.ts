/** The pool settings a caller may pass; apart from the pool itself so public types need no pg. */
export interface PostgresPoolOptions {
  /** Connections in the pool (default 16). */
  max?: number;
  /** Idle connections are closed after this long (default 30 s). */
  idleTimeoutMillis?: number;
  /** A connection attempt that takes longer is store_unavailable (default 5 s). */
  connectionTimeoutMillis?: number;
  /**
   * Server-side statement_timeout of the store's statements, in ms (default 10 s; 0 turns it off).
   * A statement waiting on a row lock held by another connection is cancelled then, and rolled
   * back: the answer is store_unavailable with nothing changed, as SQLite's busy timeout answers.
   */
  statementTimeoutMillis?: number;
  /** application_name shown in pg_stat_activity (default 'fencegate'). */
  applicationName?: string;
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000;

export const DEFAULT_POOL: Required<PostgresPoolOptions> = {
  max: 16,
  idleTimeoutMillis: 30_000,
  connectionTimeoutMillis: 5_000,
  applicationName: 'fencegate',
  statementTimeoutMillis: DEFAULT_STATEMENT_TIMEOUT_MS,
};
