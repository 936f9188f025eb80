/**
 * SQLite for the tests: each fresh store is a new file in a temp directory of the factory. These
 * stores test behaviour, not durability (test/e2e/sqlite-durability.test.ts does): they sync at
 * NORMAL, since a sync per grant would only make thousands of grants slow.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { parseSqliteUrl } from '../../../src/store/sqlite/sqlite-url.js';
import { ManualClock } from '../../../src/testing/index.js';
import type { StoreFactory, StoreOptions, TestStoreKind } from '../stores.js';

function open(url: string, { warmConnections: _, ...options }: StoreOptions): SqliteStore {
  const { path, synchronous } = parseSqliteUrl(url);
  return SqliteStore.open({
    path,
    ...options,
    ...(synchronous === undefined ? {} : { synchronous }),
  });
}

function sqliteFactory(label: string): StoreFactory {
  const dir = mkdtempSync(join(tmpdir(), `fencegate-${label}-`));
  let count = 0;
  const freshUrl = () => `sqlite:${join(dir, `store-${++count}.db`)}?synchronous=normal`;
  return {
    name: 'sqlite',
    freshUrl,
    open: (options = {}) => {
      const url = freshUrl();
      return Promise.resolve({ store: open(url, options), url });
    },
    reopen: (url, options = {}) => Promise.resolve(open(url, options)),
    // A new file costs less than emptying one.
    recycle: (url) => {
      const { path } = parseSqliteUrl(url);
      for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true });
      return Promise.resolve();
    },
    cleanup: () => {
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
  };
}

export const SQLITE: TestStoreKind = {
  name: 'sqlite',
  family: 'sqlite',
  everyArea: true,
  overHttp: true,
  modelRuns: 400,
  // better-sqlite3 is a dependency: nothing to install.
  missing: () => null,
  install: 'npm install',
  factory: sqliteFactory,
  behind: {
    planCutover: async (url, tenant, request, now) => {
      const store = SqliteStore.open({
        path: parseSqliteUrl(url).path,
        clock: new ManualClock(now),
      });
      try {
        await store.startCutover(tenant, request);
      } finally {
        await store.close();
      }
    },
    watchCutover: (url) => {
      const db = new Database(parseSqliteUrl(url).path, { readonly: true });
      const moved = db.prepare("SELECT COUNT(*) AS n FROM audit WHERE kind = 'cutover'");
      return Promise.resolve({
        childUrl: url,
        cutoverEntries: () => Promise.resolve((moved.get() as { n: number }).n),
        // A SQLite write is done when the process is gone.
        childGone: () => Promise.resolve(),
        close: () => {
          db.close();
          return Promise.resolve();
        },
      });
    },
  },
};
