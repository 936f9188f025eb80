/**
 * A rollout's holds, gates and failure action (docs/rollout.md, "Holds and gates"), stored with
 * the rollout on every store, and the driver lease in store time (one holder at a time, a new
 * holder raises the fence, a lost driver changes nothing).
 */
import { describe, expect, it } from 'vitest';
import type { RolloutsApi } from '../../rollout/rollouts.js';
import type { RolloutGate, StartRolloutRequest } from '../../types.js';
import { expectFailure } from './helpers.js';
import type { ConformanceGate, SubjectFixture } from './subject.js';

const GATES: RolloutGate[] = [
  { name: 'jobs', metric: 'job_failure_ratio', minSamples: 20, confidence: 0.95 },
  { name: 'stale', metric: 'rejection_ratio', code: 'stale_revision', minSamples: 5, maxRatio: 2 },
  { name: 'unknown', metric: 'unknown_intent_ratio', minSamples: 10, max: 0.01 },
  { name: 'verify', metric: 'verify_violations', minSamples: 1 },
];

const HELD: StartRolloutRequest = {
  rolloutId: 'held',
  fromPolicy: 'v7',
  toPolicy: 'v8',
  prefix: 'wf-',
  steps: [10, 50, 100],
  holdSeconds: [60, 120, 0],
  holdExtensionSeconds: 30,
  gates: GATES,
  onFailure: 'pause',
};

async function registered(gate: ConformanceGate): Promise<RolloutsApi> {
  await gate.registerPolicy({ version: 'v7' });
  await gate.registerPolicy({ version: 'v8' });
  const grant = await gate.acquire({
    scope: 'wf-1',
    holder: 'w',
    ttlMs: 60_000,
    policyVersion: 'v7',
  });
  await gate.release({ scope: 'wf-1', holder: 'w', fence: grant.fence });
  if (gate.rollouts === undefined) throw new Error('the rollout cases need gate.rollouts');
  return gate.rollouts;
}

export function rolloutHoldCases(fx: SubjectFixture): void {
  describe.skipIf(!fx.capabilities.rollouts)('rollout holds and gates', () => {
    it('stores the holds, gates and failure action with the rollout; the same start resumes it, other gates are another rollout', async () => {
      const rollouts = await registered(fx.subject.gate);
      const started = await rollouts.start(HELD);
      const stored = {
        holdSeconds: [60, 120, 0],
        holdExtensionSeconds: 30,
        gates: GATES,
        onFailure: 'pause',
        gateResults: [],
      };
      expect(started).toMatchObject({ status: 'running', step: 1, ...stored });
      expect(await rollouts.get('held')).toMatchObject(stored);
      expect(await rollouts.start(HELD)).toEqual(started);
      await expectFailure(
        rollouts.start({ ...HELD, gates: [{ ...GATES[0]!, minSamples: 21 }] }),
        'operation_id_conflict',
      );
      // One hold stands for every step; without holds the rollout is the operator's to advance.
      const single = await rollouts.start({
        ...HELD,
        rolloutId: 'one',
        prefix: 'other-',
        holdSeconds: 5,
        gates: [],
      });
      expect(single).toMatchObject({ holdSeconds: [5, 5, 5], onFailure: 'pause', gates: [] });
      const manual = await rollouts.start({
        ...HELD,
        rolloutId: 'manual',
        prefix: 'x-',
        holdSeconds: undefined,
        holdExtensionSeconds: undefined,
        gates: undefined,
        onFailure: undefined,
      });
      expect(manual).toMatchObject({
        holdSeconds: null,
        holdExtensionSeconds: null,
        gates: [],
        onFailure: 'rollback',
      });
    });

    it('refuses a bad hold or gate with invalid_request naming the field, and starts nothing', async () => {
      const rollouts = await registered(fx.subject.gate);
      const bad: [Partial<StartRolloutRequest>, string][] = [
        [{ holdSeconds: [60, 60] }, 'holdSeconds'],
        [{ holdSeconds: -1 }, 'holdSeconds'],
        [{ holdSeconds: undefined, holdExtensionSeconds: undefined }, 'gates'],
        [{ gates: [{ ...GATES[0]!, confidence: 1.5 }] }, 'gates[0].confidence'],
        [{ gates: [{ ...GATES[0]!, max: 0.1 }] }, 'gates[0]'],
        [{ gates: [{ ...GATES[2]!, max: 2 }] }, 'gates[0].max'],
        [{ gates: [{ ...GATES[3]!, max: 0 }] }, 'gates[0].max'],
        [{ gates: [{ ...GATES[0]!, minSamples: 0 }] }, 'gates[0].minSamples'],
        [{ gates: [GATES[0]!, GATES[0]!] }, 'gates[1].name'],
        [
          {
            gates: [
              { name: 'e', metric: 'external', source: 'errors', minSamples: 1, maxRatio: 2 },
            ],
          },
          'gates[0].maxRatio',
        ],
        [
          { gates: [{ name: 'e', metric: 'external', source: 'nowhere', minSamples: 1, max: 2 }] },
          'gates[0].source',
        ],
        [{ gates: [{ ...GATES[1]!, code: 'not_a_code' as never }] }, 'gates[0].code'],
        [{ onFailure: 'retry' as never }, 'onFailure'],
      ];
      for (const [fields, field] of bad) {
        const error = await expectFailure(
          rollouts.start({ ...HELD, gates: [...GATES], ...fields }),
          'invalid_request',
        );
        expect(error.details.field).toBe(field);
      }
      expect(await rollouts.list()).toEqual([]);
    });

    it.skipIf(!fx.capabilities.storeInProcess)(
      'the driver lease: one holder at a time in store time, a new holder raises the fence, a lost driver changes nothing',
      async () => {
        const rollouts = await registered(fx.subject.gate);
        const { store, tenant } = fx.subject.store!;
        const started = await rollouts.start(HELD);
        const first = await store.claimRolloutDriver(tenant, 'held', 'server-a', 10_000);
        expect(first).toMatchObject({ holder: 'server-a', fence: 1 });
        expect(await store.claimRolloutDriver(tenant, 'held', 'server-b', 10_000)).toBeNull();
        await fx.subject.advanceClock(5_000);
        expect(await store.claimRolloutDriver(tenant, 'held', 'server-a', 10_000)).toMatchObject({
          holder: 'server-a',
          fence: 1,
        });
        await fx.subject.advanceClock(11_000);
        const second = await store.claimRolloutDriver(tenant, 'held', 'server-b', 10_000);
        expect(second).toMatchObject({ holder: 'server-b', fence: 2 });
        // server-a's lease ran out: its change and its readings are refused, and nothing moves.
        const lost = { holder: 'server-a', fence: 1 };
        await expectFailure(
          store.changeRollout(tenant, {
            action: 'pause',
            rolloutId: 'held',
            revision: started.revision,
            driver: lost,
          }),
          'rollout_conflict',
        );
        await expectFailure(
          store.recordRolloutGates(tenant, 'held', lost, 1, []),
          'rollout_conflict',
        );
        expect(await rollouts.get('held')).toMatchObject({
          status: 'running',
          revision: started.revision,
        });
        const reading = {
          name: 'jobs',
          verdict: 'pending' as const,
          value: null,
          baseline: null,
          samples: 3,
          baselineSamples: 4,
          limit: null,
          pValue: null,
          at: 1,
        };
        await store.recordRolloutGates(tenant, 'held', { holder: 'server-b', fence: 2 }, 1, [
          reading,
        ]);
        expect((await rollouts.get('held'))?.gateResults).toEqual([reading]);
        // Each look's readings join the step's series, which a renewal of the lease keeps.
        await store.claimRolloutDriver(tenant, 'held', 'server-b', 10_000);
        await store.recordRolloutGates(tenant, 'held', { holder: 'server-b', fence: 2 }, 1, [
          { ...reading, samples: 5, at: 2 },
        ]);
        const { gateSeries } = (await rollouts.report('held'))!;
        expect(gateSeries.map((series) => series.readings.map((r) => [r.at, r.samples]))).toEqual([
          [
            [1, 3],
            [2, 5],
          ],
          [],
          [],
          [],
        ]);
        expect(gateSeries.map((series) => series.name)).toEqual(GATES.map((gate) => gate.name));
        const paused = await store.changeRollout(tenant, {
          action: 'pause',
          rolloutId: 'held',
          revision: started.revision,
          driver: { holder: 'server-b', fence: 2 },
          reason: 'gate jobs failed',
        });
        expect(paused).toMatchObject({ status: 'paused', reason: 'gate jobs failed' });
      },
    );
  });
}
