/**
 * PostgreSQL keeps 63 bytes of a prepared statement's name and drops the rest without a word, so
 * two statements whose names differ only beyond that would be one to the server. The store names
 * its statements after its schema, which may itself be 63 characters long: every name it sends must
 * fit, and stay distinct per schema.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';
import { dropSchema, pgUrl } from './pg-helpers.js';

const url = pgUrl();
const noPostgres = skipWithoutPostgres();
const LONGEST =
  'fgt_statement_names_' + 'x'.repeat(39) + randomBytes(2).toString('hex').slice(0, 3);
const SCHEMAS = [`${LONGEST}a`, `${LONGEST}b`];

afterAll(async () => {
  if (!noPostgres) for (const schema of SCHEMAS) await dropSchema(url, schema);
});

describe.skipIf(noPostgres)('prepared statement names', () => {
  it('fit in 63 bytes and differ between two schemas whose names share 62 characters', async () => {
    const sent = new Map<string, Set<string>>();
    // eslint-disable-next-line @typescript-eslint/unbound-method -- put back as it was, and called with its own `this`
    const query = pg.Client.prototype.query;
    let schemaNow = '';
    // Observes the names the store sends; the real driver runs every statement.
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const config = args[0] as { name?: unknown } | undefined;
      if (typeof config === 'object' && typeof config?.name === 'string') {
        const names = sent.get(schemaNow) ?? new Set<string>();
        names.add(config.name);
        sent.set(schemaNow, names);
      }
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    try {
      for (const schema of SCHEMAS) {
        schemaNow = schema;
        const gate = await Fencegate.open({ store: await PostgresStore.open({ url, schema }) });
        try {
          const grant = await gate.acquire({ scope: 'wf-1/memory', holder: 'a', ttlMs: 60_000 });
          await gate.commit({
            scope: 'wf-1/memory',
            fence: grant.fence,
            operationId: 'op-1',
            writes: [{ name: 'memory', expectRevision: 0, value: { n: 1 } }],
          });
          await gate.registerPolicy({ version: 'v2', digest: 'sha256:v2' });
          await gate.cutover({
            cutoverId: 'c1',
            toPolicy: 'v2',
            holder: 'ctl',
            scopes: ['wf-1/memory'],
          });
        } finally {
          await gate.close();
        }
      }
    } finally {
      pg.Client.prototype.query = query;
    }
    const [first, second] = SCHEMAS.map((schema) => [...(sent.get(schema) ?? [])]);
    expect(first?.length).toBeGreaterThan(2);
    for (const name of [...(first ?? []), ...(second ?? [])]) {
      expect(Buffer.byteLength(name), name).toBeLessThanOrEqual(63);
    }
    for (const name of first ?? []) expect(second).not.toContain(name);
  });
});
