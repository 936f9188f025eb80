/**
 * A process that never saw a row plans on a guess that it is absent, and the apply step corrects
 * it. Some plans cannot even be made on a wrong guess: a cutover chunk refuses to plan without its
 * cutover row. A second store on the same schema (another process, a cache that forgot) must then
 * read the rows it guessed and plan again, never answer an internal error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { dropSchema, pgUrl, testSchema } from './pg-helpers.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';

const noPostgres = skipWithoutPostgres();
const schema = testSchema('cold_cache');
let url: string;
let first: PostgresStore;
let second: PostgresStore;

beforeAll(async () => {
  url = pgUrl();
  first = await PostgresStore.open({ url, schema });
  second = await PostgresStore.open({ url, schema });
});

afterAll(async () => {
  await first?.close();
  await second?.close();
  await dropSchema(url, schema);
});

describe.skipIf(noPostgres)('a store that never saw the rows it plans on', () => {
  it('moves a cutover another process started: it reads the cutover row it guessed absent', async () => {
    const scopes = ['wf-1/memory', 'wf-2/memory', 'wf-3/memory'];
    await first.registerPolicy('default', { version: 'v8' }, null);
    for (const scope of scopes) {
      await first.acquire('default', { scope, holder: 'worker', ttlMs: 60_000 });
    }
    await first.startCutover('default', {
      cutoverId: 'cold-1',
      toPolicy: 'v8',
      holder: 'controller',
      scopes,
    });
    expect(await second.moveCutoverChunk('default', 'cold-1')).toBe(3);
    const cutover = await second.getCutover('default', 'cold-1');
    expect(cutover?.fences.map((f) => f.scope)).toEqual(scopes);
    for (const scope of scopes) {
      expect((await first.getScope('default', scope))?.policyVersion).toBe('v8');
    }
  });
});
