/**
 * LangGraph's own conformance suite for checkpoint savers
 * (@langchain/langgraph-checkpoint-validation, called through its `validate`) against
 * FencedCheckpointSaver on SQLite and on PostgreSQL. The suite reuses fixed thread ids across
 * checkpointers, so each checkpointer gets a tenant of its own: a store namespace nothing else
 * has written. After each one, verify replays that tenant's audit log.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { FencedCheckpointSaver } from '../../src/integrations/langgraph/index.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { tempDir } from '../helpers/temp-dir.js';
import { dropSchema, pgUrl, testSchema } from '../postgres/pg-helpers.js';

// The suite's spec files use vitest's globals; this project's config does not turn them on.
Object.assign(globalThis, { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach });
const { validate } = await import('@langchain/langgraph-checkpoint-validation');

interface Backend {
  name: string;
  open(): Promise<Fencegate>;
  cleanup(): Promise<void>;
}

const dir = tempDir('fencegate-langgraph-');
const schema = testSchema('langgraph_validation');

const backends: Backend[] = [
  {
    name: 'sqlite',
    open: () => Fencegate.open({ store: `sqlite:${dir.path}/langgraph.db` }),
    cleanup: () => Promise.resolve(dir.cleanup()),
  },
  {
    name: 'postgres',
    open: async () =>
      Fencegate.open({
        store: await PostgresStore.open({ url: pgUrl(), schema, pool: { max: 4 } }),
      }),
    cleanup: () => dropSchema(pgUrl(), schema),
  },
];

for (const backend of backends) {
  let root: Fencegate;
  let tenants = 0;
  const gates = new WeakMap<FencedCheckpointSaver, Fencegate>();
  validate<FencedCheckpointSaver>({
    checkpointerName: `FencedCheckpointSaver on ${backend.name}`,
    async beforeAll() {
      root = await backend.open();
    },
    async afterAll() {
      await root.close();
      await backend.cleanup();
    },
    createCheckpointer() {
      tenants += 1;
      const gate = root.forTenant(`lg-${tenants}`);
      const saver = new FencedCheckpointSaver({ gate, holder: 'validation-run' });
      gates.set(saver, gate);
      return saver;
    },
    async destroyCheckpointer(saver) {
      await saver.close();
      const report = await gates.get(saver)?.verify();
      expect(report?.violations).toEqual([]);
    },
  });
}
