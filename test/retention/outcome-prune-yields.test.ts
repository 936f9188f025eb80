/**
 * A retention pass over many stored outcomes must not hold the event loop: every lease renewal of
 * every tenant waits behind it. 300,000 outcomes are written straight into a real SQLite file
 * (committing them one by one would take minutes), then a pass runs while a 5 ms timer measures
 * how late it fires. Bounds are generous: a pass that walks the table in one go is far past them.
 */
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { tempDir } from '../helpers/temp-dir.js';

const OUTCOMES = 300_000;
const HOUR = 3_600_000;
/** The longest a 5 ms timer may be late while a pass runs. */
const MAX_LAG_MS = 150;

const dir = tempDir('fencegate-prune-yield-');
const path = `${dir.path}/store.db`;
const clock = new ManualClock();
let store: SqliteStore;

/** Outcomes created at store times `at(i)`, in one transaction of a second connection. */
function writeOutcomes(at: (i: number) => number): void {
  const db = new Database(path);
  try {
    const insert = db.prepare(
      `INSERT INTO operations (tenant, operation_id, request_fingerprint, outcome, created_at)
       VALUES (?, ?, ?, ?, ?)`,
    );
    db.transaction(() => {
      for (let i = 0; i < OUTCOMES; i++) {
        insert.run(`tenant-${i % 7}`, `op-${i}`, 'f', '{}', at(i));
      }
    })();
  } finally {
    db.close();
  }
}

async function maxTimerLag(work: () => Promise<unknown>): Promise<number> {
  let maxLag = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    maxLag = Math.max(maxLag, now - last - 5);
    last = now;
  }, 5);
  try {
    await work();
    await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    clearInterval(timer);
  }
  return maxLag;
}

function count(): number {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM operations').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('pruning 300,000 stored outcomes on SQLite', () => {
  beforeAll(async () => {
    store = SqliteStore.open({ path, clock });
    await store.ping();
    clock.advance(10 * HOUR);
    writeOutcomes((i) => clock.now() - (i % 2 === 0 ? 5 * HOUR : 0));
  }, 120_000);

  afterAll(async () => {
    await store.close();
    dir.cleanup();
  });

  it('keeps the event loop answering when nothing is old enough', async () => {
    let deleted = -1;
    const lag = await maxTimerLag(async () => {
      deleted = await store.pruneOperations(clock.now() - 6 * HOUR);
    });
    expect(deleted).toBe(0);
    expect(lag).toBeLessThan(MAX_LAG_MS);
  }, 60_000);

  it('keeps the event loop answering while it deletes half of them', async () => {
    let deleted = -1;
    const lag = await maxTimerLag(async () => {
      deleted = await store.pruneOperations(clock.now() - HOUR);
    });
    expect(deleted).toBe(OUTCOMES / 2);
    expect(count()).toBe(OUTCOMES / 2);
    expect(lag).toBeLessThan(MAX_LAG_MS);
  }, 60_000);
});
