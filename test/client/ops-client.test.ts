/**
 * FencegateClient's dispatch, policy, cutover, jobs and verify calls against a real server:
 * catalog errors come back as the library's FencegateError, a missing report is null, and the
 * retry rules hold when traffic is lost (a FaultProxy drops a request or a reply; the test fixes
 * the order of events): a claim is never resent, a completion, a policy registration and a
 * cutover are, and job events only when every event carries `at`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FencegateError, isFencegateError } from '../../src/client/index.js';
import type { FencegateClient } from '../../src/client/index.js';
import { startHarness, TENANT, type OpsHarness } from './harness.js';

const SCOPE = 'wf-1/memory';

let harness: OpsHarness | undefined;
afterEach(async () => {
  const current = harness;
  harness = undefined;
  await current?.close();
});

async function failure(call: Promise<unknown>): Promise<FencegateError> {
  try {
    await call;
  } catch (error) {
    if (isFencegateError(error)) return error;
    throw error;
  }
  throw new Error('expected a FencegateError');
}

/** Acquires SCOPE and commits one intent per effect key, for target crm. */
async function commitIntents(client: FencegateClient, effectKeys: string[]): Promise<void> {
  const grant = await client.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 60_000 });
  const result = await client.commit({
    scope: SCOPE,
    fence: grant.fence,
    operationId: 'op-intents',
    intents: effectKeys.map((effectKey) => ({ effectKey, target: 'crm', payload: { effectKey } })),
  });
  expect(result.outcome).toBe('committed');
}

describe('FencegateClient: dispatch, policies, cutovers, jobs, verify', () => {
  it('implements FencegateOpsApi and verify with the library errors', async () => {
    const h = (harness = await startHarness());
    const operator = h.client('operator');
    const worker = h.client('worker');

    const registered = await operator.registerPolicy({ version: 'v1', digest: 'sha256:aa' });
    expect(registered).toMatchObject({ created: true, policy: { version: 'v1' } });
    expect(await operator.registerPolicy({ version: 'v1', digest: 'sha256:aa' })).toEqual({
      ...registered,
      created: false,
    });
    const conflict = await failure(operator.registerPolicy({ version: 'v1', digest: 'other' }));
    expect(conflict).toBeInstanceOf(FencegateError);
    expect(conflict).toMatchObject({ code: 'policy_conflict', httpStatus: 409 });
    expect((await operator.listPolicies()).map((policy) => policy.version)).toEqual(['v1']);

    await commitIntents(worker, ['fx-1', 'fx-2']);
    const claimed = await worker.claimIntents({ dispatcher: 'd1', ttlMs: 5_000, limit: 10 });
    expect(claimed.map((intent) => [intent.effectKey, intent.claimFence])).toEqual([
      ['fx-1', 1],
      ['fx-2', 1],
    ]);
    expect(
      await worker.completeIntent('fx-1', {
        claimFence: 1,
        outcome: 'delivered',
        providerRef: 'r',
      }),
    ).toMatchObject({ status: 'delivered', providerRef: 'r' });
    const stale = await failure(
      worker.completeIntent('fx-1', { claimFence: 1, outcome: 'failed' }),
    );
    expect(stale).toMatchObject({ code: 'stale_claim', httpStatus: 409 });
    expect(stale.details).toEqual({ currentClaimFence: 1, status: 'delivered' });
    expect(
      (await failure(worker.completeIntent('fx-404', { claimFence: 1, outcome: 'delivered' })))
        .code,
    ).toBe('not_found');
    const invalid = await failure(worker.claimIntents({ dispatcher: 'd1', ttlMs: 5, limit: 1 }));
    expect(invalid).toMatchObject({ code: 'invalid_request', details: { field: 'ttlMs' } });

    await worker.recordJobEvents([
      { jobId: 'job-1', scope: SCOPE, policyVersion: 'v1', fence: 1, state: 'running', attempt: 1 },
    ]);
    const cutover = await operator.cutover({
      toPolicy: 'v1',
      holder: 'controller',
      scopes: [SCOPE],
    });
    expect(cutover).toMatchObject({
      toPolicy: 'v1',
      scopes: 1,
      fences: [{ scope: SCOPE, fence: 2 }],
    });
    expect(cutover.cutoverId).toMatch(/^[0-9a-f-]{36}$/);
    expect(
      await operator.cutover({
        cutoverId: cutover.cutoverId,
        toPolicy: 'v1',
        holder: 'controller',
        scopes: [SCOPE],
      }),
    ).toEqual(cutover);
    expect(
      await failure(
        operator.cutover({
          cutoverId: cutover.cutoverId,
          toPolicy: 'v1',
          holder: 'x',
          scopes: [SCOPE],
        }),
      ),
    ).toMatchObject({ code: 'operation_id_conflict', httpStatus: 422 });
    expect(
      (await failure(operator.cutover({ toPolicy: 'v9', holder: 'x', scopes: [SCOPE] }))).code,
    ).toBe('invalid_request');
    expect(await operator.cutoverReport(cutover.cutoverId)).toMatchObject({
      cutoverId: cutover.cutoverId,
      status: 'completed',
      oldJobs: { total: 1, byState: { running: 1 } },
      staleAccepted: 0,
    });
    expect(await operator.cutoverReport('co-404')).toBeNull();
    expect((await failure(operator.cutoverReport('..'))).code).toBe('invalid_request');

    const report = await operator.verify();
    expect(report).toMatchObject({ ok: true, violations: [] });
    expect(report.checked).toBeGreaterThan(5);

    for (const call of [
      () => worker.registerPolicy({ version: 'v2' }),
      () => worker.listPolicies(),
      () => worker.cutover({ toPolicy: 'v1', holder: 'c', prefix: 'wf-' }),
      () => worker.cutoverReport(cutover.cutoverId),
      () => worker.verify(),
    ]) {
      expect(await failure(call())).toMatchObject({ code: 'forbidden', httpStatus: 403 });
    }
    const audit = await h.store.readAudit(TENANT, { kind: 'cutover', limit: 100 });
    expect(audit.items).toHaveLength(1);
  });
});

describe('FencegateClient retry rules for the ops calls', () => {
  it('does not resend a claim whose reply was lost; its claims lapse and are claimed again', async () => {
    const h = (harness = await startHarness({ proxy: true }));
    const worker = h.client('worker');
    await commitIntents(worker, ['fx-1']);
    h.proxy?.inject('POST', '/v1/intents/claim', 'drop-reply');
    const lost = await failure(worker.claimIntents({ dispatcher: 'd1', ttlMs: 1_000, limit: 5 }));
    expect(lost.code).toBe('outcome_unknown');
    expect(lost.message).toContain('claimed again');
    expect(h.proxy?.log.filter((line) => line.includes('/claim'))).toEqual([
      'POST /v1/intents/claim drop-reply',
    ]);
    expect(await worker.getIntent('fx-1')).toMatchObject({
      status: 'claimed',
      claimedBy: 'd1',
      claimFence: 1,
    });
    // Nobody gets it while the lost claim holds; after it lapses, the next claim takes it.
    expect(await worker.claimIntents({ dispatcher: 'd2', ttlMs: 1_000, limit: 5 })).toEqual([]);
    h.clock.advance(1_000);
    expect(await worker.claimIntents({ dispatcher: 'd2', ttlMs: 1_000, limit: 5 })).toMatchObject([
      { effectKey: 'fx-1', claimFence: 2, attempts: 2, claimedBy: 'd2' },
    ]);
  });

  it('resends a completion whose request was lost, and records it once', async () => {
    const h = (harness = await startHarness({ proxy: true }));
    const worker = h.client('worker');
    await commitIntents(worker, ['fx-1']);
    await worker.claimIntents({ dispatcher: 'd1', ttlMs: 5_000, limit: 5 });
    h.proxy?.inject('POST', '/v1/intents/fx-1/complete', 'drop-request');
    expect(
      await worker.completeIntent('fx-1', { claimFence: 1, outcome: 'delivered' }),
    ).toMatchObject({ status: 'delivered' });
    expect(h.proxy?.log.filter((line) => line.includes('/complete'))).toEqual([
      'POST /v1/intents/fx-1/complete drop-request',
      'POST /v1/intents/fx-1/complete pass',
    ]);
  });

  it('reports stale_claim after a lost completion reply, saying the lost attempt may have recorded it', async () => {
    const h = (harness = await startHarness({ proxy: true }));
    const worker = h.client('worker');
    await commitIntents(worker, ['fx-1']);
    await worker.claimIntents({ dispatcher: 'd1', ttlMs: 5_000, limit: 5 });
    h.proxy?.inject('POST', '/v1/intents/fx-1/complete', 'drop-reply');
    const error = await failure(
      worker.completeIntent('fx-1', { claimFence: 1, outcome: 'delivered', providerRef: 'r-1' }),
    );
    expect(error).toMatchObject({
      code: 'stale_claim',
      details: { afterLostReply: true, currentClaimFence: 1, status: 'delivered' },
    });
    expect(error.message).toContain('may be the one that recorded the outcome');
    expect(await worker.getIntent('fx-1')).toMatchObject({
      status: 'delivered',
      providerRef: 'r-1',
    });
    const delivered = await h.store.readAudit(TENANT, { kind: 'intent', outcome: 'delivered' });
    expect(delivered.items).toHaveLength(1);
  });

  it('resends a completion the store answered outcome_unknown, and says so when the resend is stale_claim', async () => {
    const h = (harness = await startHarness());
    const worker = h.client('worker');
    await commitIntents(worker, ['fx-1']);
    await worker.claimIntents({ dispatcher: 'd1', ttlMs: 5_000, limit: 5 });
    // The store records the outcome, then its reply is lost: the server answers outcome_unknown.
    h.faults.inject({ method: 'completeIntent', fault: 'lose-reply' });
    const error = await failure(
      worker.completeIntent('fx-1', { claimFence: 1, outcome: 'delivered' }),
    );
    expect(error).toMatchObject({ code: 'stale_claim', details: { afterLostReply: true } });
    expect(h.faults.calls.filter((call) => call.method === 'completeIntent')).toEqual([
      { method: 'completeIntent', fault: 'lose-reply' },
      { method: 'completeIntent', fault: null },
    ]);
    expect(await worker.getIntent('fx-1')).toMatchObject({ status: 'delivered' });
  });

  it('resends a cutover whose reply was lost under the id it generated, moving each scope once', async () => {
    const h = (harness = await startHarness({ proxy: true }));
    const operator = h.client('operator');
    await operator.registerPolicy({ version: 'v2' });
    await operator.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 60_000 });
    h.proxy?.inject('POST', '/v1/cutovers', 'drop-reply');
    const result = await operator.cutover({ toPolicy: 'v2', holder: 'controller', prefix: 'wf-' });
    expect(result).toMatchObject({ scopes: 1, fences: [{ scope: SCOPE, fence: 2 }] });
    expect(h.proxy?.log.filter((line) => line.includes('/v1/cutovers'))).toEqual([
      'POST /v1/cutovers drop-reply',
      'POST /v1/cutovers pass',
    ]);
    expect(await operator.getScope(SCOPE)).toMatchObject({ fence: 2, holder: 'controller' });
    const steps = await h.store.readAudit(TENANT, { kind: 'cutover', limit: 100 });
    expect(steps.items.map((entry) => entry.reason)).toEqual([result.cutoverId]);
  });

  it('resends a policy registration whose reply was lost; created is then false', async () => {
    const h = (harness = await startHarness({ proxy: true }));
    const operator = h.client('operator');
    h.proxy?.inject('POST', '/v1/policies', 'drop-reply');
    expect(await operator.registerPolicy({ version: 'v1', digest: 'd' })).toMatchObject({
      created: false,
      policy: { version: 'v1', digest: 'd' },
    });
    expect(await operator.listPolicies()).toHaveLength(1);
  });

  it('resends job events after a lost reply only when every event carries at', async () => {
    const h = (harness = await startHarness({ proxy: true }));
    const worker = h.client('worker');
    const event = { jobId: 'job-1', scope: SCOPE, policyVersion: 'v1', fence: 1, attempt: 1 };
    h.proxy?.inject('POST', '/v1/jobs/events', 'drop-reply');
    await worker.recordJobEvents([{ ...event, state: 'running', at: h.clock.now() }]);
    h.proxy?.inject('POST', '/v1/jobs/events', 'drop-reply');
    const unknown = await failure(worker.recordJobEvents([{ ...event, state: 'succeeded' }]));
    expect(unknown.code).toBe('outcome_unknown');
    expect(h.proxy?.log).toEqual([
      'POST /v1/jobs/events drop-reply',
      'POST /v1/jobs/events pass',
      'POST /v1/jobs/events drop-reply',
    ]);
    expect(await h.store.listJobs(TENANT)).toMatchObject([{ jobId: 'job-1', state: 'succeeded' }]);
  });

  it('retries verify, policies and reports after a lost reply', async () => {
    const h = (harness = await startHarness({ proxy: true }));
    const operator = h.client('operator');
    h.proxy?.inject('GET', '/v1/verify', 'drop-reply');
    h.proxy?.inject('GET', '/v1/policies', 'drop-reply');
    h.proxy?.inject('GET', '/v1/cutovers/co-1/report', 'drop-reply');
    expect(await operator.verify()).toEqual({ ok: true, checked: 0, violations: [] });
    expect(await operator.listPolicies()).toEqual([]);
    expect(await operator.cutoverReport('co-1')).toBeNull();
    expect(h.proxy?.log).toEqual([
      'GET /v1/verify drop-reply',
      'GET /v1/verify pass',
      'GET /v1/policies drop-reply',
      'GET /v1/policies pass',
      'GET /v1/cutovers/co-1/report drop-reply',
      'GET /v1/cutovers/co-1/report pass',
    ]);
  });
});
