/**
 * One tenant's audit read (the audit endpoint, verify) costs that tenant's own entries, not every
 * tenant's: with many entries of another tenant in the log, the store's page query for an empty
 * or small tenant must go through the tenant's range of an index, never walk the log in seq order
 * filtering tenants out. Checked from the databases' own plans, not from timings.
 */
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { Fencegate } from '../../src/gate.js';
import { auditPageStatement as pgAuditPage } from '../../src/store/postgres/postgres-queries.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { auditPageStatement as sqliteAuditPage } from '../../src/store/sqlite/sqlite-queries.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import type { AuditQuery } from '../../src/types.js';
import { tempDir } from '../helpers/temp-dir.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';
import { dropSchema, pgUrl, testSchema, withClient } from '../postgres/pg-helpers.js';

/** Entries of the big tenant: enough that a walk past them would show, few enough to be quick. */
const OTHER_ENTRIES = 50_000;

const QUERIES: AuditQuery[] = [
  { limit: 1000 },
  { afterSeq: 10, limit: 1000 },
  { scope: 'wf-1/memory', limit: 100 },
  { kind: 'commit', outcome: 'committed', limit: 100 },
];

/** A few real entries of tenant `small` between the big tenant's rows. */
async function smallTenantHistory(store: Store): Promise<void> {
  const gate = (await Fencegate.open({ store })).forTenant('small');
  const grant = await gate.acquire({ scope: 'wf-1/memory', holder: 'w1', ttlMs: 60_000 });
  await gate.commit({
    scope: 'wf-1/memory',
    fence: grant.fence,
    operationId: 'op-1',
    writes: [{ name: 'memory', expectRevision: 0, value: { n: 1 } }],
  });
}

async function expectTenantReads(store: Store): Promise<void> {
  expect((await store.readAudit('empty', { limit: 1000 })).items).toEqual([]);
  const small = await store.readAudit('small', { limit: 1000 });
  expect(small.items.map((e) => e.kind)).toEqual(['acquire', 'commit']);
  const verdict = await verifyStore(store, { tenant: 'small' });
  expect(verdict).toMatchObject({ ok: true, checked: 2 });
}

describe('audit reads by tenant on sqlite', () => {
  const dir = tempDir('fencegate-audit-tenant-');
  afterAll(() => dir.cleanup());

  it("an empty or small tenant's page searches the tenant index, past 50,000 entries of another tenant", async () => {
    const path = `${dir.path}/store.db`;
    const store = SqliteStore.open({ path });
    const raw = new Database(path);
    raw
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO audit (at, tenant, scope, kind, outcome, current_fence)
         SELECT i, 'big', 'wf-' || (i % 100), 'acquire', 'granted', i FROM n`,
      )
      .run(OTHER_ENTRIES);
    await smallTenantHistory(store);
    raw.exec('ANALYZE');

    for (const tenant of ['empty', 'small']) {
      for (const query of QUERIES) {
        const { sql, params } = sqliteAuditPage(tenant, query);
        const plan = raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[];
        const details = plan.map((step) => step.detail).join(' | ');
        expect(details, JSON.stringify(query)).toMatch(
          /SEARCH audit USING (COVERING )?INDEX audit_by_tenant \(tenant=\?/,
        );
        expect(details).not.toMatch(/SCAN audit|INTEGER PRIMARY KEY/);
      }
    }
    await expectTenantReads(store);
    raw.close();
    await store.close();
  });
});

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

describe.skipIf(skipWithoutPostgres())('audit reads by tenant on postgres', () => {
  const schema = testSchema('audit_by_tenant');
  afterAll(() => dropSchema(pgUrl(), schema));

  it("an empty or small tenant's page reads the tenant's rows only, past 50,000 entries of another tenant", async () => {
    const store = await PostgresStore.open({ url: pgUrl(), schema });
    await withClient(pgUrl(), async (client) => {
      await client.query(
        `INSERT INTO ${schema}.audit (at, tenant, scope, kind, outcome, current_fence)
         SELECT i, 'big', 'wf-' || (i % 100), 'acquire', 'granted', i
         FROM generate_series(1, $1) AS i`,
        [OTHER_ENTRIES],
      );
      await smallTenantHistory(store);
      await client.query(`ANALYZE ${schema}.audit`);
      const horizon = OTHER_ENTRIES + 10;
      for (const tenant of ['empty', 'small']) {
        for (const query of QUERIES) {
          const { text, values } = pgAuditPage(schema, tenant, query, horizon);
          const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
            `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
            values,
          );
          const nodes = planNodes(rows[0]!['QUERY PLAN'][0].Plan);
          const touched = nodes
            .filter((node) => node['Relation Name'] === 'audit')
            .reduce(
              (sum, node) =>
                sum + (node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0),
              0,
            );
          expect(touched, `${tenant} ${JSON.stringify(query)}`).toBeLessThan(10);
          expect(nodes.some((node) => node['Index Name'] === 'audit_by_tenant')).toBe(true);
        }
      }
    });
    await expectTenantReads(store);
    await store.close();
  });
});
