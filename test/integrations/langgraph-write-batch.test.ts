/**
 * FencedCheckpointSaver writes what it is asked for in one turn on one thread as one commit
 * (thread-write-batch.ts): a step's pending writes and its checkpoint cost one durable transaction,
 * not two. Every call is still answered only once its writes are committed; a refusal of one call's
 * content fails that call alone; a superseded writer's batch stores nothing and every call of it
 * is refused.
 */
import { emptyCheckpoint, type Checkpoint } from '@langchain/langgraph-checkpoint';
import type { RunnableConfig } from '@langchain/core/runnables';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import type { Fencegate } from '../../src/gate.js';
import { FencedCheckpointSaver } from '../../src/integrations/langgraph/index.js';
import type { CommitRequest, CommitResult } from '../../src/types.js';
import { buildGraph } from './langgraph-fixture.js';
import { memoryGate } from '../helpers/memory-store.js';

let gate: Fencegate;
let commits: CommitRequest[];
/** While set, each commit waits for it before it reaches the store. */
let hold: Promise<void> | null;

beforeEach(async () => {
  gate = await memoryGate({
    limits: { ...DEFAULT_LIMITS, maxValueBytes: 4096 },
  });
  commits = [];
  hold = null;
  const commit = gate.commit.bind(gate);
  gate.commit = async (request: CommitRequest): Promise<CommitResult> => {
    commits.push(request);
    if (hold !== null) await hold;
    return await commit(request);
  };
});

afterEach(async () => {
  expect((await gate.verify()).violations).toEqual([]);
  await gate.close();
});

const thread = { configurable: { thread_id: 't', checkpoint_ns: '' } };

function checkpoint(id: string, values: Record<string, unknown> = {}): Checkpoint {
  const channelVersions = Object.fromEntries(Object.keys(values).map((channel) => [channel, 1]));
  return {
    ...emptyCheckpoint(),
    id,
    channel_values: values,
    channel_versions: channelVersions,
  };
}

/** The first checkpoint of the thread, stored on its own; answers the config that points at it. */
async function firstCheckpoint(saver: FencedCheckpointSaver): Promise<RunnableConfig> {
  const stored = await saver.put(
    thread,
    checkpoint('1'),
    { source: 'input', step: -1, parents: {} },
    {},
  );
  commits = [];
  return stored;
}

const settledOf = (promise: Promise<unknown>) => {
  const state = { settled: false, error: undefined as unknown };
  promise.then(
    () => (state.settled = true),
    (error: unknown) => {
      state.settled = true;
      state.error = error;
    },
  );
  return state;
};

describe('FencedCheckpointSaver, calls of one turn on one thread', () => {
  it("writes a step's pending writes and its checkpoint as one commit, both readable after", async () => {
    const saver = new FencedCheckpointSaver({ gate, holder: 'w' });
    const parent = await firstCheckpoint(saver);
    await Promise.all([
      saver.putWrites(parent, [['n', 1]], 'task-a'),
      saver.put(
        parent,
        checkpoint('2', { n: 1 }),
        { source: 'loop', step: 0, parents: {} },
        { n: 1 },
      ),
    ]);
    expect(commits).toHaveLength(1);

    const newest = await saver.getTuple(thread);
    expect(newest?.checkpoint.id).toBe('2');
    expect(newest?.checkpoint.channel_values).toEqual({ n: 1 });
    const before = await saver.getTuple({
      configurable: { ...thread.configurable, checkpoint_id: '1' },
    });
    expect(before?.pendingWrites).toEqual([['task-a', 'n', 1]]);
    await saver.close();
  });

  it('answers no call of the batch before its commit is answered', async () => {
    const saver = new FencedCheckpointSaver({ gate, holder: 'w' });
    const parent = await firstCheckpoint(saver);
    let release!: () => void;
    hold = new Promise((resolve) => (release = resolve));
    const writesCall = saver.putWrites(parent, [['n', 1]], 'task-a');
    const putCall = saver.put(
      parent,
      checkpoint('2', { n: 1 }),
      { source: 'loop', step: 0, parents: {} },
      { n: 1 },
    );
    const writes = settledOf(writesCall);
    const put = settledOf(putCall);
    // The batch's commit is held before the store: however slow the machine, both calls wait.
    while (commits.length === 0) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(commits).toHaveLength(1);
    expect(writes.settled).toBe(false);
    expect(put.settled).toBe(false);

    release();
    await Promise.allSettled([writesCall, putCall]);
    expect(writes).toEqual({ settled: true, error: undefined });
    expect(put).toEqual({ settled: true, error: undefined });
    await saver.close();
  });

  it("fails only the call whose content the store refuses; the other call's writes are stored", async () => {
    const saver = new FencedCheckpointSaver({ gate, holder: 'w' });
    const parent = await firstCheckpoint(saver);
    const [writes, put] = await Promise.allSettled([
      saver.putWrites(parent, [['n', 'x'.repeat(8192)]], 'task-a'),
      saver.put(
        parent,
        checkpoint('2', { n: 1 }),
        { source: 'loop', step: 0, parents: {} },
        { n: 1 },
      ),
    ]);
    expect(writes).toMatchObject({ status: 'rejected', reason: { code: 'payload_too_large' } });
    expect(put.status).toBe('fulfilled');
    expect((await saver.getTuple(thread))?.checkpoint.id).toBe('2');
    const before = await saver.getTuple({
      configurable: { ...thread.configurable, checkpoint_id: '1' },
    });
    expect(before?.pendingWrites).toEqual([]);
    await saver.close();
  });

  it("refuses every call of a superseded writer's batch and stores none of it", async () => {
    const saver = new FencedCheckpointSaver({ gate, holder: 'w' });
    const parent = await firstCheckpoint(saver);
    const owner = await new FencedCheckpointSaver({ gate, holder: 'new' }).claimWriteOwnership('t');
    const results = await Promise.allSettled([
      saver.putWrites(parent, [['n', 1]], 'task-a'),
      saver.put(
        parent,
        checkpoint('2', { n: 1 }),
        { source: 'loop', step: 0, parents: {} },
        { n: 1 },
      ),
    ]);
    for (const result of results) {
      expect(result).toMatchObject({
        status: 'rejected',
        reason: { code: 'stale_fence', isStaleWriteOwnerError: true },
      });
    }
    expect((await saver.getTuple(thread))?.checkpoint.id).toBe('1');
    const before = await saver.getTuple({
      configurable: { ...thread.configurable, checkpoint_id: '1' },
    });
    expect(before?.pendingWrites).toEqual([]);
    await owner.release();
    await saver.close();
  });

  it('keeps the first value of a regular pending write and the last of a special channel slot', async () => {
    const saver = new FencedCheckpointSaver({ gate, holder: 'w' });
    const parent = await firstCheckpoint(saver);
    await Promise.all([
      saver.putWrites(parent, [['n', 'first']], 'task-a'),
      saver.putWrites(parent, [['n', 'second']], 'task-a'),
      saver.putWrites(parent, [['__error__', 'first failure']], 'task-b'),
      saver.putWrites(parent, [['__error__', 'second failure']], 'task-b'),
    ]);
    expect(commits).toHaveLength(1);
    const tuple = await saver.getTuple({
      configurable: { ...thread.configurable, checkpoint_id: '1' },
    });
    expect(tuple?.pendingWrites).toEqual(
      expect.arrayContaining([
        ['task-a', 'n', 'first'],
        ['task-b', '__error__', 'second failure'],
      ]),
    );
    expect(tuple?.pendingWrites).toHaveLength(2);
    await saver.close();
  });
});

describe('FencedCheckpointSaver, calls of one turn past the write limit', () => {
  it('splits them between commits, each call whole in one commit', async () => {
    const saver = new FencedCheckpointSaver({ gate, holder: 'w', maxWrites: 4 });
    const parent = await firstCheckpoint(saver);
    const three = (value: string): [string, unknown][] => [
      ['a', value],
      ['b', value],
      ['c', value],
    ];
    await Promise.all([
      saver.putWrites(parent, three('x'), 'task-a'),
      saver.putWrites(parent, three('y'), 'task-b'),
    ]);
    const tasksOf = (request: CommitRequest) =>
      new Set((request.writes ?? []).map((write) => write.name.split('/').at(-2)));
    expect(commits.map((request) => [...tasksOf(request)])).toEqual([['task-a'], ['task-b']]);
    const tuple = await saver.getTuple({
      configurable: { ...thread.configurable, checkpoint_id: '1' },
    });
    expect(tuple?.pendingWrites).toHaveLength(6);
    await saver.close();
  });
});

describe('FencedCheckpointSaver, a run of a graph', () => {
  // LangGraph stores a checkpoint per step (5 for the three nodes: the input, the start, one per
  // node) and each task's pending writes; each task's writes join a checkpoint's commit. Under
  // `async` LangGraph hands over each checkpoint only once the one before it is stored, so they
  // cannot share commits: a run costs as many as under `sync`, however soon its nodes return.
  for (const durability of ['async', 'sync'] as const) {
    it(`stores the three-node graph in one commit per checkpoint under ${durability}`, async () => {
      const saver = new FencedCheckpointSaver({ gate, holder: 'w' });
      const graph = buildGraph(saver, 'r');
      const config = { configurable: { thread_id: durability }, durability };
      await graph.invoke({ steps: [] }, config);
      expect(commits).toHaveLength(5);
      const history = [];
      for await (const tuple of saver.list({ configurable: { thread_id: durability } })) {
        history.push(tuple);
      }
      expect(history).toHaveLength(5);
      expect(history[0]?.checkpoint.channel_values).toEqual({
        steps: ['plan by r', 'act by r', 'report by r'],
      });
      await saver.close();
    });
  }
});
