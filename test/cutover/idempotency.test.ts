/**
 * Cutovers and policies are idempotent by name: a cutoverId answers the same fences every time
 * and never bumps twice, a cutoverId reused for another request is operation_id_conflict, and a
 * policy version never changes its digest. Nothing changes on any refusal.
 */
import { describe, expect, it } from 'vitest';
import type { Fencegate } from '../../src/gate.js';
import {
  codeOf,
  createWorkflows,
  HOUR,
  openStore,
  readAudit,
  registerPolicies,
  V7,
} from './cutover-helpers.js';
import { ONE_STORE, storesFor } from '../helpers/stores.js';

/** Everything a refused or repeated request must leave as it was. */
async function snapshot(gate: Fencegate) {
  const scopes = await gate.listScopes({ limit: 1000 });
  const audit = await readAudit(gate);
  return { scopes: scopes.items, auditEntries: audit.length, policies: await gate.listPolicies() };
}

describe.each(ONE_STORE)('cutover idempotency and policy immutability on $name', (kind) => {
  const stores = storesFor(kind, 'cutover_idempotency');

  it('the same cutoverId twice returns the same fences and bumps nothing', async () => {
    const { gate, close } = await openStore(stores);
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

  it('a different request under a used cutoverId is operation_id_conflict and changes nothing', async () => {
    const { gate, close } = await openStore(stores);
    await registerPolicies(gate);
    const scopes = await createWorkflows(gate, 10);
    await gate.cutover({ cutoverId: 'c-1', toPolicy: 'v8', holder: 'controller-v8', scopes });
    const before = await snapshot(gate);
    const variants = [
      { cutoverId: 'c-1', toPolicy: 'v7', holder: 'controller-v8', scopes },
      { cutoverId: 'c-1', toPolicy: 'v8', holder: 'controller-v9', scopes },
      { cutoverId: 'c-1', toPolicy: 'v8', holder: 'controller-v8', scopes: scopes.slice(1) },
      { cutoverId: 'c-1', toPolicy: 'v8', holder: 'controller-v8', prefix: 'wf-' },
      { cutoverId: 'c-1', toPolicy: 'v8', holder: 'controller-v8', scopes, leaseTtlMs: HOUR },
    ];
    for (const variant of variants) {
      expect(await codeOf(gate.cutover(variant))).toBe('operation_id_conflict');
    }
    expect(await snapshot(gate)).toEqual(before);
    await close();
  });

  it('a cutover to an unregistered policy is refused before anything is planned', async () => {
    const { gate, close } = await openStore(stores);
    await registerPolicies(gate);
    const scopes = await createWorkflows(gate, 3);
    const before = await snapshot(gate);
    expect(
      await codeOf(gate.cutover({ cutoverId: 'c-9', toPolicy: 'v9', holder: 'c', scopes })),
    ).toBe('invalid_request');
    expect(await gate.cutoverReport('c-9')).toBeNull();
    expect(await snapshot(gate)).toEqual(before);
    await close();
  });

  it('a prefix cutover moves the active scopes under the prefix, once each', async () => {
    const { gate, close } = await openStore(stores);
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

  it('re-registering a policy version with another digest is policy_conflict; the same one is a no-op', async () => {
    const { gate, close } = await openStore(stores);
    const created = await gate.registerPolicy(V7);
    expect(created).toMatchObject({ created: true, policy: { version: 'v7', digest: V7.digest } });
    const again = await gate.registerPolicy(V7);
    expect(again).toEqual({ ...created, created: false });
    const before = await snapshot(gate);
    expect(await codeOf(gate.registerPolicy({ ...V7, digest: 'sha256:something-else' }))).toBe(
      'policy_conflict',
    );
    expect(await codeOf(gate.registerPolicy({ version: 'v7' }))).toBe('policy_conflict');
    expect(await snapshot(gate)).toEqual(before);
    expect((await gate.listPolicies()).map((p) => [p.version, p.digest])).toEqual([
      ['v7', V7.digest],
    ]);
    await close();
  });
});
