/**
 * The run marker: one record, `run`, in a thread's scope, written by runThread under the run's
 * fence when the run starts and marked ended (with the release of the thread) when it ends. It says
 * where the run started, so a `rollback` run can undo a run that was interrupted: the checkpoint
 * that was the tip, the pending writes that checkpoint had, and a boundary id every checkpoint the
 * run makes sorts after. Checkpoint saver records live under `cp/`, `bl/` and `wr/`, so the marker
 * never meets them.
 */
import { uuid6 } from '@langchain/langgraph-checkpoint';
import type { FencegateApi } from '../../api.js';
import type { CommitResult, RecordState } from '../../types.js';
import { unescapeName } from '../name-escape.js';
import { checkpointPrefix, writesPrefix } from './record-names.js';
import { rejection } from './record-writer.js';

export const RUN_MARKER = 'run';

/** Pending writes of the start checkpoint kept in the marker; a longer list is not kept. */
const MAX_START_WRITES = 100;

export interface RunMarker {
  runId: string;
  holder: string;
  fence: number;
  /** The thread's newest checkpoint (root namespace) when the run started; null for a new thread. */
  startCheckpointId: string | null;
  /** Every checkpoint id made by the run sorts after it (uuid6: name order is time order). */
  boundary: string;
  /** Pending-write records of the start checkpoint that existed when the run started. */
  startWrites: string[] | null;
  ended: boolean;
}

export interface MarkerState {
  marker: RunMarker | null;
  /** The marker record's revision (0: never written), what the next write expects. */
  revision: number;
}

export async function readRunMarker(gate: FencegateApi, scope: string): Promise<MarkerState> {
  const record: RecordState = await gate.getRecord(scope, RUN_MARKER);
  return { marker: record.exists ? (record.value as RunMarker) : null, revision: record.revision };
}

export interface RunStart {
  runId: string;
  holder: string;
  fence: number;
}

/** Writes the marker of a run that starts now, under its fence. */
export async function markRunStarted(
  gate: FencegateApi,
  scope: string,
  run: RunStart,
  previous: MarkerState,
): Promise<MarkerState> {
  const tip = await rootTip(gate, scope);
  const now = uuid6(-1);
  const marker: RunMarker = {
    ...run,
    startCheckpointId: tip,
    // A tip written by a process whose clock runs ahead must still count as before the run.
    boundary: tip !== null && tip > now ? tip : now,
    startWrites: tip === null ? [] : await existingWrites(gate, scope, tip),
    ended: false,
  };
  const result = await gate.commit({
    scope,
    fence: run.fence,
    operationId: `langgraph-run:${run.fence}:${run.runId}:start`,
    writes: [{ name: RUN_MARKER, expectRevision: previous.revision, value: marker }],
  });
  return { marker, revision: committedRevision(result) };
}

/** Marks the run ended and releases the thread, in one commit. */
export async function markRunEnded(
  gate: FencegateApi,
  scope: string,
  state: MarkerState & { marker: RunMarker },
): Promise<CommitResult> {
  const { marker } = state;
  return await gate.commit({
    scope,
    fence: marker.fence,
    operationId: `langgraph-run:${marker.fence}:${marker.runId}:end`,
    writes: [
      { name: RUN_MARKER, expectRevision: state.revision, value: { ...marker, ended: true } },
    ],
    release: true,
  });
}

/** The id of the newest checkpoint of the root namespace, or null when there is none. */
async function rootTip(gate: FencegateApi, scope: string): Promise<string | null> {
  const prefix = checkpointPrefix('');
  const page = await gate.listRecordsPage(scope, { prefix, direction: 'desc', limit: 1 });
  const newest = page.items.find((record) => record.exists);
  return newest === undefined ? null : unescapeName(newest.name.slice(prefix.length));
}

/**
 * The names of the start checkpoint's pending-write records, or null past MAX_START_WRITES. A page
 * may end early (its byte budget), so pages are followed until the list is whole or too long.
 */
async function existingWrites(
  gate: FencegateApi,
  scope: string,
  checkpointId: string,
): Promise<string[] | null> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await gate.listRecordsPage(scope, {
      prefix: writesPrefix('', checkpointId),
      limit: MAX_START_WRITES + 1 - names.length,
      ...(cursor === undefined ? {} : { cursor }),
    });
    names.push(...page.items.filter((record) => record.exists).map((record) => record.name));
    if (names.length > MAX_START_WRITES) return null;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return names;
}

function committedRevision(result: CommitResult): number {
  if (result.outcome === 'rejected') {
    throw rejection(result);
  }
  return result.records[0]?.revision ?? 0;
}
