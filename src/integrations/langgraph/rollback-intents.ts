/**
 * What a `rollback` does with the effects of the run it undoes: the rolled-back run's intents
 * still pending (committed, not yet claimed by a dispatcher) are cancelled under the new run's
 * fence, a page of them per store operation (`cancelIntents`: only the holder may, and only
 * intents of fences it superseded); those a dispatcher already took cannot be called back, and are
 * reported.
 */
import type { FencegateApi } from '../../api.js';
import type { Intent } from '../../types.js';

/** What a rollback found of the rolled-back run's effects; passed to runThread's `onRollback`. */
export interface RollbackReport {
  /** The run that was undone. */
  runId: string;
  /** Its checkpoints, writes and blobs removed from the thread. */
  removedRecords: number;
  /** Effect keys of its intents that were pending: cancelled, never delivered. */
  cancelled: string[];
  /** Its intents already delivered: what happened outside cannot be undone. */
  delivered: Intent[];
  /** Its intents a dispatcher holds or left in doubt (claimed, unknown): they may still land. */
  inFlight: Intent[];
  /** Its intents that ended failed or needing attention before the rollback. */
  failed: Intent[];
}

export interface RollbackIntentsTarget {
  gate: FencegateApi;
  scope: string;
  holder: string;
  /** The new run's fence. */
  fence: number;
  /** The rolled-back run's fence: its intents are those of fences from here up to `fence`. */
  rolledBackFence: number;
}

const PAGE = 100;

/** Cancels the rolled-back run's pending intents; reports what became of each of its intents. */
export async function settleRolledBackIntents(
  target: RollbackIntentsTarget,
): Promise<Omit<RollbackReport, 'runId' | 'removedRecords'>> {
  const { gate, scope, holder, fence, rolledBackFence } = target;
  // Page by page, each page one store operation: a run that committed any number of intents is
  // settled, and the report's lists add up over every page.
  const cancelled = await gate.cancelAllIntents({
    scope,
    holder,
    fence,
    committedFrom: rolledBackFence,
    reason: 'langgraph rollback',
  });
  const report = {
    cancelled,
    delivered: [] as Intent[],
    inFlight: [] as Intent[],
    failed: [] as Intent[],
  };
  for await (const intent of intentsOf(gate, scope)) {
    if (intent.fence < rolledBackFence || intent.fence >= fence) continue;
    if (intent.status === 'delivered') report.delivered.push(intent);
    else if (intent.status === 'claimed' || intent.status === 'unknown')
      report.inFlight.push(intent);
    else if (intent.status === 'failed' || intent.status === 'needs_attention') {
      report.failed.push(intent);
    }
  }
  return report;
}

async function* intentsOf(gate: FencegateApi, scope: string): AsyncGenerator<Intent> {
  let cursor: string | undefined;
  do {
    const page = await gate.listIntents({
      scope,
      limit: PAGE,
      ...(cursor === undefined ? {} : { cursor }),
    });
    yield* page.items;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
}
