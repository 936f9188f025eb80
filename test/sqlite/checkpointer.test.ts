/**
 * Checkpoints off the event loop (src/store/sqlite/sqlite-checkpointer.ts): once the connection
 * has written enough, a thread of its own folds the WAL back with PASSIVE checkpoints and the
 * connection's COMMIT does so only past a larger bound; close() closes the thread's connection
 * before it returns; a thread that fails hands checkpoints back to COMMIT.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import {
  Checkpointer,
  SAFETY_AUTOCHECKPOINT_PAGES,
  type CheckpointReport,
} from '../../src/store/sqlite/sqlite-checkpointer.js';
import { openDatabase, WAL_AUTOCHECKPOINT_PAGES } from '../../src/store/sqlite/sqlite-database.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/temp-dir.js';

const dir = tempDir();
afterAll(() => dir.cleanup());

let files = 0;
const fileName = (): string => join(dir.path, `checkpoint-${++files}.db`);

/** A WAL file with a table to write to, through the store's own opening code. */
function openFile(path: string) {
  const db = openDatabase({ path, synchronous: 'NORMAL' });
  db.exec('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  return { db, write: (): void => void insert.run('x'.repeat(3000)) };
}

/** A file whose thread starts at its first write, asked to checkpoint after every write. */
function startedAtFirstWrite(driver?: string) {
  const path = fileName();
  const { db, write } = openFile(path);
  const setup = { path, synchronous: 'NORMAL' as const, ...(driver ? { driver } : {}) };
  const checkpointer = new Checkpointer(db, setup, { afterWrites: 1, everyMs: 0 });
  write();
  checkpointer.written();
  return { path, db, write, checkpointer };
}

const autocheckpoint = (db: Database.Database): number =>
  db.pragma('wal_autocheckpoint', { simple: true }) as number;

/** Resolves with the first report `accept` takes. */
function nextReport(
  checkpointer: Checkpointer,
  accept: (report: CheckpointReport) => boolean,
): Promise<CheckpointReport> {
  return new Promise((resolve) =>
    checkpointer.onReport((report) => {
      if (accept(report)) resolve(report);
    }),
  );
}

/** Writes, a transaction a turn of the event loop, until the thread reports what `accept` takes. */
async function writeUntil(
  checkpointer: Checkpointer,
  write: () => void,
  accept: (report: CheckpointReport) => boolean,
): Promise<CheckpointReport> {
  const report = nextReport(checkpointer, accept);
  let done = false;
  void report.then(() => (done = true));
  while (!done) {
    write();
    checkpointer.written();
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return report;
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('checkpoints on a thread of their own', () => {
  it('no thread before the connection has written afterWrites transactions', () => {
    const path = fileName();
    const { db, write } = openFile(path);
    const checkpointer = new Checkpointer(db, { path, synchronous: 'NORMAL' }, { afterWrites: 3 });
    write();
    checkpointer.written();
    write();
    checkpointer.written();
    expect(checkpointer.running).toBe(false);
    expect(autocheckpoint(db)).toBe(WAL_AUTOCHECKPOINT_PAGES);
    write();
    checkpointer.written();
    expect(checkpointer.running).toBe(true);
    checkpointer.close();
    db.close();
  });

  it('the thread folds the whole log back while the connection checkpoints only past the larger bound', async () => {
    const { db, write, checkpointer } = startedAtFirstWrite();
    expect(autocheckpoint(db)).toBe(SAFETY_AUTOCHECKPOINT_PAGES);
    const report = await writeUntil(
      checkpointer,
      write,
      (r) => r.ok && (r.log ?? 0) > 0 && r.checkpointed === r.log,
    );
    expect(report.checkpointed).toBe(report.log);
    checkpointer.close();
    db.close();
  });

  it("close() returns only once the thread's connection is closed: the caller's is the last, and removes the log", async () => {
    const { path, db, write, checkpointer } = startedAtFirstWrite();
    // The thread has its connection open once it answers.
    expect((await writeUntil(checkpointer, write, () => true)).ok).toBe(true);
    // A log of several MiB, then one checkpoint asked for: the thread is busy copying it when
    // close() asks it to close, so close() must wait for it to get there.
    for (let i = 0; i < 3000; i++) write();
    checkpointer.written();
    expect(existsSync(`${path}-wal`)).toBe(true);
    checkpointer.close();
    db.close();
    // SQLite removes the log when the last connection to the file closes.
    expect(existsSync(`${path}-wal`)).toBe(false);
    const reread = new Database(path, { readonly: true });
    expect(
      (reread.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n,
    ).toBeGreaterThan(1);
    reread.close();
  });

  it('a thread that fails hands checkpoints back to COMMIT at the usual bound; writes go on', async () => {
    const { path, db, write, checkpointer } = startedAtFirstWrite(
      join(dir.path, 'no-such-driver.js'),
    );
    expect(autocheckpoint(db)).toBe(SAFETY_AUTOCHECKPOINT_PAGES);
    await until(() => !checkpointer.running);
    expect(autocheckpoint(db)).toBe(WAL_AUTOCHECKPOINT_PAGES);
    write();
    checkpointer.written();
    checkpointer.close();
    db.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('a busy store under FULL and group commit keeps every commit with the thread checkpointing beside it', async () => {
    const path = fileName();
    const store = SqliteStore.open({
      path,
      groupCommit: true,
      synchronous: 'FULL',
      checkpoints: { afterWrites: 1, everyMs: 0 },
    });
    const gate = await Fencegate.open({ store });
    const scopes = Array.from({ length: 8 }, (_, i) => `cp/${i}`);
    const fences = await Promise.all(
      scopes.map(
        async (scope) => (await gate.acquire({ scope, holder: 'w', ttlMs: 60_000 })).fence,
      ),
    );
    const perScope = 60;
    for (let round = 0; round < perScope; round++) {
      const answers = await Promise.all(
        scopes.map((scope, i) =>
          gate.commit({
            scope,
            fence: fences[i] ?? 0,
            operationId: `cp-${i}-${round}`,
            writes: [
              { name: 'memory', expectRevision: round, value: { round, pad: 'y'.repeat(2000) } },
            ],
          }),
        ),
      );
      for (const answer of answers) expect(answer.outcome).toBe('committed');
    }
    await gate.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    const reopened = await Fencegate.open({ store: SqliteStore.open({ path }) });
    for (const scope of scopes) {
      const record = await reopened.getRecord(scope, 'memory');
      expect(record.revision).toBe(perScope);
    }
    await reopened.close();
  });
});
