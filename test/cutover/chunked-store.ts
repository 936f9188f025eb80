/**
 * Small cutover chunks for the tests that kill a cutover or a rollout between two of its chunks
 * (or two pages of its listing): a few chunks of CHUNK scopes, not thousands of scopes in chunks of
 * 1,000. The test process opens its stores with `cutoverChunk: CHUNK`; the child process it kills
 * opens the store with openChunked.
 */
import { EtcdStore } from '../../src/store/etcd/etcd-store.js';
import { openStore } from '../../src/store/open.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { isSqliteUrl, parseSqliteUrl } from '../../src/store/sqlite/sqlite-url.js';
import type { Store } from '../../src/store/store.js';

/** The scopes one cutover chunk moves on SQLite and PostgreSQL in these tests. */
export const CHUNK = 25;

/** The store at `url` with chunks (and listing pages) of CHUNK scopes. */
export async function openChunked(url: string): Promise<Store> {
  if (isSqliteUrl(url)) {
    const { path, synchronous } = parseSqliteUrl(url);
    return SqliteStore.open({
      path,
      cutoverChunk: CHUNK,
      ...(synchronous === undefined ? {} : { synchronous }),
    });
  }
  if (url.startsWith('postgres')) return PostgresStore.open({ url, cutoverChunk: CHUNK });
  if (url.startsWith('etcd')) return EtcdStore.open({ url, cutoverChunk: CHUNK });
  return openStore(url);
}
