/**
 * LangGraph's own conformance suite for checkpoint savers
 * (@langchain/langgraph-checkpoint-validation, called through its `validate`) against
 * FencedCheckpointSaver on the in-memory reference store: the saver sits above the store, and the
 * conformance suite proves each store under it. The suite reuses fixed thread ids across
 * checkpointers, so each checkpointer gets a tenant of its own: a store namespace nothing else has
 * written. After each one, verify replays that tenant's audit log.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Fencegate } from '../../src/gate.js';
import { FencedCheckpointSaver } from '../../src/integrations/langgraph/index.js';
import { memoryGate } from '../helpers/memory-store.js';

// The suite's spec files use vitest's globals; this project's config does not turn them on.
Object.assign(globalThis, { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach });
const { validate } = await import('@langchain/langgraph-checkpoint-validation');

let root: Fencegate;
let tenants = 0;
const gates = new WeakMap<FencedCheckpointSaver, Fencegate>();
validate<FencedCheckpointSaver>({
  checkpointerName: 'FencedCheckpointSaver',
  async beforeAll() {
    root = await memoryGate();
  },
  async afterAll() {
    await root.close();
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
