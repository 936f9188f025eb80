/**
 * The LangGraph.js saver on a store whose pages its byte budget cuts short: under a budget of one
 * byte every page holds one record and a cursor, and the saver follows each one. A checkpoint's
 * pending writes and channel values, the listing of a thread and a run's marker of the writes its
 * start checkpoint already had all come back whole.
 */
import { emptyCheckpoint, uuid6, type Checkpoint } from '@langchain/langgraph-checkpoint';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import type { Fencegate } from '../../src/gate.js';
import { FencedCheckpointSaver } from '../../src/integrations/langgraph/index.js';
import { markRunStarted, readRunMarker } from '../../src/integrations/langgraph/run-marker.js';
import { memoryGate } from '../helpers/memory-store.js';

let gate: Fencegate;
let saver: FencedCheckpointSaver;

beforeEach(async () => {
  gate = await memoryGate({
    limits: { ...DEFAULT_LIMITS, maxPageBytes: 1 },
  });
  saver = new FencedCheckpointSaver({ gate, holder: 'writer' });
});

afterEach(async () => {
  expect((await gate.verify()).violations).toEqual([]);
  await saver.close();
  await gate.close();
});

const thread = { configurable: { thread_id: 't', checkpoint_ns: '' } };

function checkpoint(values: Record<string, unknown>): Checkpoint {
  return {
    ...emptyCheckpoint(),
    id: uuid6(-2),
    channel_values: values,
    channel_versions: Object.fromEntries(Object.keys(values).map((channel) => [channel, 1])),
  };
}

it('reads back a checkpoint, its pending writes and the thread page by page', async () => {
  const values = { a: 'one', b: ['two'], c: { three: 3 } };
  const first = await saver.put(
    thread,
    checkpoint({}),
    { source: 'input', step: -1, parents: {} },
    {},
  );
  const second = await saver.put(
    first,
    checkpoint(values),
    { source: 'loop', step: 0, parents: {} },
    { a: 1, b: 1, c: 1 },
  );
  const writes: [string, unknown][] = [
    ['x', 1],
    ['y', 2],
    ['z', 3],
  ];
  await saver.putWrites(second, writes, 'task');

  const reader = new FencedCheckpointSaver({ gate, holder: 'reader' });
  try {
    const tuple = await reader.getTuple(thread);
    expect(tuple?.checkpoint.id).toBe(second.configurable?.checkpoint_id);
    expect(tuple?.checkpoint.channel_values).toEqual(values);
    expect(tuple?.pendingWrites).toEqual(
      writes.map(([channel, value]) => ['task', channel, value]),
    );
    const listed = [];
    for await (const found of reader.list(thread)) listed.push(found.checkpoint.id);
    expect(listed).toEqual([second.configurable?.checkpoint_id, first.configurable?.checkpoint_id]);
  } finally {
    await reader.close();
  }

  // A run starting on this thread knows every pending write its start checkpoint already had.
  const scope = saver.scopeFor('t');
  const grant = await gate.acquire({ scope, holder: 'writer', ttlMs: 60_000 });
  const started = await markRunStarted(
    gate,
    scope,
    { runId: 'run-1', holder: 'writer', fence: grant.fence },
    await readRunMarker(gate, scope),
  );
  expect(started.marker?.startCheckpointId).toBe(second.configurable?.checkpoint_id);
  expect(started.marker?.startWrites).toHaveLength(writes.length);
});
