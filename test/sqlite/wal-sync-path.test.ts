/**
 * Which file the store's own WAL sync flushes (sqlite-wal-sync.ts). SQLite resolves a symlinked
 * database path and writes the log beside the real file; the sync must flush that log, not a
 * `-wal` beside the link (absent, or a stale leftover), and the store checks at open that the file
 * it syncs is the very log SQLite has open. After a failed sync the store refuses with a message
 * that says so.
 */
import { fdatasync, fstatSync, mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { WalSync, type SyncFile } from '../../src/store/sqlite/sqlite-wal-sync.js';
import { tempDir } from '../helpers/temp-dir.js';

let dir = tempDir();
beforeEach(() => {
  dir = tempDir('fencegate-wal-path-');
});
afterEach(() => dir.cleanup());

/** A real fdatasync that records the device and inode of every file it flushes. */
function recordingSync() {
  const synced: string[] = [];
  const sync: SyncFile = (fd, done) => {
    const stat = fstatSync(fd);
    synced.push(`${stat.dev}:${stat.ino}`);
    fdatasync(fd, done);
  };
  return { sync, synced };
}

function identity(path: string): string {
  const stat = statSync(path);
  return `${stat.dev}:${stat.ino}`;
}

/** A database file in real/, reached through link.db in another directory. */
function symlinkedDatabase(): { real: string; link: string } {
  mkdirSync(join(dir.path, 'real'));
  mkdirSync(join(dir.path, 'links'));
  const real = join(dir.path, 'real', 'store.db');
  const link = join(dir.path, 'links', 'link.db');
  writeFileSync(real, '');
  symlinkSync(real, link);
  return { real, link };
}

async function commitOnce(store: SqliteStore): Promise<void> {
  const gate = await Fencegate.open({ store });
  const grant = await gate.acquire({ scope: 's', holder: 'w', ttlMs: 60_000 });
  const result = await gate.commit({
    scope: 's',
    fence: grant.fence,
    operationId: 'op-1',
    writes: [{ name: 'n', expectRevision: 0, value: 1 }],
  });
  expect(result).toMatchObject({ outcome: 'committed' });
}

it('opens a symlinked database and syncs the log SQLite writes, beside the real file', async () => {
  const { real, link } = symlinkedDatabase();
  const { sync, synced } = recordingSync();
  const store = SqliteStore.open({ path: link, syncFile: sync });
  try {
    await commitOnce(store);
    expect(synced.length).toBeGreaterThan(0);
    expect(new Set(synced)).toEqual(new Set([identity(`${real}-wal`)]));
  } finally {
    await store.close();
  }
});

it('ignores a stale -wal beside the link: the synced file is the real log', async () => {
  const { real, link } = symlinkedDatabase();
  writeFileSync(`${link}-wal`, 'a leftover of another database');
  const { sync, synced } = recordingSync();
  const store = SqliteStore.open({ path: link, syncFile: sync });
  try {
    await commitOnce(store);
    expect(synced).not.toContain(identity(`${link}-wal`));
    expect(new Set(synced)).toEqual(new Set([identity(`${real}-wal`)]));
  } finally {
    await store.close();
  }
});

it('after a failed sync, refuses with a message naming the failed sync, not an open failure', async () => {
  const path = join(dir.path, 'store.db');
  const failing: SyncFile = (_fd, done) => {
    const error = new Error('EIO: i/o error') as NodeJS.ErrnoException;
    error.code = 'EIO';
    done(error);
  };
  const store = SqliteStore.open({ path, syncFile: failing });
  try {
    await expect(
      store.acquire('acme', { scope: 's', holder: 'w', ttlMs: 60_000 }),
    ).rejects.toMatchObject({ code: 'outcome_unknown' });
    const refusal = await store.getScope('acme', 's').catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: 'store_unavailable' });
    expect((refusal as Error).message).toMatch(/sync of its log failed/);
    expect((refusal as Error).message).not.toMatch(/could not be opened/);
  } finally {
    await store.close();
  }
});

it('refuses to sync a -wal file that SQLite does not have open', () => {
  const path = join(dir.path, 'closed.db');
  writeFileSync(path, '');
  writeFileSync(`${path}-wal`, 'nobody writes this log');
  expect(() => new WalSync(path)).toThrow(/is not the log SQLite writes/);
});
