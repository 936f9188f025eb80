/**
 * A record page on PostgreSQL costs the same however deep its cursor and however large its scope:
 * the index serving the page's order (the primary key for name order, records_by_revision for
 * revision order) is scanned from the cursor, and nothing sorts the scope. Asserted on the plan
 * of the statement the store runs, not on how long it takes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveRecordPage } from '../../src/core/record-page.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { recordPageStatement } from '../../src/store/record-page-sql.js';
import type { ListRecordsQuery } from '../../src/types.js';
import { cursorAt } from '../helpers/record-page-plan.js';
import { dropSchema, pgUrl, testSchema, withClient } from './pg-helpers.js';

const RECORDS = 20_000;
const BUDGET = 1 << 20;
const url = pgUrl();
const schema = testSchema('record_page_plan');

const nameOf = (n: number) => `r/${String(n).padStart(6, '0')}`;

beforeAll(async () => {
  await (await PostgresStore.open({ url, schema })).close();
  await withClient(url, async (client) => {
    // Revisions spread over the names, so revision order is not name order.
    await client.query(
      `INSERT INTO ${schema}.records (tenant, scope, name, live, value, revision, incarnation,
        fingerprint, updated_at, row_version)
       SELECT 'acme', 'big', 'r/' || lpad(n::text, 6, '0'), true, n::text, 1 + (n * 7919) % 997,
        1, NULL, 0, 1 FROM generate_series(0, $1 - 1) AS n`,
      [RECORDS],
    );
    await client.query(`ANALYZE ${schema}.records`);
  });
}, 60_000);

afterAll(() => dropSchema(url, schema));

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Alias?: string;
  Plans?: PlanNode[];
}

/**
 * The nodes of the plan that read the page's rows and total their bytes (the `page` and `counted`
 * CTEs); the rest sorts and joins the page's own few rows.
 */
async function pagePlan(query: ListRecordsQuery): Promise<PlanNode[]> {
  const values: unknown[] = [];
  const text = recordPageStatement(
    { table: `${schema}.records`, columns: ['name', 'revision'], bigint: 'bigint' },
    'acme',
    'big',
    resolveRecordPage(query, BUDGET),
    (value) => `$${values.push(value)}`,
  );
  const plan = await withClient(url, async (client) => {
    const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
      `EXPLAIN (FORMAT JSON) ${text}`,
      values,
    );
    return rows[0]?.['QUERY PLAN'][0]?.Plan;
  });
  const nodes: PlanNode[] = [];
  const walk = (node: PlanNode, inPage: boolean) => {
    // The CTEs are inlined: `c` (counted) holds the page's read and its running totals.
    const here = inPage || node.Alias === 'c';
    if (here) nodes.push(node);
    for (const child of node.Plans ?? []) walk(child, here);
  };
  if (plan !== undefined) walk(plan, false);
  return nodes;
}

/** The index the page is read from, and whether anything under it sorts. */
function summary(nodes: PlanNode[]): { index: string | undefined; sorts: boolean } {
  return {
    index: nodes.find((node) => node['Index Name'] !== undefined)?.['Index Name'],
    sorts: nodes.some((node) => node['Node Type'].includes('Sort')),
  };
}

describe('a PostgreSQL record page past a deep cursor', () => {
  const deep = nameOf(RECORDS / 2);

  it('in name order, scans the primary key from the cursor', async () => {
    for (const direction of ['asc', 'desc'] as const) {
      const nodes = await pagePlan({ direction, cursor: cursorAt('name', deep), limit: 15 });
      expect(summary(nodes), direction).toEqual({ index: 'records_pkey', sorts: false });
    }
  });

  it('in revision order, scans records_by_revision from the cursor without sorting', async () => {
    for (const direction of ['asc', 'desc'] as const) {
      for (const cursor of [undefined, cursorAt('revision', deep, 500)]) {
        const query = { order: 'revision' as const, direction, limit: 15, cursor };
        const nodes = await pagePlan(query);
        expect(summary(nodes), JSON.stringify(query)).toEqual({
          index: 'records_by_revision',
          sorts: false,
        });
        const scan = nodes.find((node) => node['Index Name'] === 'records_by_revision');
        expect(scan?.['Index Cond']).toMatch(/ROW\(revision, name\) [<>]/);
      }
    }
  });
});
