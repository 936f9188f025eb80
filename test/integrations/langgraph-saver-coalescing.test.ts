/**
 * FencedCheckpointSaver over HTTP commits through its FencegateClient, so the client's coalescing
 * applies to it: the commits of several threads written at once reach the server as
 * `POST /v1/commits` batches, and with `coalesceCommits: false` as one `POST /v1/commit` each.
 * Within one thread the saver already joins a step's calls into one commit (thread-write-batch.ts);
 * what the client joins are the commits of different threads. Counted at the server, and every
 * checkpoint read back whole by another saver on another client.
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import { emptyCheckpoint, uuid6, type Checkpoint } from '@langchain/langgraph-checkpoint';
import { afterEach, describe, expect, it } from 'vitest';
import { FencedCheckpointSaver } from '../../src/integrations/langgraph/index.js';
import { PausePoints } from '../../src/testing/index.js';
import { startCommitCountingServer, type CommitCountingServer } from './commit-counting-server.js';
import { buildGraph } from './langgraph-fixture.js';

const THREADS = 6;
const threadIds = Array.from({ length: THREADS }, (_, i) => `thread-${i}`);

let server: CommitCountingServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function checkpoint(values: Record<string, unknown>): Checkpoint {
  return {
    ...emptyCheckpoint(),
    id: uuid6(-2),
    channel_values: values,
    channel_versions: Object.fromEntries(Object.keys(values).map((channel) => [channel, 1])),
  };
}

describe.each([
  { coalesceCommits: true, mode: 'coalescing' },
  { coalesceCommits: false, mode: 'coalescing off' },
])('FencedCheckpointSaver over HTTP, $mode', ({ coalesceCommits }) => {
  it('graphs on several threads at once: their step commits go out as the client sends them', async () => {
    server = await startCommitCountingServer({ coalesceCommits });
    const saver = new FencedCheckpointSaver({ gate: server.worker, holder: 'writer' });
    const points = new PausePoints();
    // Each run holds in `act` until every run is there: their leases and first steps, which
    // finish apart as their answers come back, are behind them. Released in one turn, the runs
    // ask for each later step's writes in one turn too, which is when the client can join them.
    const runs = threadIds.map((threadId) =>
      buildGraph(saver, threadId, points).invoke(
        { steps: [threadId] },
        { configurable: { thread_id: threadId }, durability: 'sync' },
      ),
    );
    for (const [i, threadId] of threadIds.entries()) {
      await points.waitUntilReached(`${threadId}:act`, runs[i]);
    }
    server.resetCounts();
    for (const threadId of threadIds) points.release(`${threadId}:act`);
    const done = await Promise.all(runs);
    const counts = server.counts();
    await saver.close();

    // Two steps left per thread (act, report), each one commit of its writes and checkpoint.
    const commits = 2 * THREADS;
    if (coalesceCommits) {
      expect(counts.alone).toBe(0);
      expect(counts.batched).toBe(commits);
      expect(counts.batches).toBeGreaterThanOrEqual(1);
      expect(counts.batches).toBeLessThan(commits);
    } else {
      expect(counts).toEqual({ alone: commits, batches: 0, batched: 0 });
    }

    const reader = new FencedCheckpointSaver({ gate: server.reader, holder: 'reader' });
    for (const [i, threadId] of threadIds.entries()) {
      const full = [threadId, `plan by ${threadId}`, `act by ${threadId}`, `report by ${threadId}`];
      expect(done[i]?.steps).toEqual(full);
      const config = { configurable: { thread_id: threadId } };
      expect((await buildGraph(reader, threadId).getState(config)).values).toEqual({
        steps: full,
      });
      // The input checkpoint, then one per step: each holds the steps done up to it.
      const history = [];
      for await (const tuple of reader.list(config)) history.push(tuple);
      expect(history.map((tuple) => tuple.metadata?.step)).toEqual([3, 2, 1, 0, -1]);
      for (const tuple of history.filter((t) => (t.metadata?.step ?? -1) >= 0)) {
        expect(tuple.checkpoint.channel_values.steps).toEqual(
          full.slice(0, (tuple.metadata?.step ?? 0) + 1),
        );
      }
    }
  });

  it("parallel tasks' writes and checkpoints of several threads at once", async () => {
    server = await startCommitCountingServer({ coalesceCommits });
    const saver = new FencedCheckpointSaver({ gate: server.worker, holder: 'writer' });
    // A first checkpoint per thread, one after another: each acquires its thread's lease, so
    // what follows needs no request before its commit.
    const parents: RunnableConfig[] = [];
    for (const threadId of threadIds) {
      parents.push(
        await saver.put(
          { configurable: { thread_id: threadId, checkpoint_ns: '' } },
          checkpoint({}),
          { source: 'input', step: -1, parents: {} },
          {},
        ),
      );
    }
    server.resetCounts();

    // Two tasks of one step (parallel nodes) write, and the step's checkpoint follows, on every
    // thread in the same turn: the saver makes one commit per thread, the client sends them.
    const nexts = threadIds.map((threadId, i) => ({
      threadId,
      id: '',
      values: { a: `a of ${threadId}`, b: [i, { thread: threadId }] },
    }));
    await Promise.all(
      nexts.flatMap((next, i) => {
        const parent = parents[i]!;
        const stored = checkpoint(next.values);
        next.id = stored.id;
        return [
          saver.putWrites(parent, [['a', next.values.a]], 'task-a'),
          saver.putWrites(parent, [['b', next.values.b]], 'task-b'),
          saver.put(parent, stored, { source: 'loop', step: 0, parents: {} }, { a: 1, b: 1 }),
        ];
      }),
    );
    const counts = server.counts();
    await saver.close();

    expect(counts).toEqual(
      coalesceCommits
        ? { alone: 0, batches: 1, batched: THREADS }
        : { alone: THREADS, batches: 0, batched: 0 },
    );

    const reader = new FencedCheckpointSaver({ gate: server.reader, holder: 'reader' });
    for (const [i, next] of nexts.entries()) {
      const thread = { configurable: { thread_id: next.threadId, checkpoint_ns: '' } };
      const newest = await reader.getTuple(thread);
      expect(newest?.checkpoint.id).toBe(next.id);
      expect(newest?.checkpoint.channel_values).toEqual(next.values);
      expect(newest?.metadata).toEqual({ source: 'loop', step: 0, parents: {} });
      expect(newest?.parentConfig?.configurable?.checkpoint_id).toBe(
        parents[i]?.configurable?.checkpoint_id,
      );
      const parent = await reader.getTuple(parents[i]!);
      expect(parent?.pendingWrites).toEqual([
        ['task-a', 'a', next.values.a],
        ['task-b', 'b', next.values.b],
      ]);
    }
  });
});
