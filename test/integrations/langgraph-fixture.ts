/**
 * What the LangGraph tests share: the three-node graph they run (plan → act → report, each node
 * appending a step that names the run, `act` waiting at the pause point `<run>:act` when given
 * pause points), and a fresh gate on the in-memory reference store per test whose audit log verify replays after it.
 */
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { afterEach, beforeEach, expect } from 'vitest';
import type { Fencegate } from '../../src/gate.js';
import type { PausePoints } from '../../src/testing/index.js';
import { memoryGate } from '../helpers/memory-store.js';

const State = Annotation.Root({
  steps: Annotation<string[]>({ reducer: (done, next) => done.concat(next), default: () => [] }),
});

export function buildGraph(checkpointer: BaseCheckpointSaver, run: string, points?: PausePoints) {
  return new StateGraph(State)
    .addNode('plan', () => ({ steps: [`plan by ${run}`] }))
    .addNode('act', async () => {
      if (points !== undefined) await points.reach(`${run}:act`);
      return { steps: [`act by ${run}`] };
    })
    .addNode('report', () => ({ steps: [`report by ${run}`] }))
    .addEdge(START, 'plan')
    .addEdge('plan', 'act')
    .addEdge('act', 'report')
    .addEdge('report', END)
    .compile({ checkpointer });
}

/** Registers a fresh gate per test, verified and closed after it; answers how to reach it. */
export function verifiedGateEachTest(): () => Fencegate {
  let gate: Fencegate | undefined;
  beforeEach(async () => {
    gate = await memoryGate();
  });
  afterEach(async () => {
    expect((await gate!.verify()).violations).toEqual([]);
    await gate!.close();
  });
  return () => gate!;
}
