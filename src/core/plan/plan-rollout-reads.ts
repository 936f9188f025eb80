/**
 * Rollouts read as a plan that writes nothing: every store answers them from one snapshot through
 * the path its writes take, so no store needs a reader of its own for them.
 */
import {
  readRollout,
  readRolloutScope,
  rolloutKey,
  rolloutRef,
  rolloutScopesPrefix,
  ROLLOUTS_PREFIX,
  type RolloutRow,
  type RolloutScopeRow,
} from '../rollout-rows.js';
import { readOnly, type Ref, type Snapshot, type Transition } from './transition.js';

export function planReadRollouts(
  snapshot: Snapshot,
  rolloutId: string | undefined,
): Transition<RolloutRow[]> {
  if (rolloutId !== undefined) {
    const row = readRollout(snapshot, rolloutId);
    return readOnly([rolloutRef(rolloutKey(rolloutId))], row === null ? [] : [row]);
  }
  const range = { type: 'rolloutKeys' as const, prefix: ROLLOUTS_PREFIX };
  const ids = snapshot.list(range).map((key) => key.slice(ROLLOUTS_PREFIX.length));
  const refs: Ref[] = ids.map((id) => rolloutRef(rolloutKey(id)));
  const rows = ids.flatMap((id) => readRollout(snapshot, id) ?? []);
  return readOnly([range, ...refs], rows);
}

/** What the rollout did to each scope it moved or pinned, by scope name. */
export function planReadRolloutScopes(
  snapshot: Snapshot,
  rolloutId: string,
): Transition<{ scope: string; row: RolloutScopeRow }[]> {
  const prefix = rolloutScopesPrefix(rolloutId);
  const range = { type: 'rolloutKeys' as const, prefix };
  const scopes = snapshot.list(range).map((key) => key.slice(prefix.length));
  const rows = scopes.flatMap((scope) => {
    const row = readRolloutScope(snapshot, rolloutId, scope);
    return row === null ? [] : [{ scope, row }];
  });
  return readOnly([range], rows);
}
