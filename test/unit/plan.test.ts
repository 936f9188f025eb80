/**
 * The core's transitions over an in-memory snapshot: what each plan expects, puts, audits and
 * answers. The stores apply these; here they are checked without any store.
 */
import { describe, expect, it } from 'vitest';
import { planCommit } from '../../src/core/plan/plan-commit.js';
import { planCutoverChunk } from '../../src/core/plan/plan-cutover.js';
import { planClaim, planCompletion } from '../../src/core/plan/plan-intents.js';
import { planAcquire, planDeleteScope } from '../../src/core/plan/plan-leases.js';
import { planCancel } from '../../src/core/plan/plan-scope-cancel.js';
import type { Ref, RefOf, Rows, RowType } from '../../src/core/plan/transition.js';
import { validateCommit } from '../../src/core/validate.js';
import { isFencegateError } from '../../src/errors.js';
import { intentRow } from './intent-row.js';
import { MapSnapshot } from './map-snapshot.js';

const scopeRef: Ref = { type: 'scope', scope: 'wf-1' };

function held(snapshot: MapSnapshot, fence = 3): void {
  snapshot.set(scopeRef, {
    fence,
    holder: 'w1',
    leaseExpiresAt: 5_000,
    policyVersion: null,
    status: 'active',
    updatedAt: 0,
  });
}

/** A cutover `c1` to v8, planned over `scopes` and not moved yet. */
function runningCutover(snapshot: MapSnapshot, scopes: string[]): void {
  snapshot.set(
    { type: 'cutover', cutoverId: 'c1' },
    {
      cutoverId: 'c1',
      requestFingerprint: 'x',
      toPolicy: 'v8',
      holder: 'ctl',
      leaseTtlMs: null,
      reason: null,
      status: 'running',
      startedAt: 0,
      completedAt: null,
      startSeq: 0,
      scopes,
    },
  );
  // A page of the list is cut from it, as a store cuts it.
  snapshot.ranges.set(JSON.stringify({ type: 'cutoverScopes', cutoverId: 'c1' }), scopes);
}

describe('planned transitions', () => {
  it('an acquire of a scope pinned to a policy reads no rollout document: only a scope not pinned yet pays that read', () => {
    const snapshot = new MapSnapshot();
    const first = planAcquire(snapshot, {
      scope: 'wf-1',
      holder: 'w1',
      ttlMs: 1_000,
      policyVersion: 'v7',
    });
    expect(first.expect).toEqual([scopeRef, { type: 'rollout', key: 'active' }]);
    snapshot.apply(first.put);
    const pinned = planAcquire(snapshot, {
      scope: 'wf-1',
      holder: 'w2',
      ttlMs: 1_000,
      policyVersions: ['v7', 'v8'],
    });
    expect(pinned.expect).toEqual([scopeRef]);
    expect(snapshot.reads.filter((ref) => ref.type === 'rollout')).toHaveLength(1);
  });

  it('acquire of a new scope puts fence 1 and audits the grant; the same holder again puts nothing', () => {
    const snapshot = new MapSnapshot();
    const first = planAcquire(snapshot, { scope: 'wf-1', holder: 'w1', ttlMs: 1_000 });
    // A scope not pinned yet reads the tenant's active rollouts, in the acquire's own snapshot.
    expect(first.expect).toEqual([scopeRef, { type: 'rollout', key: 'active' }]);
    expect(first.put).toEqual([
      {
        type: 'scope',
        scope: 'wf-1',
        row: {
          fence: 1,
          holder: 'w1',
          leaseExpiresAt: 2_000,
          policyVersion: null,
          // Acquired in process: the grant is bound to no token.
          grantTokenId: null,
          status: 'active',
          updatedAt: 1_000,
        },
      },
      { type: 'fenceGrant', scope: 'wf-1', fence: 1, row: { holder: 'w1' } },
    ]);
    expect(first.audit.map((entry) => [entry.kind, entry.outcome, entry.currentFence])).toEqual([
      ['acquire', 'granted', 1],
    ]);
    snapshot.apply(first.put);
    const again = planAcquire(snapshot, { scope: 'wf-1', holder: 'w1', ttlMs: 1_000 });
    expect(again.put).toEqual([]);
    expect(again.answer).toMatchObject({ ok: true, value: { fence: 1, reacquired: true } });
    const other = planAcquire(snapshot, { scope: 'wf-1', holder: 'w2', ttlMs: 1_000 });
    expect(other.put).toEqual([]);
    expect(other.audit[0]).toMatchObject({ outcome: 'rejected', reason: 'lease_held' });
    expect(other.answer.ok || other.answer.error.code).toBe('lease_held');
  });

  it('a commit puts the record, the intent and the stored outcome, expects every row it read, and replays from the outcome', () => {
    const snapshot = new MapSnapshot();
    held(snapshot);
    const request = validateCommit({
      scope: 'wf-1',
      fence: 3,
      operationId: 'op-1',
      reads: [{ name: 'facts', revision: 0 }],
      writes: [{ name: 'memory', expectRevision: 0, value: { a: 1 } }],
      intents: [{ effectKey: 'mail-1', target: 'mail', payload: {} }],
    });
    const transition = planCommit(snapshot, request);
    expect(transition.expect).toEqual(
      expect.arrayContaining([
        { type: 'operation', operationId: 'op-1' },
        scopeRef,
        { type: 'record', scope: 'wf-1', name: 'facts' },
        { type: 'record', scope: 'wf-1', name: 'memory' },
        { type: 'intent', effectKey: 'mail-1' },
      ]),
    );
    expect(transition.put.map((put) => put.type)).toEqual(['record', 'intent', 'operation']);
    expect(transition.audit.map((entry) => [entry.kind, entry.outcome])).toEqual([
      ['commit', 'committed'],
      ['intent', 'pending'],
    ]);
    expect(transition.answer).toMatchObject({
      ok: true,
      value: { outcome: 'committed', records: [{ name: 'memory', revision: 1, incarnation: 1 }] },
    });
    snapshot.apply(transition.put);
    const replay = planCommit(snapshot, request);
    expect(replay.put).toEqual([]);
    expect(replay.audit).toEqual([]);
    expect(replay.answer).toMatchObject({
      ok: true,
      value: { outcome: 'committed', replayed: true },
    });
  });

  it('a stale commit is stored and audited as a rejection, and changes no record', () => {
    const snapshot = new MapSnapshot();
    held(snapshot, 4);
    const transition = planCommit(
      snapshot,
      validateCommit({
        scope: 'wf-1',
        fence: 3,
        operationId: 'op-stale',
        writes: [{ name: 'memory', expectRevision: 0, value: 1 }],
      }),
    );
    expect(transition.put.map((put) => put.type)).toEqual(['operation']);
    expect(transition.audit[0]).toMatchObject({ outcome: 'rejected', reason: 'stale_fence' });
    expect(transition.answer).toMatchObject({
      ok: true,
      value: { outcome: 'rejected', error: { code: 'stale_fence' } },
    });
  });

  it('a commit with a fence above the current one or on a scope never created reads no grant: none can exist', () => {
    const snapshot = new MapSnapshot();
    held(snapshot, 4);
    const reads: RowType[] = [];
    const get = snapshot.get.bind(snapshot);
    snapshot.get = <K extends RowType>(ref: RefOf<K>): Rows[K] | null => {
      reads.push(ref.type);
      return get(ref);
    };
    const commit = (scope: string, fence: number) =>
      planCommit(
        snapshot,
        validateCommit({
          scope,
          fence,
          operationId: `op-${scope}-${fence}`,
          writes: [{ name: 'memory', expectRevision: 0, value: 1 }],
        }),
      );
    for (const transition of [commit('wf-1', 5), commit('wf-never', 1)]) {
      expect(transition.audit[0]).toMatchObject({ outcome: 'rejected', holder: null });
      expect(transition.expect.map((ref) => ref.type)).not.toContain('fenceGrant');
    }
    expect(reads).not.toContain('fenceGrant');

    // An older fence was granted: its holder is read, and expected.
    snapshot.set({ type: 'fenceGrant', scope: 'wf-1', fence: 3 }, { holder: 'w0' });
    const older = commit('wf-1', 3);
    expect(older.audit[0]).toMatchObject({ outcome: 'rejected', holder: 'w0' });
    expect(older.expect).toContainEqual({ type: 'fenceGrant', scope: 'wf-1', fence: 3 });
  });

  it('delete tombstones each live record at revision + 1 and remembers the deletion; cancel cancels pending intents only', () => {
    const snapshot = new MapSnapshot();
    held(snapshot);
    snapshot.ranges.set(JSON.stringify({ type: 'scopeRecords', scope: 'wf-1' }), ['a', 'b']);
    const live = {
      exists: true,
      valueJson: '1',
      revision: 2,
      incarnation: 1,
      fingerprint: 'f',
      updatedAt: 0,
    };
    snapshot.set({ type: 'record', scope: 'wf-1', name: 'a' }, live);
    snapshot.set(
      { type: 'record', scope: 'wf-1', name: 'b' },
      { ...live, exists: false, valueJson: null },
    );
    const deletion = planDeleteScope(snapshot, 'wf-1', 'gone');
    expect(deletion.put.map((put) => [put.type, 'revision' in put ? put.revision : null])).toEqual([
      ['scope', null],
      ['record', null],
      ['deletion', 3],
    ]);
    expect(deletion.expect).toContainEqual({ type: 'scopeRecords', scope: 'wf-1' });
    expect(deletion.audit[0]?.records?.map((r) => [r.name, r.resulting])).toEqual([['a', 3]]);

    snapshot.ranges.set(JSON.stringify({ type: 'scopeIntents', scope: 'wf-1' }), ['p', 'd']);
    const intent = { effectKey: 'p', scope: 'wf-1', status: 'pending', claimFence: 0, fence: 3 };
    snapshot.set({ type: 'intent', effectKey: 'p' }, intent);
    snapshot.set(
      { type: 'intent', effectKey: 'd' },
      { ...intent, effectKey: 'd', status: 'delivered' },
    );
    const cancel = planCancel(snapshot, 'wf-1', undefined);
    expect(cancel.answer).toMatchObject({ ok: true, value: { fence: 4, cancelledIntents: 1 } });
    expect(cancel.put.filter((put) => put.type === 'intent').map((put) => put.effectKey)).toEqual([
      'p',
    ]);
  });

  it('a claim expects only the intents it claims; a completion under an old claim fence is an audited stale_claim', () => {
    const snapshot = new MapSnapshot();
    snapshot.ranges.set(JSON.stringify({ type: 'openIntents' }), ['due', 'later']);
    snapshot.set({ type: 'intent', effectKey: 'due' }, intentRow('due', 1, { nextAttemptAt: 500 }));
    snapshot.set(
      { type: 'intent', effectKey: 'later' },
      intentRow('later', 1, { nextAttemptAt: 9_000 }),
    );
    const claim = planClaim(snapshot, { dispatcher: 'd1', ttlMs: 100, limit: 10 });
    expect(claim.expect).toEqual([{ type: 'intent', effectKey: 'due' }]);
    expect(claim.answer).toMatchObject({ ok: true, value: [{ effectKey: 'due', claimFence: 1 }] });
    snapshot.apply(claim.put);
    const stale = planCompletion(snapshot, 'due', { claimFence: 0, outcome: 'delivered' });
    expect(stale.put).toEqual([]);
    expect(stale.audit[0]).toMatchObject({ outcome: 'rejected', reason: 'stale_claim' });
    expect(
      !stale.answer.ok && isFencegateError(stale.answer.error) && stale.answer.error.code,
    ).toBe('stale_claim');
  });

  it('a cutover chunk moves at most the chunk, each scope with its step, from the cursor kept with the cutover, and completes when nothing is left', () => {
    const snapshot = new MapSnapshot();
    runningCutover(snapshot, ['a', 'b', 'c']);
    held(snapshot);
    const first = planCutoverChunk(snapshot, 'c1', 2);
    expect(first.answer).toEqual({ ok: true, value: 2 });
    expect(first.put.map((put) => `${put.type}:${'scope' in put ? put.scope : ''}`)).toEqual([
      'rollout:',
      'scope:a',
      'fenceGrant:a',
      'scope:b',
      'fenceGrant:b',
      'cutoverStep:a',
      'cutoverStep:b',
    ]);
    // The cursor kept with the cutover: the next chunk starts after the two handled.
    expect(first.put[0]).toEqual({
      type: 'rollout',
      key: 'cursor|c1',
      row: { kind: 'cursor', next: 2, after: 'b' },
    });
    // Each moved scope's new fence is recorded as granted to the cutover's holder.
    expect(first.put.find((put) => put.type === 'fenceGrant')).toMatchObject({
      scope: 'a',
      row: { holder: 'ctl' },
    });
    snapshot.apply(first.put);
    snapshot.reads.length = 0;
    snapshot.listed.length = 0;
    const second = planCutoverChunk(snapshot, 'c1', 2);
    expect(second.answer).toEqual({ ok: true, value: 1 });
    // A chunk reads its own scopes' rows, never the steps of every chunk before it: its names
    // are a page of the list after the last one handled.
    expect(snapshot.listed).toEqual([
      { type: 'page', of: { type: 'cutoverScopes', cutoverId: 'c1' }, after: 'b', limit: 2 },
    ]);
    const steps = snapshot.reads.filter((ref) => ref.type === 'cutoverStep');
    expect(steps).toEqual([{ type: 'cutoverStep', cutoverId: 'c1', scope: 'c' }]);
    expect(second.expect).not.toContainEqual({ type: 'cutoverSteps', cutoverId: 'c1' });
    snapshot.apply(second.put);
    const done = planCutoverChunk(snapshot, 'c1', 2);
    expect(done.answer).toEqual({ ok: true, value: 0 });
    expect(done.put[0]).toMatchObject({ type: 'cutover', row: { status: 'completed' } });
  });

  it('a cutover with moved scopes and no cursor (started before cursors were kept) moves each scope once', () => {
    const snapshot = new MapSnapshot();
    runningCutover(snapshot, ['a', 'b']);
    snapshot.set({ type: 'cutoverStep', cutoverId: 'c1', scope: 'a' }, { fence: 2 });
    const chunk = planCutoverChunk(snapshot, 'c1', 5);
    expect(chunk.answer).toEqual({ ok: true, value: 2 });
    expect(chunk.put.filter((put) => put.type === 'scope').map((put) => put.scope)).toEqual(['b']);
    expect(chunk.audit).toHaveLength(1);
    expect(chunk.put[0]).toMatchObject({ key: 'cursor|c1', row: { next: 2, after: 'b' } });
  });
});
