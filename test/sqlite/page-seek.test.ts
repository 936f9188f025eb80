/**
 * A page of a long range (a listing's next scopes, a rollback's next rollout marks) starts its
 * index search at the page's position, not at the range's start: a page read late in 100,000
 * names costs what one read early does. Searching from the range's start made a listing of n
 * names cost n² / page. Compared as medians of interleaved reads of the same run, so a loaded
 * machine slows both alike; the old query read late pages about twenty times slower.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RangeRef } from '../../src/core/plan/transition.js';
import { PendingRows } from '../../src/store/sqlite/sqlite-pending-rows.js';
import { SqliteRowStatements } from '../../src/store/sqlite/sqlite-row-statements.js';
import { SqliteSnapshot } from '../../src/store/sqlite/sqlite-snapshot.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/temp-dir.js';

const TENANT = 'acme';
const NAMES = 100_000;
const name = (i: number) => `wf-${String(i).padStart(6, '0')}`;

describe('SQLite pages of a long range', () => {
  const dir = tempDir('fencegate-page-seek-');
  let db: Database.Database;
  let snapshot: SqliteSnapshot;
  beforeAll(async () => {
    const path = join(dir.path, 'pages.db');
    await SqliteStore.open({ path }).close();
    db = new Database(path);
    const scope = db.prepare(
      `INSERT INTO scopes (tenant, scope, fence, status, updated_at) VALUES (?, ?, 1, 'active', 0)`,
    );
    const mark = db.prepare(`INSERT INTO rollout_rows (tenant, key, value) VALUES (?, ?, '{}')`);
    db.transaction(() => {
      for (let i = 0; i < NAMES; i++) {
        scope.run(TENANT, name(i));
        mark.run(TENANT, `scope|r1|${name(i)}`);
      }
    })();
    snapshot = new SqliteSnapshot(TENANT, 0, new SqliteRowStatements(db), new PendingRows());
  });
  afterAll(() => {
    db.close();
    dir.cleanup();
  });

  function median(samples: number[]): number {
    return [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
  }

  /** Medians of reading the page after `early` and after `late`, interleaved. */
  function pageTimes(page: (after: string) => RangeRef, early: string, late: string) {
    const times = { early: [] as number[], late: [] as number[] };
    for (let round = 0; round < 15; round++) {
      for (const [which, after] of [
        ['early', early],
        ['late', late],
      ] as const) {
        const start = performance.now();
        const names = snapshot.list(page(after));
        times[which].push(performance.now() - start);
        expect(names).toHaveLength(1_000);
      }
    }
    return { early: median(times.early), late: median(times.late) };
  }

  it("a listing's page of scopes under a prefix", () => {
    const page = (after: string): RangeRef => ({
      type: 'page',
      of: { type: 'scopes', prefix: 'wf-' },
      after,
      limit: 1_000,
    });
    expect(snapshot.list(page(name(97_000)))[0]).toBe(name(97_001));
    expect(snapshot.list(page(''))[0]).toBe(name(0));
    const { early, late } = pageTimes(page, name(1_000), name(97_000));
    expect(late).toBeLessThan(early * 4);
  });

  it("a rollback's page of rollout marks", () => {
    const prefix = 'scope|r1|';
    const page = (after: string): RangeRef => ({
      type: 'page',
      of: { type: 'rolloutKeys', prefix },
      after,
      limit: 1_000,
    });
    expect(snapshot.list(page(prefix + name(97_000)))[0]).toBe(prefix + name(97_001));
    expect(snapshot.list(page(''))[0]).toBe(prefix + name(0));
    const { early, late } = pageTimes(page, prefix + name(1_000), prefix + name(97_000));
    expect(late).toBeLessThan(early * 4);
  });
});
