/** A conformance subject on a fresh SQLite file in a temp dir, with a manual store clock. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Fencegate } from '../../src/gate.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { ConformanceSubject } from '../../src/testing/vitest/index.js';
import { ManualClock } from '../../src/testing/index.js';

export interface SqliteSubject extends ConformanceSubject {
  clock: ManualClock;
  dir: string;
  path: string;
  gate: Fencegate;
  /** Closes every handle and removes the temp dir. */
  dispose(): Promise<void>;
}

export async function createSqliteSubject(): Promise<SqliteSubject> {
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-conformance-'));
  const path = join(dir, 'store.db');
  const clock = new ManualClock();
  const gate = await Fencegate.open({ store: SqliteStore.open({ path, clock }) });
  const extra: Fencegate[] = [];
  return {
    clock,
    dir,
    path,
    gate,
    ops: gate,
    other: gate.forTenant('other'),
    advanceClock: (ms: number) => {
      clock.advance(ms);
      return Promise.resolve();
    },
    connectAgain: async () => {
      const again = await Fencegate.open({ store: SqliteStore.open({ path, clock }) });
      extra.push(again);
      return again;
    },
    async dispose() {
      for (const handle of extra) await handle.close();
      await gate.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function destroySqliteSubject(subject: ConformanceSubject): Promise<void> {
  await (subject as SqliteSubject).dispose();
}
