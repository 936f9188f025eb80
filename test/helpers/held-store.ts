/**
 * A fresh store of a test kind, with group commit, whose writes a test can hold: while it is held
 * a batch the store has started cannot finish, so every write after it waits in the queue in front
 * of the group commit, as long as the test holds and no longer. Each store is held from outside,
 * as a busy neighbour would hold it: SQLite by another connection's write lock, PostgreSQL by
 * another connection's lock on the audit table every write appends to (reads go on), etcd by a
 * proxy that stops passing bytes (the etcd of the run is shared with other files, so it is never
 * paused itself). The store's own deadlines are set far above any hold, so that a loaded machine
 * makes a hold longer, never a failure.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { EtcdStore } from '../../src/store/etcd/etcd-store.js';
import { parseEtcdUrl } from '../../src/store/etcd/etcd-url.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { parseSqliteUrl } from '../../src/store/sqlite/sqlite-url.js';
import type { Store } from '../../src/store/store.js';
import { pgUrl } from '../postgres/pg-helpers.js';
import { PausableTcpProxy } from './pausable-tcp-proxy.js';
import type { StoreFactory, TestStoreKind } from './stores.js';

/** Far above any hold: a write waiting behind it must not time out. */
const PATIENT_MS = 120_000;

export interface HeldStore {
  store: Store;
  /** From now on, the next batch the store starts waits (and every write after it queues). */
  hold(): Promise<void>;
  /** Lets the held batch, and the queue behind it, go on. */
  release(): Promise<void>;
  /** Releases any hold and closes the store. */
  close(): Promise<void>;
}

/** A fresh store of `kind`, made by `stores` (whose cleanup removes it), that a test can hold. */
export async function openHeldStore(kind: TestStoreKind, stores: StoreFactory): Promise<HeldStore> {
  switch (kind.family) {
    case 'sqlite':
      return heldSqlite(stores.freshUrl());
    case 'postgres':
      return await heldPostgres(stores.freshUrl());
    case 'etcd':
      return await heldEtcd(stores.freshUrl());
    default:
      throw new Error(`no way to hold a ${kind.name} store is known`);
  }
}

function heldSqlite(url: string): HeldStore {
  const { path, synchronous } = parseSqliteUrl(url);
  const store = SqliteStore.open({
    path,
    groupCommit: true,
    busyTimeoutMs: PATIENT_MS,
    ...(synchronous === undefined ? {} : { synchronous }),
  });
  let holder: Database.Database | null = null;
  const release = () => {
    holder?.exec('ROLLBACK');
    holder?.close();
    holder = null;
    return Promise.resolve();
  };
  return {
    store,
    hold: () => {
      // A second holder would wait on the first's lock, blocking this thread for PATIENT_MS.
      if (holder !== null) throw new Error('the store is held already');
      holder = new Database(path, { timeout: PATIENT_MS });
      // The write lock; in WAL mode readers, the store's included, go on.
      holder.exec('BEGIN IMMEDIATE');
      return Promise.resolve();
    },
    release,
    close: async () => {
      await release();
      await store.close();
    },
  };
}

async function heldPostgres(url: string): Promise<HeldStore> {
  const schema = new URL(url).searchParams.get('schema');
  const store = await PostgresStore.open({
    url,
    groupCommit: true,
    pool: { max: 8, statementTimeoutMillis: PATIENT_MS, connectionTimeoutMillis: PATIENT_MS },
  });
  let holder: pg.Client | null = null;
  const release = async () => {
    const client = holder;
    holder = null;
    if (client === null) return;
    await client.query('ROLLBACK');
    await client.end();
  };
  return {
    store,
    hold: async () => {
      if (holder !== null) throw new Error('the store is held already');
      const client = new pg.Client({ connectionString: pgUrl() });
      client.on('error', () => undefined);
      await client.connect();
      holder = client;
      await client.query('BEGIN');
      // EXCLUSIVE lets reads through and stops every insert: each write appends an audit entry.
      await client.query(`LOCK TABLE ${schema}.audit IN EXCLUSIVE MODE`);
    },
    release,
    close: async () => {
      await release();
      await store.close();
    },
  };
}

async function heldEtcd(url: string): Promise<HeldStore> {
  const { hosts, prefix } = parseEtcdUrl(url);
  const proxy = new PausableTcpProxy(hosts[0]!);
  const through = await proxy.start();
  const store = await EtcdStore.open({
    url: `etcd://${through}?prefix=${prefix}`,
    groupCommit: true,
    callTimeoutMs: PATIENT_MS,
    operationTimeoutMs: PATIENT_MS,
  });
  return {
    store,
    hold: () => {
      proxy.pause();
      return Promise.resolve();
    },
    release: () => {
      proxy.resume();
      return Promise.resolve();
    },
    close: async () => {
      proxy.resume();
      await store.close();
      await proxy.stop();
    },
  };
}
