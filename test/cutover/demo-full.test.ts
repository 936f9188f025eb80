/**
 * The incident demo at its full default size (10,000 workflows, 600 jobs) on one store with
 * group commit (the first of the test list). It stays on a store of the list, not the in-memory
 * one, though the demo sits above the store: at this size its checks page through 10,000 scopes
 * and their audit log and its concurrent commits go through group commit, which is the store's
 * paging and batching at the size `fencegate demo` runs (B1 in acceptance.test.ts runs the demo
 * at 1,000 workflows on the in-memory store). How long it takes is a benchmark's question
 * (`npm run demo` prints it; BENCHMARKS.md has the figures), not a timed assertion here.
 */
import { describe, expect, it } from 'vitest';
import { runIncidentDemo } from '../../src/demo/incident.js';
import { Fencegate } from '../../src/gate.js';
import { ONE_STORE, storesFor } from '../helpers/stores.js';

describe.each(ONE_STORE)('incident demo at full size on $name', (kind) => {
  const stores = storesFor(kind, 'cutover_demo_full');

  it('10,000 workflows, 600 v7 jobs: every invariant holds', { timeout: 60_000 }, async () => {
    const { store } = await stores.open({ groupCommit: true });
    const gate = await Fencegate.open({ store, tenant: 'demo' });
    const result = await runIncidentDemo({ gate });
    await gate.close();

    expect(result.invariants.filter((i) => !i.ok)).toEqual([]);
    expect(result.plan).toMatchObject({
      running: 80,
      reserved: 120,
      queued: 400,
      resumed: 30,
      delayed: 100,
    });
    expect(result.jobsAtCutover).toMatchObject({ running: 80, reserved: 120, queued: 400 });
    expect(result.store.resumed).toEqual({ attempted: 30, accepted: 0, rejected: 30 });
    expect(result.store.delayed).toEqual({ attempted: 100, accepted: 0, rejected: 100 });
    expect(result.report).toMatchObject({
      scopes: 600,
      staleAttempts: 130,
      staleAccepted: 0,
      liveCommits: 600,
    });
    expect(result.store.unaffected).toEqual({ untouched: 9400, total: 9400 });
  });
});
