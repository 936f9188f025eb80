/**
 * A cutover's row loads without its list on PostgreSQL: the list of a cutover over 100,000 scopes
 * is 2 MB, and it came with every load of the row (each chunk after the process's row cache was
 * emptied, and every failed apply that answered the rows it locked), though plans read a list
 * built in pages a page at a time. A cutover given its list at the start still moves it whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';
import { dropSchema, pgUrl, testSchema, withClient } from './pg-helpers.js';

const noPostgres = skipWithoutPostgres();
const schema = testSchema('cutover_row_load');
let url: string;
let gate: Fencegate;

beforeAll(async () => {
  if (noPostgres) return;
  url = pgUrl();
  gate = await Fencegate.open({ store: await PostgresStore.open({ url, schema }) });
  await gate.registerPolicy({ version: 'v8' });
  for (let i = 0; i < 30; i++) {
    await gate.acquire({ scope: `wf-${String(i).padStart(2, '0')}`, holder: 'w', ttlMs: 60_000 });
  }
});

afterAll(async () => {
  if (noPostgres) return;
  await gate.close();
  await dropSchema(url, schema);
});

/** The cutover's row as the store's row loader answers it. */
async function loadedRow(cutoverId: string): Promise<Record<string, unknown>> {
  return await withClient(url, async (client) => {
    const answer = await client.query<{ rows: { cutover: Record<string, unknown>[] } }>(
      `SELECT ${schema}.load_rows($1, $2) AS rows`,
      [gate.tenant, JSON.stringify({ cutover: [{ cutover_id: cutoverId }] })],
    );
    const [row] = answer.rows[0]!.rows.cutover;
    if (row === undefined) throw new Error(`no cutover ${cutoverId}`);
    return row;
  });
}

describe.skipIf(noPostgres)("PostgreSQL: a cutover's row and its list", () => {
  it('loads a cutover over a prefix without its list', async () => {
    const result = await gate.cutover({
      cutoverId: 'by-prefix',
      toPolicy: 'v8',
      holder: 'controller',
      prefix: 'wf-',
    });
    expect(result.scopes).toBe(30);
    const row = await loadedRow('by-prefix');
    expect(row.cutover_id).toBe('by-prefix');
    expect(row).not.toHaveProperty('scopes');
  });

  it('moves a list given at the start, from a handle that never saw the cutover', async () => {
    const scopes = ['wf-03', 'wf-01', 'new-scope'];
    const request = { cutoverId: 'by-list', toPolicy: 'v8', holder: 'controller', scopes };
    await gate.store.startCutover(gate.tenant, request);
    const other = await Fencegate.open({ store: await PostgresStore.open({ url, schema }) });
    try {
      const result = await other.cutover(request);
      expect(result.fences.map((entry) => entry.scope).sort()).toEqual([...scopes].sort());
    } finally {
      await other.close();
    }
    expect(await loadedRow('by-list')).not.toHaveProperty('scopes');
  });
});
