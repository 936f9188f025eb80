/**
 * The node-effect suite of fencegate/testing/vitest, run on FencedCheckpointSaver with stageEffect
 * in process on each store (SQLite, PostgreSQL, etcd) and over HTTP with a worker token: every
 * clause holds. And on LangGraph's MemorySaver with the effect called from the node, as a node
 * does without a way to stage it: the clauses it fails are listed as expected failures, so this
 * file states the measured result and notices any change to it.
 */
import { MemorySaver } from '@langchain/langgraph-checkpoint';
import type { RunnableConfig } from '@langchain/core/runnables';
import { expect } from 'vitest';
import type { FencegateApi } from '../../src/api.js';
import { Fencegate } from '../../src/gate.js';
import { FencedCheckpointSaver, stageEffect } from '../../src/integrations/langgraph/index.js';
import {
  validateNodeEffects,
  type NodeEffectsClause,
  type NodeEffectsSubject,
  type WriteOwnershipCheckpointer,
} from '../../src/testing/vitest/index.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';
import { startHttpTenant, type HttpTenant } from './langgraph-http-tenant.js';

/** The saver with stageEffect, its effects read as the intents of the thread's scope. */
function fencedSubject(
  gate: FencegateApi,
  saver: FencedCheckpointSaver,
): NodeEffectsSubject<FencedCheckpointSaver> {
  return {
    checkpointer: saver,
    stageEffect,
    async effectsOf(threadId) {
      const page = await gate.listIntents({ scope: saver.scopeFor(threadId) });
      return page.items.map((intent) => intent.effectKey);
    },
  };
}

for (const kind of AREA_STORES) {
  const stores = storesFor(kind, 'langgraph_node_effects');
  let gate: Fencegate;
  validateNodeEffects<FencedCheckpointSaver>({
    checkpointerName: `FencedCheckpointSaver in process on ${kind.name}`,
    async beforeAll() {
      gate = await Fencegate.open({ store: (await stores.open()).store });
    },
    createSubject: () => fencedSubject(gate, new FencedCheckpointSaver({ gate })),
    async destroySubject({ checkpointer }) {
      await checkpointer.close();
      expect((await gate.verify()).violations).toEqual([]);
      await gate.close();
    },
  });
}

let http: HttpTenant;
validateNodeEffects<FencedCheckpointSaver>({
  checkpointerName: 'FencedCheckpointSaver over HTTP with a worker token that may take over',
  async beforeAll() {
    http = await startHttpTenant();
  },
  createSubject: () => fencedSubject(http.worker, new FencedCheckpointSaver({ gate: http.worker })),
  async destroySubject({ checkpointer }) {
    await checkpointer.close();
    await http.close();
  },
});

/**
 * As measured: a node without a way to stage calls the API where it runs, so the call happens
 * each time the task runs and before its writes are stored, whatever becomes of them.
 */
const CALLED_FROM_THE_NODE_FAILURES: NodeEffectsClause[] = [
  'nothing_commits_before_the_tasks_writes',
  'an_error_drops_the_effect_and_the_rerun_commits_it_once',
  'an_interrupt_drops_the_effect_and_the_resume_commits_it_once',
  'an_existing_key_is_absorbed_not_refused',
  'a_superseded_writers_effects_never_commit',
  'an_effect_never_commits_before_its_origin_checkpoint',
];

validateNodeEffects({
  checkpointerName: 'MemorySaver, the effect called from the node',
  createSubject() {
    const saver = new MemorySaver();
    const checkpointer: WriteOwnershipCheckpointer = Object.assign(saver, {
      claimWriteOwnership: () => Promise.resolve(saver),
    });
    const called = new Map<string, string[]>();
    return {
      checkpointer,
      stageEffect(config: RunnableConfig, key: string) {
        const { thread_id: thread, __pregel_task_id: task } = config.configurable ?? {};
        const effect = `${String(thread)}/${String(task)}/${key}`;
        called.set(String(thread), [...(called.get(String(thread)) ?? []), effect]);
        return effect;
      },
      effectsOf: (threadId: string) => Promise.resolve(called.get(threadId) ?? []),
    };
  },
  expectedFailures: CALLED_FROM_THE_NODE_FAILURES,
});
