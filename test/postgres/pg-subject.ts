/**
 * Conformance and model subjects on PostgreSQL: one schema per test file, emptied for every
 * subject (a fresh store without migrating again), a manual store clock passed to the store, and
 * `connectAgain` opening a second pool on the same schema.
 */
import { afterAll } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { ConformanceSubject } from '../../src/testing/vitest/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { dropSchema, pgUrl, testSchema, truncateSchema } from './pg-helpers.js';

export interface PostgresSubject extends ConformanceSubject {
  clock: ManualClock;
  gate: Fencegate;
  store: PostgresStore;
  dispose(): Promise<void>;
}

/**
 * Subject factory for one test file; registers an afterAll that drops the schema. Call at the top
 * level of the file.
 */
export function postgresSubjects(label: string): {
  createStore: () => Promise<PostgresSubject>;
  destroyStore: (subject: ConformanceSubject) => Promise<void>;
} {
  const schema = testSchema(label);
  let migrated = false;
  afterAll(async () => {
    if (migrated) await dropSchema(pgUrl(), schema);
  });
  return {
    createStore: async () => {
      const url = pgUrl();
      if (migrated) await truncateSchema(url, schema);
      const clock = new ManualClock();
      const store = await PostgresStore.open({ url, schema, clock, pool: { max: 4 } });
      migrated = true;
      const gate = await Fencegate.open({ store });
      const extra: Fencegate[] = [];
      return {
        clock,
        gate,
        ops: gate,
        store,
        other: gate.forTenant('other'),
        advanceClock: (ms: number) => {
          clock.advance(ms);
          return Promise.resolve();
        },
        connectAgain: async () => {
          const again = await Fencegate.open({
            store: await PostgresStore.open({ url, schema, clock, pool: { max: 4 } }),
          });
          extra.push(again);
          return again;
        },
        async dispose() {
          for (const handle of extra) await handle.close();
          await gate.close();
        },
      };
    },
    destroyStore: async (subject: ConformanceSubject) => {
      await (subject as PostgresSubject).dispose();
    },
  };
}
