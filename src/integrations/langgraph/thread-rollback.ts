/**
 * Undoing an interrupted run (the `rollback` strategy): the thread's tip returns to the checkpoint
 * the run started from, and what the run stored leaves the thread as deletes under the new run's
 * fence, so each removal is an audited commit like any other change:
 *
 * - its checkpoints (every id after the marker's boundary, in any namespace) and their writes;
 * - the pending writes it added to the start checkpoint (a resumed interrupt);
 * - every channel blob newer than what the remaining checkpoints of its namespace use. Blob names
 *   carry the channel version, and the next run numbers its versions from the start checkpoint
 *   again, so a blob left behind would stand in for the next run's value of that version.
 *
 * Checkpoints go first, newest first, so a rollback cut short leaves a tip the run really had.
 */
import { compareChannelVersions, type BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { FencegateApi } from '../../api.js';
import { DEFAULT_LIMITS } from '../../core/limits.js';
import type { DeleteWrite, RecordState } from '../../types.js';
import { unescapeName } from '../name-escape.js';
import { checkpointPrefix, writesPrefix } from './record-names.js';
import { rejection } from './record-writer.js';
import type { RunMarker } from './run-marker.js';

const PAGE = 100;
const BLOB_PREFIX = 'bl/';

export interface RollbackTarget {
  gate: FencegateApi;
  /** Reads the checkpoints that stay, for the channel versions they use. */
  saver: BaseCheckpointSaver;
  threadId: string;
  scope: string;
  /** The fence of the run that rolls back. */
  fence: number;
}

/** Deletes what the marker's run stored; answers how many records it removed. */
export async function rollBackRun(target: RollbackTarget, marker: RunMarker): Promise<number> {
  const { gate, scope } = target;
  const doomed: DeleteWrite[] = [];
  const kept = new Map<string, string>(); // namespace → its newest checkpoint that stays
  const runCheckpoints: { ns: string; id: string; record: RecordState }[] = [];
  for await (const record of records(gate, scope, checkpointPrefix())) {
    const [ns = '', id = ''] = pieces(record.name, checkpointPrefix().length);
    if (id > marker.boundary) runCheckpoints.push({ ns, id, record });
    else if (id > (kept.get(ns) ?? '')) kept.set(ns, id);
  }
  runCheckpoints.sort((a, b) => (a.id < b.id ? 1 : -1));
  for (const { record } of runCheckpoints) doomed.push(deletion(record));
  for (const { ns, id } of runCheckpoints) {
    for await (const write of records(gate, scope, writesPrefix(ns, id)))
      doomed.push(deletion(write));
  }
  if (marker.startCheckpointId !== null && marker.startWrites !== null) {
    const before = new Set(marker.startWrites);
    for await (const write of records(gate, scope, writesPrefix('', marker.startCheckpointId))) {
      if (!before.has(write.name)) doomed.push(deletion(write));
    }
  }
  doomed.push(...(await newerBlobs(target, kept)));
  await deleteAll(target, marker.runId, doomed);
  return doomed.length;
}

/** Blobs of a namespace whose version is newer than its newest remaining checkpoint uses. */
async function newerBlobs(
  target: RollbackTarget,
  kept: Map<string, string>,
): Promise<DeleteWrite[]> {
  const versionsByNs = new Map<string, Record<string, unknown>>();
  for (const [ns, id] of kept) {
    const tuple = await target.saver.getTuple({
      configurable: { thread_id: target.threadId, checkpoint_ns: ns, checkpoint_id: id },
    });
    versionsByNs.set(ns, tuple?.checkpoint.channel_versions ?? {});
  }
  const doomed: DeleteWrite[] = [];
  for await (const blob of records(target.gate, target.scope, BLOB_PREFIX)) {
    const [ns = '', channel = '', version = ''] = pieces(blob.name, BLOB_PREFIX.length);
    const used = versionsByNs.get(ns)?.[channel];
    if (used === undefined || compareChannelVersions(versionValue(version), used as never) > 0) {
      doomed.push(deletion(blob));
    }
  }
  return doomed;
}

async function deleteAll(target: RollbackTarget, runId: string, doomed: DeleteWrite[]) {
  const { maxWrites } = DEFAULT_LIMITS;
  for (let start = 0; start < doomed.length; start += maxWrites) {
    const result = await target.gate.commit({
      scope: target.scope,
      fence: target.fence,
      operationId: `langgraph-rollback:${target.fence}:${runId}:${start / maxWrites}`,
      writes: doomed.slice(start, start + maxWrites),
    });
    if (result.outcome === 'rejected') {
      throw rejection(result);
    }
  }
}

function deletion(record: RecordState): DeleteWrite {
  return { name: record.name, expectRevision: record.revision, delete: true };
}

/** The unescaped pieces of a record name after its kind prefix. */
function pieces(name: string, skip: number): string[] {
  return name.slice(skip).split('/').map(unescapeName);
}

/** The saver numbers versions (LangGraph's default); a name holds them as digits. */
function versionValue(version: string): number | string {
  return /^\d+$/.test(version) ? Number(version) : version;
}

/** The existing records under a prefix, page by page. */
async function* records(
  gate: FencegateApi,
  scope: string,
  prefix: string,
): AsyncGenerator<RecordState> {
  let cursor: string | undefined;
  do {
    const page = await gate.listRecordsPage(scope, {
      prefix,
      limit: PAGE,
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const record of page.items) if (record.exists) yield record;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
}
