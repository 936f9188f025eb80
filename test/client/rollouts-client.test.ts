/**
 * FencegateClient.rollouts after a lost reply (a FaultProxy drops it; the test fixes the order of
 * events), by each route's retry class: a start is resent under the rolloutId the client
 * generated, a step command is never resent (outcome_unknown; the revision says it applied), a
 * rollback is resent and resumes. A missing rollout reads as null.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFencegateError, type FencegateClient } from '../../src/client/index.js';
import { startHarness, type OpsHarness } from './harness.js';

let h: OpsHarness;
let operator: FencegateClient;

beforeAll(async () => {
  h = await startHarness({ proxy: true });
  operator = h.client('operator');
  await operator.registerPolicy({ version: 'v7' });
  await operator.registerPolicy({ version: 'v8' });
  for (let i = 0; i < 10; i++) {
    const scope = `wf-${i}/memory`;
    const grant = await operator.acquire({
      scope,
      holder: 'v7',
      ttlMs: 60_000,
      policyVersion: 'v7',
    });
    await operator.release({ scope, holder: 'v7', fence: grant.fence });
  }
});

afterAll(async () => {
  await h.close();
});

/** Drops the reply of the next POST to `path`; the proxy's log starts again from here. */
function loseReply(path: string): void {
  h.proxy!.log.length = 0;
  h.proxy!.inject('POST', path, 'drop-reply');
}

/** What went through the proxy to the rollout routes since loseReply. */
function rolloutTraffic(): string[] {
  return h.proxy!.log.filter((line) => line.includes('/v1/rollouts'));
}

describe('FencegateClient.rollouts after a lost reply', () => {
  it('resends a start and a rollback, never an advance', async () => {
    loseReply('/v1/rollouts');
    const started = await operator.rollouts.start({
      fromPolicy: 'v7',
      toPolicy: 'v8',
      prefix: 'wf-',
      steps: [30, 60, 100],
    });
    expect(rolloutTraffic()).toEqual(['POST /v1/rollouts drop-reply', 'POST /v1/rollouts pass']);
    // The resend was the same rollout: one rollout, at its first step.
    expect(started).toMatchObject({ status: 'running', step: 1, revision: 1 });
    expect((await operator.rollouts.list()).map((r) => r.rolloutId)).toEqual([started.rolloutId]);
    const { rolloutId } = started;

    loseReply(`/v1/rollouts/${rolloutId}/advance`);
    const error = await operator.rollouts.advance({ rolloutId }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(isFencegateError(error) && error.code).toBe('outcome_unknown');
    expect(rolloutTraffic()).toEqual([`POST /v1/rollouts/${rolloutId}/advance drop-reply`]);
    // It had applied: one step, not two.
    expect(await operator.rollouts.get(rolloutId)).toMatchObject({ step: 2, revision: 2 });

    loseReply(`/v1/rollouts/${rolloutId}/rollback`);
    const rolledBack = await operator.rollouts.rollback({ rolloutId, revision: 2 });
    expect(rolloutTraffic()).toEqual([
      `POST /v1/rollouts/${rolloutId}/rollback drop-reply`,
      `POST /v1/rollouts/${rolloutId}/rollback pass`,
    ]);
    expect(rolledBack).toMatchObject({ status: 'rolled_back', cutoverDone: true });
    const report = await operator.rollouts.report(rolloutId);
    expect(report?.rollback).toMatchObject({ status: 'completed', staleAccepted: 0 });
    expect(report?.rollback?.moved).toBe(report?.steps.reduce((sum, s) => sum + s.moved, 0));
  });

  it('reads a missing rollout and its report as null', async () => {
    expect(await operator.rollouts.get('no-such')).toBeNull();
    expect(await operator.rollouts.report('no-such')).toBeNull();
  });
});
