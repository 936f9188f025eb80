/**
 * A driver look that takes longer than the driver lease (an external source slow to answer, a
 * long first replay of a tenant's history): the driver keeps its lease while it looks, so what the
 * look found is recorded and acted on. A gate over its limit rolls the rollout back; it is not
 * left running at its step with its readings refused, look after look.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fencegate } from '../../src/gate.js';
import { RolloutDriver } from '../../src/rollout/driver.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { memoryGate } from '../helpers/memory-store.js';

const LEASE_MS = 1000;

describe('a driver look longer than its lease', () => {
  let clock: ManualClock;
  let gate: Fencegate;

  beforeAll(async () => {
    clock = new ManualClock();
    gate = await memoryGate({ clock, metricSources: { slow: {} } });
    await gate.registerPolicy({ version: 'v7' });
    await gate.registerPolicy({ version: 'v8' });
    for (let i = 0; i < 8; i++) {
      const scope = `wf-${i}`;
      const grant = await gate.acquire({ scope, holder: 'v7', ttlMs: 60_000, policyVersion: 'v7' });
      await gate.release({ scope, holder: 'v7', fence: grant.fence });
    }
  });
  afterAll(async () => {
    await gate.close();
  });

  it('still records its readings and rolls back on a gate over its limit', async () => {
    await gate.rollouts.start({
      rolloutId: 'r',
      fromPolicy: 'v7',
      toPolicy: 'v8',
      prefix: 'wf-',
      steps: [50, 100],
      holdSeconds: 60,
      gates: [
        { name: 'jobs', metric: 'job_failure_ratio', minSamples: 2, max: 0.2 },
        { name: 'ext', metric: 'external', source: 'slow', minSamples: 1, max: 1 },
      ],
    });
    const moved = (await gate.listScopes({ prefix: 'wf-', limit: 100 })).items.filter(
      (scope) => scope.policyVersion === 'v8',
    );
    for (const [i, scope] of moved.slice(0, 2).entries()) {
      await gate.recordJobEvents([
        {
          jobId: `j${i}`,
          scope: scope.scope,
          policyVersion: 'v8',
          fence: scope.fence,
          state: 'failed',
          attempt: 1,
        },
      ]);
    }
    const errors: unknown[] = [];
    const driver = new RolloutDriver({
      store: gate.store,
      holder: 'server-a',
      leaseMs: LEASE_MS,
      // The source answers nothing, after longer than the driver's lease.
      readSource: () => {
        clock.advance(LEASE_MS + 500);
        return Promise.resolve(null);
      },
      onError: (error) => errors.push(error),
    });
    clock.advance(1000);
    await driver.tick();
    expect(errors).toEqual([]);
    const rollout = await gate.rollouts.get('r');
    expect(rollout?.gateResults[0]).toMatchObject({ name: 'jobs', verdict: 'fail' });
    expect(rollout).toMatchObject({ status: 'rolled_back' });
  });
});
