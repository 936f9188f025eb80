/**
 * Cutovers are idempotent by name: a cutoverId answers the same fences every time and never bumps
 * twice, and a prefix cutover moves each active scope under it once. What the core decides alone
 * (a cutoverId reused for another request, an unregistered policy, a policy's digest) is checked
 * without a store in test/unit/plan-policies.test.ts.
 */
import { expect, it } from 'vitest';
import type { Fencegate } from '../../src/gate.js';
import { createWorkflows, openGate, readAudit, registerPolicies } from './cutover-helpers.js';

/** Everything a repeated request must leave as it was. */
async function snapshot(gate: Fencegate) {
  const scopes = await gate.listScopes({ limit: 1000 });
  const audit = await readAudit(gate);
  return { scopes: scopes.items, auditEntries: audit.length, policies: await gate.listPolicies() };
}

it('the same cutoverId twice returns the same fences and bumps nothing', async () => {
  const { gate, close } = await openGate();
  await registerPolicies(gate);
  const scopes = await createWorkflows(gate, 50);
  const request = { cutoverId: 'c-1', toPolicy: 'v8', holder: 'controller-v8', scopes };
  const first = await gate.cutover(request);
  expect(first.scopes).toBe(50);
  expect(first.fences.every(({ fence }) => fence === 2)).toBe(true);
  const before = await snapshot(gate);

  const second = await gate.cutover(request);
  expect(second).toEqual(first);
  // The scope list is a set: resent in another order, it is still the same cutover.
  const reordered = await gate.cutover({ ...request, scopes: [...scopes].reverse() });
  expect(reordered).toEqual(first);
  expect(await snapshot(gate)).toEqual(before);
  const report = await gate.cutoverReport('c-1');
  expect(report).toMatchObject({ status: 'completed', scopes: 50 });
  await close();
});

it('a prefix cutover moves the active scopes under the prefix, once each', async () => {
  const { gate, close } = await openGate();
  await registerPolicies(gate);
  await createWorkflows(gate, 12);
  await gate.deleteScope('wf-11/memory');
  const result = await gate.cutover({
    cutoverId: 'p',
    toPolicy: 'v8',
    holder: 'ctl',
    prefix: 'wf-1',
  });
  // wf-1, wf-10 (wf-11 is deleted); not wf-2 ... wf-9.
  expect(result.fences.map((f) => f.scope)).toEqual(['wf-1/memory', 'wf-10/memory']);
  expect(await gate.getScope('wf-11/memory')).toMatchObject({ status: 'deleted' });
  expect(await gate.getScope('wf-2/memory')).toMatchObject({ policyVersion: 'v7', fence: 1 });
  await close();
});
