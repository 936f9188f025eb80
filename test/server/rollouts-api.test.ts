/**
 * The rollout routes for operators: each command answers the rollout in its schema, a command at
 * an older revision is rollout_conflict with the current revision, a worker token is forbidden,
 * an unknown rollout is not_found, an acquire may name the versions it can run, and the report
 * answers each gate's readings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RolloutReportSchema, RolloutSchema } from '../../src/server/schemas/answers.js';
import type { Rollout } from '../../src/types.js';
import {
  errorOf,
  expectError,
  expectHistoryValid,
  expectShape,
  serverFixture,
  type ServerFixture,
} from './fixture.js';

describe('the rollout routes', () => {
  let fx: ServerFixture;
  beforeAll(async () => {
    fx = await serverFixture();
    const op = fx.tokens.operatorA;
    for (const version of ['v7', 'v8']) {
      await fx.send('POST', '/v1/policies', op, { version });
    }
    for (let i = 0; i < 20; i++) {
      const scope = `wf-${i}`;
      const grant = await fx.send('POST', '/v1/leases/acquire', op, {
        scope,
        holder: 'v7',
        ttlMs: 60_000,
        policyVersion: 'v7',
      });
      const fence = grant.json<{ fence: number }>().fence;
      await fx.send('POST', '/v1/leases/release', op, { scope, holder: 'v7', fence });
    }
  });
  afterAll(async () => {
    await expectHistoryValid(fx);
    await fx.close();
  });

  it('starts, advances, reports and rolls back; an older revision is rollout_conflict', async () => {
    const op = fx.tokens.operatorA;
    const started = expectShape(
      await fx.send('POST', '/v1/rollouts', op, {
        rolloutId: 'r1',
        fromPolicy: 'v7',
        toPolicy: 'v8',
        prefix: 'wf-',
        steps: [25, 50],
      }),
      200,
      RolloutSchema,
    ) as Rollout;
    expect(started).toMatchObject({ status: 'running', percent: 25, revision: 1 });
    const advanced = expectShape(
      await fx.send('POST', '/v1/rollouts/r1/advance', op, { revision: 1 }),
      200,
      RolloutSchema,
    ) as Rollout;
    expect(advanced).toMatchObject({ percent: 50, revision: 2 });
    const stale = await fx.send('POST', '/v1/rollouts/r1/pause', op, { revision: 1 });
    expectError(stale, 'rollout_conflict');
    expect(errorOf(stale).details).toMatchObject({ status: 'running', revision: 2 });
    const list = await fx.send('GET', '/v1/rollouts?status=running', op);
    expect(list.json<{ items: Rollout[] }>().items.map((r) => r.rolloutId)).toEqual(['r1']);
    expectShape(await fx.send('GET', '/v1/rollouts/r1', op), 200, RolloutSchema);
    const back = expectShape(
      await fx.send('POST', '/v1/rollouts/r1/rollback', op, { cancelIntents: true }),
      200,
      RolloutSchema,
    ) as Rollout;
    expect(back.status).toBe('rolled_back');
    const report = expectShape(
      await fx.send('GET', '/v1/rollouts/r1/report', op),
      200,
      RolloutReportSchema,
    );
    expect(report).toMatchObject({ rollback: { staleAccepted: 0 } });
    // Each step and the rollback say when they ran, in order: the dashboard's chart is drawn
    // from these.
    const { steps, rollback } = report as {
      steps: { startedAt: number; completedAt: number | null }[];
      rollback: { startedAt: number; completedAt: number | null };
    };
    const times = [...steps, rollback].flatMap((part) => [part.startedAt, part.completedAt]);
    expect(times.every((time) => typeof time === 'number')).toBe(true);
    expect(times).toEqual([...times].sort((a, b) => a! - b!));
    expect(times[0]).toBeGreaterThanOrEqual(started.startedAt);
  });

  it('answers not_found, forbidden and invalid_request with what to fix', async () => {
    expectError(await fx.send('GET', '/v1/rollouts/nope', fx.tokens.operatorA), 'not_found');
    expectError(
      await fx.send('POST', '/v1/rollouts/nope/advance', fx.tokens.operatorA, {}),
      'not_found',
    );
    expectError(await fx.send('GET', '/v1/rollouts', fx.tokens.workerA), 'forbidden');
    const bad = await fx.send('POST', '/v1/rollouts', fx.tokens.operatorA, {
      fromPolicy: 'v7',
      toPolicy: 'v8',
      prefix: 'x-',
      steps: [50, 10],
    });
    expectError(bad, 'invalid_request');
    expect(errorOf(bad).message).toContain('steps must increase');
  });

  it('an acquire names the versions it can run; the grant says which applies', async () => {
    const grant = await fx.send('POST', '/v1/leases/acquire', fx.tokens.workerA, {
      scope: 'fresh-1',
      holder: 'w',
      ttlMs: 60_000,
      policyVersions: ['v8', 'v7'],
    });
    expect(grant.json()).toMatchObject({ policyVersion: 'v8' });
  });

  it("reports each gate's readings of the current step, in the report's schema", async () => {
    const op = fx.tokens.operatorA;
    expectShape(
      await fx.send('POST', '/v1/rollouts', op, {
        rolloutId: 'held',
        fromPolicy: 'v7',
        toPolicy: 'v8',
        prefix: 'wf-1',
        steps: [25, 50],
        holdSeconds: 600,
        gates: [
          { name: 'jobs', metric: 'job_failure_ratio', minSamples: 5, max: 0.5 },
          { name: 'verify', metric: 'verify_violations', minSamples: 1 },
        ],
      }),
      200,
      RolloutSchema,
    );
    // Two looks of a driver, written through the store as the driver writes them.
    const driver = await fx.store.claimRolloutDriver('tenant-a', 'held', 'server-a', 60_000);
    const claim = { holder: 'server-a', fence: driver!.fence };
    const reading = (at: number, value: number) => ({
      verdict: 'pending' as const,
      value,
      baseline: null,
      samples: 6,
      baselineSamples: 0,
      limit: 0.5,
      pValue: null,
      at,
    });
    for (const [at, value] of [
      [1000, 0.1],
      [2000, 0.25],
    ] as const) {
      await fx.store.recordRolloutGates('tenant-a', 'held', claim, 1, [
        { name: 'jobs', ...reading(at, value) },
      ]);
    }
    const report = expectShape(
      await fx.send('GET', '/v1/rollouts/held/report', op),
      200,
      RolloutReportSchema,
    );
    expect(report).toMatchObject({
      gateSeries: [
        { name: 'jobs', readings: [reading(1000, 0.1), reading(2000, 0.25)] },
        { name: 'verify', readings: [] },
      ],
    });
  });
});
