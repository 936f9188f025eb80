/**
 * The tables of the plan rows are described once (src/store/postgres/postgres-tables.ts) and the
 * apply step, the read column lists and the row mapping are made from that description; the
 * tables themselves are made by the schema's versions, whose texts never change. The description
 * must name exactly the columns a migrated schema has, with their types.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { TABLES } from '../../src/store/postgres/postgres-tables.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';
import { dropSchema, pgUrl, testSchema, withClient } from './pg-helpers.js';

describe.skipIf(skipWithoutPostgres())('the PostgreSQL table description', () => {
  const schema = testSchema('table_description');
  beforeAll(async () => {
    const url = new URL(pgUrl());
    url.searchParams.set('schema', schema);
    await (await PostgresStore.open({ url: url.toString() })).close();
  });
  afterAll(() => dropSchema(pgUrl(), schema));

  it.each(TABLES.map((t) => [t.table, t] as const))(
    'names every column of %s with its type',
    async (table, shape) => {
      const { rows } = await withClient(pgUrl(), (client) =>
        client.query<{ name: string; type: string }>(
          `SELECT column_name AS name, data_type AS type FROM information_schema.columns
           WHERE table_schema = $1 AND table_name = $2 ORDER BY column_name`,
          [schema, table],
        ),
      );
      const described = [
        ['tenant', 'text'],
        ['row_version', 'bigint'],
        ...shape.keys,
        ...shape.columns,
      ]
        .map(([name, type]) => ({ name, type }))
        .sort((a, b) => (a.name < b.name ? -1 : 1));
      expect(rows).toEqual(described);
    },
  );
});
