/**
 * Committing one change of a session's history: the new head, expected at the revision the change
 * was planned on, with the item and operation records the change writes, in one fenced commit. So
 * a change lands whole or not at all, and only on the history it was planned against; any other
 * change in between makes it `moved`, and the caller plans it again on the history as it is now.
 */
import { createHash } from 'node:crypto';
import type { FencegateApi } from '../../api.js';
import { canonicalJson } from '../../core/canonical.js';
import { FencegateError } from '../../errors.js';
import type { WriteRequest } from '../../types.js';
import type { HeadState } from './history-reads.js';
import { asStaleSessionOwner } from './session-errors.js';
import { HEAD_NAME, itemName, type HistoryHead } from './session-records.js';

export interface SessionScope {
  gate: FencegateApi;
  scope: string;
  sessionId: string;
  fence: number;
}

export type ChangeOutcome = { moved: false; state: HeadState } | { moved: true };

/** Records a change may write beside the head: a commit's 64 writes less the head's. */
export const MAX_CHANGE_WRITES = 63;

export async function commitChange(
  target: SessionScope,
  from: HeadState,
  head: HistoryHead,
  writes: WriteRequest[],
): Promise<ChangeOutcome> {
  const all: WriteRequest[] = [
    { name: HEAD_NAME, expectRevision: from.revision, value: head },
    ...writes,
  ];
  const result = await target.gate
    .commit({
      scope: target.scope,
      fence: target.fence,
      operationId: operationIdOf(target, all),
      writes: all,
    })
    .catch((error: unknown) => {
      throw asStaleSessionOwner(target.sessionId, error);
    });
  if (result.outcome === 'committed') {
    const written = result.records.find((record) => record.name === HEAD_NAME);
    return { moved: false, state: { head, revision: written?.revision ?? from.revision + 1 } };
  }
  const { code, message, details } = result.error;
  if (code === 'stale_revision' || code === 'incarnation_changed') return { moved: true };
  throw asStaleSessionOwner(target.sessionId, new FencegateError(code, message, details));
}

/**
 * Writes of `items` at positions from `start` on. `revisionAt` answers the revision a position's
 * record has now (0 when it was never written); `stale` loses the positions written.
 */
export function placeItems(
  items: readonly unknown[],
  start: number,
  revisionAt: (position: number) => number,
  stale: Record<string, number>,
): WriteRequest[] {
  return items.map((value, index) => {
    const position = start + index;
    delete stale[position];
    return { name: itemName(position), expectRevision: revisionAt(position), value };
  });
}

/**
 * Derived from the scope, the fence and the exact writes (the head's expected revision among
 * them): a commit resent after a lost reply gets its stored answer, and no two changes share one.
 */
function operationIdOf(target: SessionScope, writes: WriteRequest[]): string {
  const digest = createHash('sha256')
    .update(canonicalJson([target.scope, target.fence, writes]))
    .digest('base64url')
    .slice(0, 32);
  return `openai-agents:${target.fence}:${digest}`;
}
