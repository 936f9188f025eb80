/**
 * The rules of a progressive rollout that do not depend on the store: which scopes a step admits
 * (a stable hash, so the set only grows from step to step), which selections overlap, the ids of a
 * rollout's cutovers and the fingerprint that makes a start idempotent.
 */
import { createHash } from 'node:crypto';
import { canonicalJson, sha256Hex } from './canonical.js';
import type { RolloutSelection, StartRolloutRequest } from '../types.js';

/** Buckets of the hash: a percent admits `percent * 100` of them. */
const BUCKETS = 10_000;

/** The scope's bucket in [0, 10000) for this rollout: the same on every process and store. */
export function rolloutBucket(rolloutId: string, scope: string): number {
  const digest = createHash('sha256').update(`${rolloutId}\n${scope}`).digest();
  return Math.floor((digest.readUInt32BE(0) / 2 ** 32) * BUCKETS);
}

/** Whether the ramp at `percent` includes the scope: true at a percent, true at every higher one. */
export function admits(rolloutId: string, scope: string, percent: number): boolean {
  return rolloutBucket(rolloutId, scope) < percent * (BUCKETS / 100);
}

export function covers(selection: RolloutSelection, scope: string): boolean {
  return 'prefix' in selection
    ? scope.startsWith(selection.prefix)
    : selection.scopes.includes(scope);
}

/** Whether two selections can name one scope. */
export function overlaps(a: RolloutSelection, b: RolloutSelection): boolean {
  if ('prefix' in a && 'prefix' in b) {
    return a.prefix.startsWith(b.prefix) || b.prefix.startsWith(a.prefix);
  }
  const [list, other] = 'scopes' in a ? [a, b] : [b as { scopes: string[] }, a];
  return list.scopes.some((scope) => covers(other, scope));
}

export function stepCutoverId(rolloutId: string, step: number): string {
  return `${rolloutId}/step-${step}`;
}

export function rollbackCutoverId(rolloutId: string): string {
  return `${rolloutId}/rollback`;
}

/** The rollout a cutover id would belong to, and which of its cutovers it would be. */
export function parseRolloutCutoverId(
  cutoverId: string,
): { rolloutId: string; step: number | 'rollback' } | null {
  const match = /^(.+)\/(?:step-([1-9][0-9]{0,3})|rollback)$/.exec(cutoverId);
  if (match === null) return null;
  const [, rolloutId, step] = match;
  return { rolloutId: rolloutId!, step: step === undefined ? 'rollback' : Number(step) };
}

/** What makes two starts the same rollout: never the free-text reason. */
export function rolloutFingerprint(request: StartRolloutRequest): string {
  return sha256Hex(
    canonicalJson({
      fromPolicy: request.fromPolicy,
      toPolicy: request.toPolicy,
      scopes: request.scopes === undefined ? null : [...new Set(request.scopes)].sort(),
      prefix: request.prefix ?? null,
      steps: request.steps,
      controller: request.controller ?? null,
      // Present only when given, so a start sent again from before holds existed matches.
      ...(request.holdSeconds === undefined
        ? {}
        : {
            holdSeconds: request.holdSeconds,
            holdExtensionSeconds: request.holdExtensionSeconds ?? null,
            gates: request.gates ?? [],
            onFailure: request.onFailure ?? 'rollback',
          }),
      ...(request.holdSeconds === undefined && request.onFailure !== undefined
        ? { onFailure: request.onFailure }
        : {}),
    }),
  );
}

export function selectionOf(request: StartRolloutRequest): RolloutSelection {
  return request.scopes !== undefined
    ? { scopes: [...new Set(request.scopes)].sort() }
    : { prefix: request.prefix ?? '' };
}

/**
 * The fingerprint a rollout's own cutovers carry: what tells them from a plain cutover that happens
 * to have an id of the same shape.
 */
export function rolloutCutoverFingerprint(rolloutId: string, step: number | 'rollback'): string {
  return sha256Hex(canonicalJson({ rollout: rolloutId, step }));
}
