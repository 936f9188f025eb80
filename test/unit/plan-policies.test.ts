/**
 * Policies and cutover starts as the core plans them, over an in-memory snapshot: a policy version
 * never changes its digest, a cutoverId names one request (its scope list as a set), and a cutover
 * to an unregistered policy is refused before anything is planned. Each refusal puts nothing and
 * audits nothing, so no store can change on it.
 */
import { describe, expect, it } from 'vitest';
import { planCutoverStart, planRegisterPolicy } from '../../src/core/plan/plan-cutover.js';
import type { Transition } from '../../src/core/plan/transition.js';
import type { CutoverRequest } from '../../src/types.js';
import { MapSnapshot } from './map-snapshot.js';

const HOUR = 3_600_000;
const V7 = { version: 'v7', digest: 'sha256:v7', description: 'compaction v7' };
const V8 = { version: 'v8', digest: 'sha256:v8', description: 'compaction v8' };
const SCOPES = Array.from({ length: 10 }, (_, i) => `wf-${i}/memory`);

/** A snapshot where v7 and v8 are registered. */
function withPolicies(): MapSnapshot {
  const snapshot = new MapSnapshot();
  for (const policy of [V7, V8]) snapshot.apply(planRegisterPolicy(snapshot, policy, null).put);
  return snapshot;
}

/** The refusal's code, after checking the transition changes nothing. */
function refusedCode(transition: Transition<unknown>): string | null {
  expect(transition.put).toEqual([]);
  expect(transition.audit).toEqual([]);
  return transition.answer.ok ? null : transition.answer.error.code;
}

describe('policies and cutover starts, planned', () => {
  it('a different request under a used cutoverId is operation_id_conflict and changes nothing', () => {
    const snapshot = withPolicies();
    const request = { cutoverId: 'c-1', toPolicy: 'v8', holder: 'controller-v8', scopes: SCOPES };
    const started = planCutoverStart(snapshot, request, 0);
    expect(started.answer.ok).toBe(true);
    snapshot.apply(started.put);

    const variants: (CutoverRequest & { cutoverId: string })[] = [
      { cutoverId: 'c-1', toPolicy: 'v7', holder: 'controller-v8', scopes: SCOPES },
      { cutoverId: 'c-1', toPolicy: 'v8', holder: 'controller-v9', scopes: SCOPES },
      { cutoverId: 'c-1', toPolicy: 'v8', holder: 'controller-v8', scopes: SCOPES.slice(1) },
      { cutoverId: 'c-1', toPolicy: 'v8', holder: 'controller-v8', prefix: 'wf-' },
      {
        cutoverId: 'c-1',
        toPolicy: 'v8',
        holder: 'controller-v8',
        scopes: SCOPES,
        leaseTtlMs: HOUR,
      },
    ];
    for (const variant of variants) {
      expect(refusedCode(planCutoverStart(snapshot, variant, 0)), JSON.stringify(variant)).toBe(
        'operation_id_conflict',
      );
    }
    // The same request again, its scopes in another order, is the same cutover: it resumes.
    const again = planCutoverStart(snapshot, { ...request, scopes: [...SCOPES].reverse() }, 0);
    expect(again).toMatchObject({ put: [], audit: [], answer: { ok: true } });
  });

  it('a cutover to an unregistered policy is refused before anything is planned', () => {
    const snapshot = withPolicies();
    const request = { cutoverId: 'c-9', toPolicy: 'v9', holder: 'c', scopes: SCOPES.slice(0, 3) };
    const refused = planCutoverStart(snapshot, request, 0);
    expect(refusedCode(refused)).toBe('invalid_request');
    expect(!refused.answer.ok && refused.answer.error.message).toMatch(/toPolicy v9/);
    expect(snapshot.get({ type: 'cutover', cutoverId: 'c-9' })).toBeNull();
  });

  it('re-registering a policy version with another digest is policy_conflict; the same one is a no-op', () => {
    const snapshot = new MapSnapshot();
    const created = planRegisterPolicy(snapshot, V7, null);
    expect(created.answer).toMatchObject({
      ok: true,
      value: { created: true, policy: { version: 'v7', digest: V7.digest } },
    });
    snapshot.apply(created.put);
    const again = planRegisterPolicy(snapshot, V7, null);
    expect(again.put).toEqual([]);
    expect(again.answer).toEqual({
      ok: true,
      value: { ...(created.answer.ok ? created.answer.value : {}), created: false },
    });
    expect(
      refusedCode(planRegisterPolicy(snapshot, { ...V7, digest: 'sha256:something-else' }, null)),
    ).toBe('policy_conflict');
    expect(refusedCode(planRegisterPolicy(snapshot, { version: 'v7' }, null))).toBe(
      'policy_conflict',
    );
    expect(snapshot.get({ type: 'policy', version: 'v7' })).toMatchObject({ digest: V7.digest });
  });
});
