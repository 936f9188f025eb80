/**
 * The store's own WAL sync (src/store/sqlite/sqlite-wal-sync.ts): an answer waits for a sync that
 * began after every transaction committed before it; one sync serves every transaction committed
 * while the previous one ran; a failed sync is never reported as durable. The syncs reaching the
 * disk before each answer are counted from outside a server in test/e2e/sqlite-durability.test.ts.
 */
import { fdatasync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { WalSync, type SyncFile } from '../../src/store/sqlite/sqlite-wal-sync.js';
import { tempDir } from '../helpers/temp-dir.js';

const dir = tempDir();
afterAll(() => dir.cleanup());

let files = 0;
/** A WAL-mode file that has written once, so its log exists. */
function walFile(): string {
  const path = join(dir.path, `wal-${++files}.db`);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (x)');
  // Left open on purpose: closing the last connection deletes the log.
  opened.push(db);
  return path;
}
const opened: Database.Database[] = [];
afterAll(() => opened.forEach((db) => db.close()));

/**
 * A sync that runs only when the test lets it, counting the syncs started. `finish` runs the
 * oldest held sync for real and settles once the store has been told its result, however long the
 * disk (or a loaded machine) takes: a fixed pause would race the thread pool.
 */
function heldSync() {
  const held: (() => Promise<void>)[] = [];
  const sync: SyncFile = (fd, done) =>
    held.push(
      () =>
        new Promise<void>((resolve) =>
          fdatasync(fd, (error) => {
            done(error);
            resolve();
          }),
        ),
    );
  return {
    sync,
    started: () => held.length,
    finish: async () => {
      await held.shift()?.();
      await turn();
    },
  };
}

const settledOf = (promise: Promise<void> | null) => {
  const state = { settled: promise === null, error: undefined as unknown };
  void promise?.then(
    () => (state.settled = true),
    (error: unknown) => {
      state.settled = true;
      state.error = error;
    },
  );
  return state;
};
/** Lets every callback queued so far run (the store's answers are promise callbacks). */
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('WalSync', () => {
  it('has nothing to wait for before a commit', () => {
    const walSync = new WalSync(walFile());
    expect(walSync.durable()).toBeNull();
  });

  it('answers a commit only after a sync that began after it; one sync serves the commits made meanwhile', async () => {
    const held = heldSync();
    const walSync = new WalSync(walFile(), held.sync);
    walSync.committed();
    expect(held.started()).toBe(1);
    const first = settledOf(walSync.durable());
    // Committed while the first sync runs: that sync may have begun before their frames.
    walSync.committed();
    walSync.committed();
    const later = settledOf(walSync.durable());
    expect(held.started()).toBe(1);

    await held.finish();
    expect(first.settled).toBe(true);
    expect(later.settled).toBe(false);
    // The next sync starts by itself and covers both later commits.
    expect(held.started()).toBe(1);
    await held.finish();
    expect(later.settled).toBe(true);
    expect(later.error).toBeUndefined();
    expect(held.started()).toBe(0);
    expect(walSync.durable()).toBeNull();
  });

  it('never reports a failed sync as durable: waiters get outcome_unknown, and so does every later wait', async () => {
    const failing: SyncFile = (_fd, done) =>
      setImmediate(() => done(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' })));
    const walSync = new WalSync(walFile(), failing);
    walSync.committed();
    const waiting = walSync.durable();
    await expect(waiting).rejects.toMatchObject({ code: 'outcome_unknown' });
    expect(walSync.failed).toBe(true);
    await expect(walSync.durable()).rejects.toMatchObject({ code: 'outcome_unknown' });
  });

  it('close waits for the running sync and answers its waiters', async () => {
    const held = heldSync();
    const walSync = new WalSync(walFile(), held.sync);
    walSync.committed();
    const waiting = settledOf(walSync.durable());
    const closed = settledOf(walSync.close());
    await turn();
    expect(closed.settled).toBe(false);
    await held.finish();
    expect(waiting.settled).toBe(true);
    expect(waiting.error).toBeUndefined();
    expect(closed.settled).toBe(true);
  });
});

describe('a SQLite store whose WAL sync fails', () => {
  it('answers outcome_unknown for the change waiting on it, then refuses everything until reopened', async () => {
    const path = join(dir.path, 'failing-store.db');
    let fail = false;
    const syncFile: SyncFile = (fd, done) =>
      fail
        ? setImmediate(() => done(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' })))
        : fdatasync(fd, done);
    const store = SqliteStore.open({ path, groupCommit: true, syncFile });
    const grant = await store.acquire('t', { scope: 'a', holder: 'w', ttlMs: 60_000 });
    fail = true;
    await expect(
      store.acquire('t', { scope: 'b', holder: 'w', ttlMs: 60_000 }),
    ).rejects.toMatchObject({ code: 'outcome_unknown' });
    // Nothing more is promised durable: reads and writes are refused, not answered from the log.
    await expect(store.getScope('t', 'a')).rejects.toMatchObject({ code: 'store_unavailable' });
    await expect(
      store.acquire('t', { scope: 'c', holder: 'w', ttlMs: 60_000 }),
    ).rejects.toMatchObject({ code: 'store_unavailable' });
    await store.close();

    // Reopened (here, without a power loss in between), the file holds what was written.
    const reopened = SqliteStore.open({ path });
    try {
      expect((await reopened.getScope('t', 'a'))?.fence).toBe(grant.fence);
      expect(await reopened.getScope('t', 'c')).toBeNull();
    } finally {
      await reopened.close();
    }
  });
});
