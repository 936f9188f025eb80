/** The pool settings a caller may pass; apart from the pool itself so public types need no pg. */
export interface PostgresPoolOptions {
  /** Connections in the pool (default 16). */
  max?: number;
  /** Idle connections are closed after this long (default 30 s). */
  idleTimeoutMillis?: number;
  /** A connection attempt that takes longer is store_unavailable (default 5 s). */
  connectionTimeoutMillis?: number;
  /** Server-side statement_timeout for the store's statements, in ms (default none). */
  statementTimeoutMillis?: number;
  /** application_name shown in pg_stat_activity (default 'fencegate'). */
  applicationName?: string;
}

export const DEFAULT_POOL: Required<Omit<PostgresPoolOptions, 'statementTimeoutMillis'>> = {
  max: 16,
  idleTimeoutMillis: 30_000,
  connectionTimeoutMillis: 5_000,
  applicationName: 'fencegate',
};
