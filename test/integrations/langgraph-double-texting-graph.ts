/**
 * The graph the double-texting tests run, in the test process and in the child process: a real
 * StateGraph, the sequence plan → act → report, each node noting which run did it. `act` may wait at a hold
 * (a pause point, or a line on stdin in a child) so another run can arrive while it works; it
 * notes when its run's signal aborted.
 */
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import { stageEffect, type FencedCheckpointSaver } from '../../src/integrations/langgraph/index.js';

export const State = Annotation.Root({
  steps: Annotation<string[]>({ reducer: (done, next) => done.concat(next), default: () => [] }),
});

export interface RunHooks {
  /** Awaited inside `act` of this run. */
  hold?: (signal: AbortSignal | undefined) => Promise<void>;
  /** Called with the order in which runs started their `plan`. */
  planned?: (run: string) => void;
  /** Effects `plan` stages (stageEffect), each under its key to its target. */
  effects?: { key: string; target: string }[];
}

export function buildGraph(saver: FencedCheckpointSaver, run: string, hooks: RunHooks = {}) {
  return new StateGraph(State)
    .addSequence({
      plan: (_state: unknown, config: LangGraphRunnableConfig) => {
        hooks.planned?.(run);
        for (const { key, target } of hooks.effects ?? [])
          stageEffect(config, key, target, { run });
        return { steps: [`plan by ${run}`] };
      },
      act: async (_state: unknown, config: LangGraphRunnableConfig) => {
        await hooks.hold?.(config.signal);
        return { steps: [`act by ${run}`] };
      },
      report: () => ({ steps: [`report by ${run}`] }),
    })
    .addEdge(START, 'plan')
    .addEdge('report', END)
    .compile({ checkpointer: saver });
}

/** The steps a full run adds for `message`. */
export function fullRun(run: string, message: string): string[] {
  return [message, `plan by ${run}`, `act by ${run}`, `report by ${run}`];
}

/** Resolves when `signal` aborts (never, for no signal). */
export function aborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) resolve();
    signal?.addEventListener('abort', () => resolve(), { once: true });
  });
}
