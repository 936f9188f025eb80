/** The PostgreSQL adapter's public surface. */
export { PostgresStore, type PostgresStoreOptions } from './postgres-store.js';
export type { PostgresPoolOptions } from './postgres-pool-options.js';
export {
  assertFence,
  assertFenceKysely,
  fenceErrorFrom,
  FENCE_SQLSTATE,
  type AssertFenceInput,
  type KyselySqlTag,
  type SqlQueryable,
} from './assert-fence.js';
export { POSTGRES_MIGRATIONS, type PostgresMigration } from './postgres-migrations.js';
export { DEFAULT_SCHEMA, redactPostgresUrl } from './postgres-url.js';
