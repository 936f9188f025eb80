/**
 * A record page on SQLite costs the same however deep its cursor and however large its scope:
 * the index serving the page's order (the primary key for name order, records_by_revision for
 * revision order) is searched from the cursor, so the statement starts reading at the page's
 * first record instead of filtering away every record before it. Asserted on the work the
 * statement is compiled to do (where its index search starts, and that it sorts nothing), not on
 * how long it takes.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveRecordPage } from '../../src/core/record-page.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { recordPageStatement } from '../../src/store/record-page-sql.js';
import type { ListRecordsQuery } from '../../src/types.js';
import { tempDir } from '../helpers/temp-dir.js';
import { cursorAt, seekKeys } from '../helpers/record-page-plan.js';

const RECORDS = 20_000;
const BUDGET = 1 << 20;
const dir = tempDir();
const path = join(dir.path, 'records.db');
let db: Database.Database;

const nameOf = (n: number) => `r/${String(n).padStart(6, '0')}`;

beforeAll(async () => {
  await SqliteStore.open({ path }).close();
  db = new Database(path);
  const insert = db.prepare(
    `INSERT INTO records (tenant, scope, name, present, value, revision, incarnation, fingerprint,
      updated_at) VALUES ('acme', 'big', ?, 1, ?, ?, 1, NULL, 0)`,
  );
  // Revisions spread over the names, so revision order is not name order.
  db.transaction(() => {
    for (let n = 0; n < RECORDS; n++) insert.run(nameOf(n), String(n), 1 + ((n * 7919) % 997));
  })();
});

afterAll(() => {
  db?.close();
  dir.cleanup();
});

/** The page's statement and its bound values, as the store runs it. */
function statementOf(query: ListRecordsQuery): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const text = recordPageStatement(
    { table: 'records', columns: ['name', 'revision'], bigint: 'INTEGER' },
    'acme',
    'big',
    resolveRecordPage(query, BUDGET),
    (value) => {
      values.push(value);
      return '?';
    },
  );
  return { text, values };
}

/**
 * How the page's statement reads the scope: the steps of its plan under the `page` CTE, the one
 * part that reads records by range (the rest orders and joins the page's own few rows).
 */
function pagePlan(query: ListRecordsQuery): string {
  const { text, values } = statementOf(query);
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...values) as PlanRow[];
  const page = rows.find((row) => row.detail === 'CO-ROUTINE page');
  return rows
    .filter((row) => page !== undefined && row.parent === page.id)
    .map((row) => row.detail)
    .join('\n');
}

interface PlanRow {
  id: number;
  parent: number;
  detail: string;
}

/** The bound values each index search of the page's statement starts from. */
function searchesOf(query: ListRecordsQuery): unknown[][] {
  const { text, values } = statementOf(query);
  const program = db.prepare(`EXPLAIN ${text}`).all(...values) as Parameters<typeof seekKeys>[0];
  return seekKeys(program, values);
}

describe('a SQLite record page past a deep cursor', () => {
  const deep = nameOf(RECORDS / 2);

  it('in name order, searches the primary key from the cursor', () => {
    for (const query of [
      { after: deep, limit: 15 },
      { cursor: cursorAt('name', deep), limit: 15 },
      { prefix: 'r/', after: deep, limit: 15 },
    ]) {
      expect(searchesOf(query), JSON.stringify(query)).toContainEqual(['acme', 'big', deep]);
    }
  });

  it('in name order descending, searches the primary key back from the cursor', () => {
    const query = { direction: 'desc' as const, cursor: cursorAt('name', deep), limit: 15 };
    expect(searchesOf(query)).toContainEqual(['acme', 'big', deep]);
  });

  it('in revision order, searches records_by_revision from the cursor and sorts nothing', () => {
    for (const direction of ['asc', 'desc'] as const) {
      const query = {
        order: 'revision' as const,
        direction,
        cursor: cursorAt('revision', deep, 500),
        limit: 15,
      };
      expect(searchesOf(query), direction).toContainEqual(['acme', 'big', 500, deep]);
      const plan = pagePlan(query);
      expect(plan).toMatch(/^SEARCH records USING (COVERING )?INDEX records_by_revision/);
      expect(plan).not.toMatch(/TEMP B-TREE/);
    }
  });

  it('in revision order, reads its first page from the index without sorting the scope', () => {
    for (const direction of ['asc', 'desc'] as const) {
      const plan = pagePlan({ order: 'revision', direction, limit: 15 });
      expect(plan, direction).toMatch(
        /^SEARCH records USING (COVERING )?INDEX records_by_revision/,
      );
      expect(plan, direction).not.toMatch(/TEMP B-TREE/);
    }
  });

  it('answers the records past the cursor in either order', async () => {
    const store = SqliteStore.open({ path });
    try {
      const byName = await store.listRecordsPage('acme', 'big', { after: deep, limit: 3 }, BUDGET);
      expect(byName.items.map((record) => record.name)).toEqual(
        [1, 2, 3].map((n) => nameOf(RECORDS / 2 + n)),
      );
      const first = await store.listRecordsPage(
        'acme',
        'big',
        { order: 'revision', limit: 3 },
        BUDGET,
      );
      const next = await store.listRecordsPage(
        'acme',
        'big',
        {
          order: 'revision',
          limit: 3,
          cursor: first.nextCursor ?? '',
        },
        BUDGET,
      );
      const all = db.prepare('SELECT name FROM records ORDER BY revision, name LIMIT 6').all() as {
        name: string;
      }[];
      expect([...first.items, ...next.items].map((record) => record.name)).toEqual(
        all.map((row) => row.name),
      );
    } finally {
      await store.close();
    }
  });
});
