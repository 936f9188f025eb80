/**
 * What a rollout changes in the plans of other operations: how its step and rollback cutovers
 * treat each listed scope, how an acquire pins a scope not pinned yet under an active rollout,
 * and how a takeover takes a scope out of the rollout. Every decision reads the stored rollout
 * documents in the operation's own snapshot, so it is atomic with the operation's write.
 */
import { acquirePolicyMismatch, type Refusal } from '../refusal-messages.js';
import {
  ACTIVE_ROLLOUTS_REF,
  readActiveRollouts,
  readRollout,
  readRolloutScope,
  rolloutKey,
  rolloutPut,
  rolloutRef,
  rolloutScopeKey,
  rolloutScopesPrefix,
} from '../rollout-rows.js';
import {
  admits,
  covers,
  parseRolloutCutoverId,
  rolloutCutoverFingerprint,
} from '../rollout-rules.js';
import type { AcquireRequest } from '../../types.js';
import type { FenceRange } from '../cancel-intents-page.js';
import type { CutoverMover } from './plan-cutover.js';
import type { CutoverRow, Put, Ref, ScopeRow, Snapshot } from './transition.js';

/**
 * What a rollback with `cancelIntents` cancels on each scope it moved back
 * (plan-rollback-intents.ts): the intents committed under the fence the rollout gave the scope or
 * a newer one, up to, not including, the fence the rollback gave it: those of toPolicy.
 */
export interface RollbackIntents {
  /** The audit reason of each cancellation: the rollback's cutover id. */
  reason: string;
  /** The fences of `scope`, moved back to `movedTo`, whose pending intents are cancelled. */
  fencesOf(scope: string, movedTo: number): { fences: FenceRange | null; expect: Ref[] };
}

/**
 * The mover of a rollout's cutover, or null for a cutover no rollout made. A step moves a scope
 * still on fromPolicy (or on none) that the rollout has not moved or pinned since the step listed
 * it, and nothing once a rollback began. The rollback moves back a scope the rollout moved or
 * pinned that is still on toPolicy under the rollout's fence or a later one, and was not taken out
 * of the rollout by a takeover; it leaves every other scope, skipped. A rollback with
 * `cancelIntents` also answers which intents of each scope it moved back its pages cancel.
 */
export function rolloutMover(
  snapshot: Snapshot,
  cutover: CutoverRow,
  page?: { after: string; limit: number },
): { mover: CutoverMover; expect: Ref[]; intents?: RollbackIntents } | null {
  const owner = parseRolloutCutoverId(cutover.cutoverId);
  if (owner === null) return null;
  if (cutover.requestFingerprint !== rolloutCutoverFingerprint(owner.rolloutId, owner.step)) {
    return null;
  }
  const rollout = readRollout(snapshot, owner.rolloutId);
  const expect = [rolloutRef(rolloutKey(owner.rolloutId))];
  // Retention deletes only finished rollouts: their cutovers move nothing more.
  if (rollout === null) return { expect, mover: () => ({ move: false }) };
  const markOf = (scope: string) => {
    const ref = rolloutRef(rolloutScopeKey(rollout.rolloutId, scope));
    return { ref, mark: readRolloutScope(snapshot, rollout.rolloutId, scope) };
  };
  if (owner.step === 'rollback') {
    if (page !== undefined) {
      // The rollback's list is every mark of the rollout, in the same order: the marks of a chunk
      // read as a page of the list are the next marks, read as one page with their rows rather
      // than one by one.
      const prefix = rolloutScopesPrefix(rollout.rolloutId);
      const after = page.after === '' ? '' : prefix + page.after;
      snapshot.list({
        type: 'page',
        of: { type: 'rolloutKeys', prefix },
        after,
        limit: page.limit,
      });
    }
    const intents: RollbackIntents = {
      reason: cutover.cutoverId,
      fencesOf: (scope, movedTo) => {
        const { ref, mark } = markOf(scope);
        return {
          fences: mark === null ? null : { from: mark.fence, before: movedTo },
          expect: [ref],
        };
      },
    };
    return {
      expect,
      ...(rollout.cancelIntents ? { intents } : {}),
      mover: (scope, row) => {
        const { ref, mark } = markOf(scope);
        const ours =
          row !== null &&
          row.status === 'active' &&
          row.policyVersion === rollout.toPolicy &&
          mark !== null &&
          mark.left !== true &&
          row.fence >= mark.fence;
        if (!ours) return { move: false, expect: [ref] };
        return {
          move: true,
          holder: null,
          leaseExpiresAt: null,
          policyVersion: rollout.fromPolicy,
          puts: () => [],
          expect: [ref],
        };
      },
    };
  }
  const step = owner.step;
  const stepping = rollout.status === 'running' || rollout.status === 'paused';
  return {
    expect,
    mover: (scope, row) => {
      const { ref, mark } = markOf(scope);
      const movable =
        stepping &&
        row?.status !== 'deleted' &&
        (row === null || row.policyVersion === null || row.policyVersion === rollout.fromPolicy) &&
        mark === null;
      if (!movable) return { move: false, expect: [ref] };
      return {
        move: true,
        holder: rollout.controller,
        leaseExpiresAt: null,
        policyVersion: rollout.toPolicy,
        puts: (fence) => [
          rolloutPut(rolloutScopeKey(rollout.rolloutId, scope), {
            kind: 'scope',
            fence,
            step,
            via: 'step',
          }),
        ],
        expect: [ref],
      };
    },
  };
}

/** The policy an acquire is granted under, and what the rollout records of it. */
export interface AcquirePolicy {
  /** The policy to pin a scope not pinned yet to, or to check a pinned one against. */
  policyVersion: string | undefined;
  mismatch: Refusal | null;
  expect: Ref[];
  /** The rows that record a pin by an active rollout, given the grant's fence. */
  puts: (fence: number) => Put[];
}

/**
 * A scope pinned already keeps its policy: the acquire must name it (or list it in
 * `policyVersions`). A scope not pinned yet under an active rollout's selection is pinned by the
 * rollout's hash (fromPolicy while it rolls back); any other takes the acquirer's policy, the
 * first of `policyVersions`. The active rollouts are read only for a scope not pinned yet, so a
 * pinned scope's acquire pays no read for them.
 */
export function acquirePolicy(
  snapshot: Snapshot,
  request: AcquireRequest,
  row: ScopeRow | null,
): AcquirePolicy {
  const offered =
    request.policyVersions ?? (request.policyVersion === undefined ? [] : [request.policyVersion]);
  const named = offered.length === 0 ? null : offered.join(' or ');
  const plain = { mismatch: null, expect: [], puts: () => [] };
  if (row !== null && (row.status === 'deleted' || row.policyVersion !== null)) {
    const pinned = row.policyVersion;
    if (request.policyVersions === undefined || pinned === null) {
      return { ...plain, policyVersion: request.policyVersion };
    }
    if (offered.includes(pinned)) return { ...plain, policyVersion: pinned };
    return {
      ...plain,
      policyVersion: undefined,
      mismatch: acquirePolicyMismatch(request.scope, pinned, named),
    };
  }
  const expect: Ref[] = [ACTIVE_ROLLOUTS_REF];
  const rollout = readActiveRollouts(snapshot).find((r) => covers(r.selection, request.scope));
  if (rollout === undefined) return { ...plain, expect, policyVersion: offered[0] };
  const ramped = !rollout.rollingBack && admits(rollout.rolloutId, request.scope, rollout.percent);
  const target = ramped ? rollout.toPolicy : rollout.fromPolicy;
  if (!offered.includes(target)) {
    return {
      ...plain,
      expect,
      policyVersion: undefined,
      mismatch: acquirePolicyMismatch(request.scope, target, named),
    };
  }
  const key = rolloutScopeKey(rollout.rolloutId, request.scope);
  return {
    mismatch: null,
    expect,
    policyVersion: target,
    puts: (fence) =>
      ramped ? [rolloutPut(key, { kind: 'scope', fence, step: rollout.step, via: 'acquire' })] : [],
  };
}

/**
 * A takeover of a scope an active rollout moved or pinned takes it out of the rollout: its
 * rollback then leaves the scope with the operator who took it.
 */
export function takeoverLeavesRollout(
  snapshot: Snapshot,
  scope: string,
  row: ScopeRow | null,
): { expect: Ref[]; put: Put[] } {
  if (row === null || row.policyVersion === null) return { expect: [], put: [] };
  const rollout = readActiveRollouts(snapshot).find(
    (r) => r.toPolicy === row.policyVersion && covers(r.selection, scope),
  );
  if (rollout === undefined) return { expect: [ACTIVE_ROLLOUTS_REF], put: [] };
  const key = rolloutScopeKey(rollout.rolloutId, scope);
  const mark = readRolloutScope(snapshot, rollout.rolloutId, scope);
  const expect = [ACTIVE_ROLLOUTS_REF, rolloutRef(key)];
  if (mark === null || mark.left === true) return { expect, put: [] };
  return { expect, put: [rolloutPut(key, { ...mark, left: true })] };
}
