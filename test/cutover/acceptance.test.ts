/**
 * ACCEPTANCE.md B1-B5 (policy cutover) on the in-memory reference store (the conformance suite
 * runs the cutover cases on every store). Each case drives a controlled interleaving (the
 * stale worker reads and computes, the cutover commits, then the worker resumes) and inspects the
 * store's records, scopes, audit log and report, not what a worker saw.
 */
import { expect, it } from 'vitest';
import { runIncidentDemo } from '../../src/demo/incident.js';
import { planIncident, v7OperationId } from '../../src/demo/plan.js';
import type { CommitRequest } from '../../src/types.js';
import {
  codeOf,
  countBy,
  createWorkflows,
  HOUR,
  openGate,
  readAudit,
  registerPolicies,
  rejectionCode,
} from './cutover-helpers.js';

it('B1: the incident at 1,000 workflows and 60 jobs: no resumed v7 job lands, v8 commits everywhere', async () => {
  const { gate, close } = await openGate();
  const seed = 11;
  const result = await runIncidentDemo({ gate, workflows: 1000, jobs: 60, seed });
  const plan = planIncident(seed, 1000, 60);
  expect(result.invariants.filter((i) => !i.ok)).toEqual([]);

  // The jobs as the cutover found them: the incident's proportions.
  expect(result.jobsAtCutover).toMatchObject({ running: 8, reserved: 12, queued: 40 });
  // Every resumed v7 job's stored outcome is a stale_fence rejection.
  expect(plan.resumed).toHaveLength(3);
  for (const job of plan.resumed) {
    const stored = await gate.getOperation(v7OperationId(job.workflow));
    expect(stored?.outcome).toBe('rejected');
    expect(stored === null ? null : rejectionCode(stored)).toBe('stale_fence');
  }
  // v8's controller committed on every affected scope; no v7 write landed anywhere.
  const commits = await readAudit(gate, { kind: 'commit', outcome: 'committed' });
  const v8 = commits.filter((e) => e.policyVersion === 'v8');
  expect(new Set(v8.map((e) => e.scope))).toEqual(new Set(plan.jobs.map((j) => j.scope)));
  expect(v8.every((e) => e.holder === 'controller-v8')).toBe(true);
  expect(commits.filter((e) => e.operationId?.startsWith('compact-v7-'))).toEqual([]);
  const report = await gate.cutoverReport(plan.cutoverId);
  expect(report).toMatchObject({
    status: 'completed',
    scopes: 60,
    staleAccepted: 0,
    staleAttempts: plan.resumed.length + plan.delayed.length,
    oldJobs: { total: 60 },
  });
  await close();
});

it('B2: 100 delayed old-generation commits after the cutover: 0 accepted; live writes once', async () => {
  const { gate, close } = await openGate();
  await registerPolicies(gate);
  const scopes = await createWorkflows(gate, 100);
  // The v7 workers hold their leases, read revision 1 and compute a candidate, then stall.
  const stalled: CommitRequest[] = [];
  for (const [i, scope] of scopes.entries()) {
    const grant = await gate.acquire({
      scope,
      holder: `v7-w${i % 8}`,
      ttlMs: HOUR,
      policyVersion: 'v7',
    });
    const record = await gate.getRecord(scope, 'memory');
    stalled.push({
      scope,
      fence: grant.fence,
      operationId: `v7-${scope}`,
      policyVersion: 'v7',
      writes: [{ name: 'memory', expectRevision: record.revision, value: { facts: [] } }],
    });
  }
  const cutover = await gate.cutover({
    cutoverId: 'b2',
    toPolicy: 'v8',
    holder: 'controller-v8',
    scopes,
  });
  // The live generation writes each scope; a third of the commits lose their answer and are
  // retried under the same operationId.
  for (const { scope, fence } of cutover.fences) {
    const record = await gate.getRecord(scope, 'memory');
    const request: CommitRequest = {
      scope,
      fence,
      operationId: `v8-${scope}`,
      policyVersion: 'v8',
      writes: [{ name: 'memory', expectRevision: record.revision, value: { facts: ['customer'] } }],
    };
    const first = await gate.commit(request);
    expect(first.outcome).toBe('committed');
    if (scope.endsWith('0/memory') || scope.endsWith('3/memory')) {
      const retry = await gate.commit(request);
      expect(retry).toMatchObject({ outcome: 'committed', replayed: true });
    }
  }
  // Now the delayed messages arrive, all at once.
  const delayed = await Promise.all(stalled.map((request) => gate.commit(request)));
  expect(delayed.filter((r) => r.outcome === 'committed')).toHaveLength(0);
  expect(new Set(delayed.map(rejectionCode))).toEqual(new Set(['stale_fence']));

  const audit = await readAudit(gate, { kind: 'commit' });
  const live = audit.filter((e) => e.operationId?.startsWith('v8-'));
  expect(live.every((e) => e.outcome === 'committed')).toBe(true);
  expect([...countBy(live, (e) => e.scope ?? '').values()]).toEqual(new Array(100).fill(1));
  const stale = audit.filter((e) => e.operationId?.startsWith('v7-'));
  expect(stale).toHaveLength(100);
  expect(stale.every((e) => e.outcome === 'rejected' && e.reason === 'stale_fence')).toBe(true);
  for (const scope of scopes) {
    const record = await gate.getRecord(scope, 'memory');
    expect(record).toMatchObject({ revision: 2, value: { facts: ['customer'] } });
  }
  expect(await gate.cutoverReport('b2')).toMatchObject({
    staleAttempts: 100,
    staleAccepted: 0,
    staleRejectedByReason: { stale_fence: 100 },
    liveCommits: 100,
  });
  await close();
});

it('B3: a rollback to v7 is a new cutover with a newer fence; no pre-cutover v7 token revives', async () => {
  const { gate, close } = await openGate();
  await registerPolicies(gate);
  const [scope] = await createWorkflows(gate, 1);
  const v7 = await gate.acquire({
    scope: scope!,
    holder: 'v7-worker',
    ttlMs: HOUR,
    policyVersion: 'v7',
  });
  const forward = await gate.cutover({
    cutoverId: 'to-v8',
    toPolicy: 'v8',
    holder: 'controller-v8',
    scopes: [scope!],
  });
  const v8Fence = forward.fences[0]!.fence;
  expect(v8Fence).toBe(v7.fence + 1);
  const v8Commit = await gate.commit({
    scope: scope!,
    fence: v8Fence,
    operationId: 'v8-write',
    policyVersion: 'v8',
    writes: [{ name: 'memory', expectRevision: 1, value: { by: 'v8' } }],
  });
  expect(v8Commit.outcome).toBe('committed');

  const back = await gate.cutover({
    cutoverId: 'back-to-v7',
    toPolicy: 'v7',
    holder: 'controller-v7b',
    scopes: [scope!],
  });
  const rollbackFence = back.fences[0]!.fence;
  expect(rollbackFence).toBeGreaterThan(v8Fence);
  expect(await gate.getScope(scope!)).toMatchObject({
    fence: rollbackFence,
    holder: 'controller-v7b',
    policyVersion: 'v7',
  });

  // The old v7 token names the right policy again, but its fence is older than both cutovers.
  const oldToken = await gate.commit({
    scope: scope!,
    fence: v7.fence,
    operationId: 'old-v7-token',
    policyVersion: 'v7',
    writes: [{ name: 'memory', expectRevision: 2, value: { by: 'old v7' } }],
  });
  expect(rejectionCode(oldToken)).toBe('stale_fence');
  expect(
    await codeOf(gate.renew({ scope: scope!, holder: 'v7-worker', fence: v7.fence, ttlMs: HOUR })),
  ).toBe('stale_fence');
  const v8Late = await gate.commit({
    scope: scope!,
    fence: v8Fence,
    operationId: 'v8-late',
    policyVersion: 'v8',
    writes: [{ name: 'memory', expectRevision: 2, value: { by: 'v8 late' } }],
  });
  expect(rejectionCode(v8Late)).toBe('stale_fence');
  const rolledBack = await gate.commit({
    scope: scope!,
    fence: rollbackFence,
    operationId: 'v7b-write',
    policyVersion: 'v7',
    writes: [{ name: 'memory', expectRevision: 2, value: { by: 'v7 rollback controller' } }],
  });
  expect(rolledBack.outcome).toBe('committed');
  expect((await gate.getRecord(scope!, 'memory')).value).toEqual({
    by: 'v7 rollback controller',
  });

  // The audit shows the fence only ever rising: grant, cutover, rollback cutover.
  const grants = (await readAudit(gate, { scope: scope! })).filter((e) => e.outcome === 'granted');
  const fences = grants.map((e) => e.currentFence ?? 0);
  expect(fences).toEqual([...new Set(fences)].sort((a, b) => a - b));
  expect(grants.filter((e) => e.kind === 'cutover').map((e) => e.reason)).toEqual([
    'to-v8',
    'back-to-v7',
  ]);
  expect(await gate.cutoverReport('back-to-v7')).toMatchObject({
    staleAttempts: 2,
    staleAccepted: 0,
    liveCommits: 1,
  });
  await close();
});

it('B4: a v7 worker acquiring a fresh lease after the cutover gets policy_mismatch', async () => {
  const { gate, close, clock } = await openGate();
  await registerPolicies(gate);
  const [scope] = await createWorkflows(gate, 1);
  const v7 = await gate.acquire({
    scope: scope!,
    holder: 'v7-worker',
    ttlMs: 1000,
    policyVersion: 'v7',
  });
  const cutover = await gate.cutover({
    cutoverId: 'b4',
    toPolicy: 'v8',
    holder: 'controller-v8',
    scopes: [scope!],
    leaseTtlMs: 5000,
  });
  expect(
    await codeOf(
      gate.acquire({ scope: scope!, holder: 'v7-worker', ttlMs: 1000, policyVersion: 'v7' }),
    ),
  ).toBe('policy_mismatch');
  // Not even when no lease is live any more, and not without naming a policy: only a cutover
  // changes the pin. A v8 worker may take the scope once the controller's lease has expired.
  clock.advance(10_000);
  expect(
    await codeOf(
      gate.acquire({ scope: scope!, holder: 'v7-worker', ttlMs: 1000, policyVersion: 'v7' }),
    ),
  ).toBe('policy_mismatch');
  expect(
    await codeOf(gate.acquire({ scope: scope!, holder: 'unpinned-worker', ttlMs: 1000 })),
  ).toBe('policy_mismatch');
  const v8 = await gate.acquire({
    scope: scope!,
    holder: 'v8-worker',
    ttlMs: 1000,
    policyVersion: 'v8',
  });
  expect(v8.fence).toBe(cutover.fences[0]!.fence + 1);
  expect(v8.fence).toBeGreaterThan(v7.fence);

  const refusals = await readAudit(gate, { scope: scope!, kind: 'acquire', outcome: 'rejected' });
  expect(refusals.map((e) => [e.holder, e.reason])).toEqual([
    ['v7-worker', 'policy_mismatch'],
    ['v7-worker', 'policy_mismatch'],
    ['unpinned-worker', 'policy_mismatch'],
  ]);
  expect(await gate.getScope(scope!)).toMatchObject({
    holder: 'v8-worker',
    policyVersion: 'v8',
    fence: v8.fence,
  });
  await close();
});

it('B5: a job retried under the same operationId compacts once, audited once, answered replayed', async () => {
  const { gate, close } = await openGate();
  await registerPolicies(gate);
  const scopes = await createWorkflows(gate, 2);
  const cutover = await gate.cutover({
    cutoverId: 'b5',
    toPolicy: 'v8',
    holder: 'controller-v8',
    scopes,
  });
  const request = (scope: string, fence: number): CommitRequest => ({
    scope,
    fence,
    operationId: `compact-${scope}`,
    taskId: `job-${scope}`,
    policyVersion: 'v8',
    writes: [
      { name: 'memory', expectRevision: 1, value: { facts: ['customer'], compacted: true } },
    ],
  });
  const [a, b] = cutover.fences;
  // A queue retry after a lost reply: sequential.
  const first = await gate.commit(request(a!.scope, a!.fence));
  const again = await gate.commit(request(a!.scope, a!.fence));
  // A graph replay racing the original: both in flight together.
  const [racing1, racing2] = await Promise.all([
    gate.commit(request(b!.scope, b!.fence)),
    gate.commit(request(b!.scope, b!.fence)),
  ]);
  expect(first).toMatchObject({ outcome: 'committed', replayed: false });
  expect(again).toEqual({ ...first, replayed: true });
  expect([racing1.replayed, racing2.replayed].sort()).toEqual([false, true]);
  expect(racing1.outcome).toBe('committed');
  expect(racing2.outcome).toBe('committed');

  for (const { scope } of cutover.fences) {
    const committed = await readAudit(gate, { scope, kind: 'commit', outcome: 'committed' });
    expect(committed.filter((e) => e.operationId === `compact-${scope}`)).toHaveLength(1);
    expect(await gate.getRecord(scope, 'memory')).toMatchObject({
      revision: 2,
      value: { compacted: true },
    });
    expect(await gate.getOperation(`compact-${scope}`)).toMatchObject({ outcome: 'committed' });
  }
  // A different request under a used operationId is a conflict, not a second compaction.
  const conflict = gate.commit({
    ...request(a!.scope, a!.fence),
    writes: [{ name: 'memory', expectRevision: 2, value: {} }],
  });
  expect(await codeOf(conflict)).toBe('operation_id_conflict');
  expect((await gate.getRecord(a!.scope, 'memory')).revision).toBe(2);
  await close();
});
