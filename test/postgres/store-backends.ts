/**
 * Store factories for the suites that run on every store (dispatch, cutover): each `open()` is a
 * fresh, empty store. SQLite: a new file in a temp directory of the test file. PostgreSQL: a new
 * schema (migrated on open, about 70 ms) named after the test file, dropped with the others when
 * the file's tests are done. `url` opens the same store from another process or pool.
 *
 *   describe.each(STORE_BACKENDS)('on %s', (backend) => {
 *     const stores = storeFactory(backend, 'dispatch_acceptance');
 *     it('…', async () => { const { store } = await stores.open({ clock }); … });
 *   });
 *
 * Call storeFactory at the top level of a file or of a describe block: it registers the afterAll
 * that removes what it created.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { Clock } from '../../src/core/clock.js';
import { EtcdStore } from '../../src/store/etcd/etcd-store.js';
import { openStore } from '../../src/store/open.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { etcdTestUrl } from '../etcd/etcd-subject.js';
import { dropSchema, pgUrl, testSchema } from './pg-helpers.js';

export type StoreBackend = 'sqlite' | 'postgres' | 'etcd';

export const STORE_BACKENDS: readonly StoreBackend[] = ['sqlite', 'postgres', 'etcd'];

export interface StoreOptions {
  /** Store time; the store's own clock (host or database) when absent. */
  clock?: Clock;
  /** Batch concurrent commits, as the server runs the store. */
  groupCommit?: boolean;
}

export interface OpenedStore {
  store: Store;
  /** The store URL (`sqlite:PATH` or `postgres://…?schema=NAME`) for other processes. */
  url: string;
}

export interface StoreFactory {
  readonly backend: StoreBackend;
  /** A fresh, empty store. */
  open(options?: StoreOptions): Promise<OpenedStore>;
  /** Another handle on the store at `url` (a second pool, or the file opened again). */
  reopen(url: string, options?: StoreOptions): Promise<Store>;
}

export function storeFactory(backend: StoreBackend, label: string): StoreFactory {
  if (backend === 'etcd') return etcdFactory(label);
  return backend === 'sqlite' ? sqliteFactory(label) : postgresFactory(label);
}

/** etcd: a new key prefix on the single-member etcd of the test run. */
function etcdFactory(label: string): StoreFactory {
  const base = `${label.replace(/_/g, '-')}-${randomUUID().slice(0, 8)}`;
  let count = 0;
  const options = (given: StoreOptions) => ({
    ...(given.clock === undefined ? {} : { clock: given.clock }),
    ...(given.groupCommit === undefined ? {} : { groupCommit: given.groupCommit }),
  });
  return {
    backend: 'etcd',
    open: async (given = {}) => {
      const url = `${etcdTestUrl('single')}?prefix=${base}-${++count}`;
      return { store: await EtcdStore.open({ url, ...options(given) }), url };
    },
    reopen: (url, given = {}) => EtcdStore.open({ url, ...options(given) }),
  };
}

function sqliteFactory(label: string): StoreFactory {
  const dir = mkdtempSync(join(tmpdir(), `fencegate-${label}-`));
  let count = 0;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return {
    backend: 'sqlite',
    // These suites test behaviour, not durability (test/e2e/sqlite-durability.test.ts does): a
    // sync per acquire would only make their thousands of grants slow.
    open: (options = {}) => {
      const path = join(dir, `store-${++count}.db`);
      const store = SqliteStore.open({ path, synchronous: 'NORMAL', ...options });
      return Promise.resolve({ store, url: `sqlite:${path}?synchronous=normal` });
    },
    reopen: (url, options = {}) => openStore(url, options),
  };
}

function postgresFactory(label: string): StoreFactory {
  const schemas: string[] = [];
  afterAll(async () => {
    if (schemas.length === 0) return;
    const url = pgUrl();
    for (const schema of schemas) await dropSchema(url, schema);
  });
  const options = (given: StoreOptions) => ({
    ...(given.clock === undefined ? {} : { clock: given.clock }),
    ...(given.groupCommit === undefined ? {} : { groupCommit: given.groupCommit }),
    pool: { max: 8 },
  });
  return {
    backend: 'postgres',
    open: async (given = {}) => {
      const base = pgUrl();
      const schema = testSchema(label);
      schemas.push(schema);
      const store = await PostgresStore.open({ url: base, schema, ...options(given) });
      const url = new URL(base);
      url.searchParams.set('schema', schema);
      return { store, url: url.toString() };
    },
    reopen: (url, given = {}) => PostgresStore.open({ url, ...options(given) }),
  };
}
