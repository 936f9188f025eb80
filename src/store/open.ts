/** Opens a store from its URL: `sqlite:PATH[?synchronous=normal]`, `sqlite::memory:`, `postgres://…`, `etcd://…`. */
import type { Clock } from '../core/clock.js';
import { fail } from '../errors.js';
import { isEtcdUrl } from './etcd/etcd-url.js';
import { PostgresStore } from './postgres/postgres-store.js';
import { isPostgresUrl } from './postgres/postgres-url.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import { isSqliteUrl, parseSqliteUrl } from './sqlite/sqlite-url.js';
import type { Store } from './store.js';

export interface OpenStoreOptions {
  clock?: Clock;
  /** Batch concurrent commits into one store round trip (the server turns this on). */
  groupCommit?: boolean;
}

export const DEFAULT_STORE_URL = 'sqlite:./fencegate.db';

export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  if (isSqliteUrl(url)) {
    const { path, synchronous } = parseSqliteUrl(url);
    return SqliteStore.open({
      path,
      ...options,
      ...(synchronous === undefined ? {} : { synchronous }),
    });
  }
  if (isPostgresUrl(url)) {
    // The schema comes from `?schema=NAME` (default fencegate).
    return PostgresStore.open({ url, ...options });
  }
  if (isEtcdUrl(url)) {
    // Loaded on demand: the etcd client brings gRPC, which SQLite and PostgreSQL users never need.
    const { EtcdStore } = await import('./etcd/etcd-store.js');
    return EtcdStore.open({ url, ...options });
  }
  return fail(
    'invalid_request',
    `unsupported store URL ${redactUrl(url)}; use sqlite:PATH, sqlite::memory:, postgres://… or etcd://host:port[,host:port…]`,
  );
}

/** A store URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}
