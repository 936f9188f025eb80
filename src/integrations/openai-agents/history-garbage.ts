/**
 * Collecting what a clear or a compaction left behind: item records below the head's `first` and
 * operation records of earlier epochs. Nothing reads or reuses them any more, so deleting them
 * races with nothing; each delete expects the revision listed. Collection is best effort: a
 * refusal or an unreachable store leaves the rest for the next clear or compaction, which lists
 * from the start again.
 */
import type { RecordState, WriteRequest } from '../../types.js';
import type { SessionScope } from './history-writes.js';
import {
  ITEM_PREFIX,
  OPERATION_PREFIX,
  epochOf,
  itemName,
  type HistoryHead,
} from './session-records.js';

const DELETES_PER_COMMIT = 64;
const PAGE_LIMIT = 1000;

export async function collectGarbage(target: SessionScope, head: HistoryHead): Promise<void> {
  try {
    const firstKept = itemName(head.first);
    await deleteWhere(target, ITEM_PREFIX, (record) => record.name < firstKept, firstKept);
    await deleteWhere(target, OPERATION_PREFIX, (record) => epochOf(record.name) < head.epoch);
  } catch {
    // Best effort (see above): the garbage is invisible to every read.
  }
}

async function deleteWhere(
  target: SessionScope,
  prefix: string,
  isGarbage: (record: RecordState) => boolean,
  /** A name from which on nothing is garbage (item positions are collected from the start). */
  until?: string,
): Promise<void> {
  let cursor: string | undefined;
  do {
    const page = await target.gate.listRecordsPage(target.scope, {
      prefix,
      limit: PAGE_LIMIT,
      ...(cursor === undefined ? {} : { cursor }),
    });
    const deletes: WriteRequest[] = page.items
      .filter((record) => record.exists && isGarbage(record))
      .map((record) => ({ name: record.name, expectRevision: record.revision, delete: true }));
    for (let start = 0; start < deletes.length; start += DELETES_PER_COMMIT) {
      const writes = deletes.slice(start, start + DELETES_PER_COMMIT);
      await target.gate.commit({
        scope: target.scope,
        fence: target.fence,
        operationId: `openai-agents:collect:${target.fence}:${writes[0]?.name}:${writes[0]?.expectRevision}`,
        writes,
      });
    }
    const done = until !== undefined && page.items.some((record) => record.name >= until);
    cursor = done ? undefined : (page.nextCursor ?? undefined);
  } while (cursor !== undefined);
}
