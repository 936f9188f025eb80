/**
 * A real LangGraph StateGraph on FencedCheckpointSaver: an operator takes the thread over while a
 * run is inside a node. The old run's next write is refused `stale_fence` and its invoke rejects
 * with that error; the new run, given the takeover's fence, continues from the last checkpoint the
 * old run committed. Once for each durability mode.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Fencegate } from '../../src/gate.js';
import { FencedCheckpointSaver } from '../../src/integrations/langgraph/index.js';
import { PausePoints } from '../../src/testing/index.js';
import { startHttpGate } from './http-gate.js';
import { buildGraph, verifiedGateEachTest } from './langgraph-fixture.js';
import { memoryGate } from '../helpers/memory-store.js';

/**
 * Waits until the checkpoint after `plan` is stored: with durability 'async' it is written while
 * `act` already runs, and the takeover must come after it for the resume to start there.
 */
async function planCommitted(saver: FencedCheckpointSaver, thread: string): Promise<void> {
  await expect
    .poll(async () => {
      const tuple = await saver.getTuple({ configurable: { thread_id: thread } });
      return (tuple?.checkpoint.channel_values as { steps?: string[] } | undefined)?.steps;
    })
    .toContain('plan by run-1');
}

describe('LangGraph StateGraph taken over mid-run', () => {
  const gateOfTest = verifiedGateEachTest();
  let gate: Fencegate;
  beforeEach(() => {
    gate = gateOfTest();
  });

  for (const durability of ['sync', 'async', 'exit'] as const) {
    it(`rejects the superseded run and resumes under the new fence (durability ${durability})`, async () => {
      const points = new PausePoints();
      const thread = `thread-${durability}`;
      const first = new FencedCheckpointSaver({ gate, holder: 'run-1' });
      const scope = first.scopeFor(thread);
      // With 'exit' nothing is written before the end of the run, so the run takes its fence up
      // front; otherwise the saver acquires the thread on the run's first write.
      const own =
        durability === 'exit'
          ? { fence: (await gate.acquire({ scope, holder: 'run-1', ttlMs: 60_000 })).fence }
          : {};
      const oldRun = buildGraph(first, 'run-1', points).invoke(
        { steps: ['input'] },
        { configurable: { thread_id: thread, ...own }, durability },
      );
      await points.waitUntilReached('run-1:act', oldRun);
      if (durability !== 'exit') await planCommitted(first, thread);
      const oldFence = (await gate.getScope(scope))?.fence;

      const grant = await gate.takeover(scope, { holder: 'run-2', reason: 'stuck agent' });
      expect(grant.fence).toBe((oldFence ?? 0) + 1);
      points.release('run-1:act');
      await expect(oldRun).rejects.toMatchObject({
        code: 'stale_fence',
        details: { currentFence: grant.fence },
      });

      const second = new FencedCheckpointSaver({ gate, holder: 'run-2' });
      // With 'exit' the old run committed nothing, so the new run starts the thread over.
      const restart = durability === 'exit';
      const resumed = await buildGraph(second, 'run-2').invoke(
        restart ? { steps: ['input'] } : null,
        {
          configurable: { thread_id: thread, fence: grant.fence },
          durability,
        },
      );
      const expected = restart
        ? ['input', 'plan by run-2', 'act by run-2', 'report by run-2']
        : ['input', 'plan by run-1', 'act by run-2', 'report by run-2'];
      expect(resumed.steps).toEqual(expected);

      const state = await buildGraph(second, 'reader').getState({
        configurable: { thread_id: thread },
      });
      expect(state.values).toEqual({ steps: expected });
      expect((state.values as { steps: string[] }).steps).not.toContain('act by run-1');
      await first.close();
      await second.close();
    });
  }
});

describe('FencedCheckpointSaver over HTTP with a worker token', () => {
  it('commits under the fence, is superseded by an operator takeover, and may not delete threads', async () => {
    const gate = await memoryGate();
    const http = await startHttpGate(gate.store, gate.tenant);
    try {
      const points = new PausePoints();
      const first = new FencedCheckpointSaver({ gate: http.worker, holder: 'run-1' });
      const oldRun = buildGraph(first, 'run-1', points).invoke(
        { steps: ['input'] },
        { configurable: { thread_id: 'remote' } },
      );
      await points.waitUntilReached('run-1:act', oldRun);
      await planCommitted(first, 'remote');
      const grant = await http.operator.takeover(first.scopeFor('remote'), { holder: 'run-2' });
      points.release('run-1:act');
      await expect(oldRun).rejects.toMatchObject({ code: 'stale_fence' });

      const second = new FencedCheckpointSaver({
        gate: http.worker,
        holder: 'run-2',
        operatorGate: http.operator,
      });
      const resumed = await buildGraph(second, 'run-2').invoke(null, {
        configurable: { thread_id: 'remote', fence: grant.fence },
      });
      expect(resumed.steps).toEqual(['input', 'plan by run-1', 'act by run-2', 'report by run-2']);

      // Erasing a thread's history is an operator's decision, not a worker's.
      await expect(first.deleteThread('remote')).rejects.toMatchObject({ code: 'forbidden' });
      await second.deleteThread('remote');
      expect(await second.getTuple({ configurable: { thread_id: 'remote' } })).toBeUndefined();
      expect((await gate.verify()).violations).toEqual([]);
      await first.close();
      await second.close();
    } finally {
      await http.close();
      await gate.close();
    }
  });
});
