/**
 * stageEffect and awaitEffect on a real StateGraph under each durability mode, delivered by the
 * real dispatcher to a real HTTP target: a task that fails or is interrupted after staging drops
 * its effect and its rerun (same task id, same key) delivers it once; a run superseded while its
 * node waits delivers nothing it staged; a fork from the checkpoint the task ran from absorbs the
 * key it committed; an effect commits with or after the checkpoint its step ran from.
 */
import { Command } from '@langchain/langgraph';
import { emptyCheckpoint, type BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FencegateApi } from '../../src/api.js';
import type { Fencegate } from '../../src/gate.js';
import {
  FencedCheckpointSaver,
  StaleWriteOwnerError,
  runThread,
  stageEffect,
} from '../../src/integrations/langgraph/index.js';
import { PausePoints } from '../../src/testing/index.js';
import { nodeConfig } from '../../src/testing/vitest/node-effects-clauses.js';
import type { CommitRequest } from '../../src/types.js';
import { EffectTarget, buildEffectGraph, type StagedKeys } from './langgraph-effects-fixture.js';
import { memoryGate } from '../helpers/memory-store.js';

const DURABILITIES = ['sync', 'async', 'exit'] as const;
const config = (threadId: string) => ({ configurable: { thread_id: threadId } });

describe('node effects (stageEffect) on a real StateGraph', () => {
  let gate: Fencegate;
  let target: EffectTarget;
  beforeEach(async () => {
    gate = await memoryGate();
    target = await EffectTarget.start(gate);
  });
  afterEach(async () => {
    await target.stop();
    expect((await gate.verify()).violations).toEqual([]);
    await gate.close();
  });

  async function delivered(effectKey: string): Promise<void> {
    await expect.poll(async () => (await gate.getIntent(effectKey))?.status).toBe('delivered');
  }

  async function intentsOf(scope: string) {
    return (await gate.listIntents({ scope })).items;
  }

  for (const durability of DURABILITIES) {
    describe(`durability ${durability}`, () => {
      it('a task that fails after staging stores no effect; its rerun stages the same key, delivered once', async () => {
        const saver = new FencedCheckpointSaver({ gate });
        const thread = `fails-${durability}`;
        const staged: StagedKeys = [];
        const graph = buildEffectGraph(saver, 'run-1', staged, { failures: { left: 1 } });
        await expect(
          graph.invoke({ steps: ['input'] }, { ...config(thread), durability }),
        ).rejects.toThrow('act failed after staging');
        expect(await intentsOf(saver.scopeFor(thread))).toEqual([]);

        const state = await graph.invoke(null, { ...config(thread), durability });
        expect(state.steps).toEqual(['input', 'plan by run-1', 'act by run-1', 'report by run-1']);
        expect(staged).toHaveLength(2);
        expect(staged[1]).toBe(staged[0]);
        await delivered(staged[0]!);
        expect(target.deliveries(staged[0]!)).toBe(1);
        expect(await intentsOf(saver.scopeFor(thread))).toHaveLength(1);
        await saver.close();
      });

      it('an interrupt after staging drops the effect; the resumed task stages the same key, delivered once', async () => {
        const saver = new FencedCheckpointSaver({ gate });
        const thread = `approval-${durability}`;
        const staged: StagedKeys = [];
        const graph = buildEffectGraph(saver, 'run-1', staged, { askApproval: true });
        const paused = await graph.invoke({ steps: ['input'] }, { ...config(thread), durability });
        expect((paused as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
        expect(await intentsOf(saver.scopeFor(thread))).toEqual([]);

        await graph.invoke(new Command({ resume: 'yes' }), { ...config(thread), durability });
        expect(staged).toEqual([staged[0], staged[0]]);
        await delivered(staged[0]!);
        expect(target.deliveries(staged[0]!)).toBe(1);
        await saver.close();
      });

      it('a run superseded while its node waits after staging delivers nothing it staged; the successor delivers once', async () => {
        const points = new PausePoints();
        const replicaA = new FencedCheckpointSaver({ gate });
        const replicaB = new FencedCheckpointSaver({ gate });
        const thread = `superseded-${durability}`;
        const stagedA: StagedKeys = [];
        const stagedB: StagedKeys = [];
        const ownerA = await replicaA.claimWriteOwnership(thread);
        const oldRun = buildEffectGraph(ownerA, 'run-1', stagedA, {
          points,
          stageLate: true,
        }).invoke({ steps: ['input'] }, { ...config(thread), durability });
        await points.waitUntilReached('run-1:act', oldRun);
        if (durability !== 'exit') {
          // The checkpoint `act` ran from is stored before the thread changes hands.
          await expect
            .poll(async () => (await replicaB.getTuple(config(thread)))?.checkpoint.channel_values)
            .toMatchObject({ steps: ['input', 'plan by run-1'] });
        }

        const ownerB = await replicaB.claimWriteOwnership(thread);
        points.release('run-1:act');
        await expect(oldRun).rejects.toBeInstanceOf(StaleWriteOwnerError);
        const [notifyA, lateA] = stagedA;
        expect(await gate.getIntent(lateA!)).toBeNull();

        // Under `exit` the old run stored nothing: the successor starts the thread afresh.
        const input = durability === 'exit' ? { steps: ['input'] } : null;
        await buildEffectGraph(ownerB, 'run-2', stagedB).invoke(input, {
          ...config(thread),
          durability,
        });
        const [notifyB] = stagedB;
        // Resumed from the checkpoint `act` ran from, the successor's task has the same id.
        if (durability !== 'exit') expect(notifyB).toBe(notifyA);
        else expect(await gate.getIntent(notifyA!)).toBeNull();
        await delivered(notifyB!);
        expect(target.deliveries(notifyB!)).toBe(1);
        expect(target.deliveries(lateA!)).toBe(0);
        expect((await intentsOf(replicaB.scopeFor(thread))).map((i) => i.effectKey)).toEqual([
          notifyB,
        ]);
        await replicaA.close();
        await replicaB.close();
      });

      it(`a later node reads the outcome: ${durability === 'exit' ? "'pending' (the effect commits when the run ends)" : "the provider's reference"}`, async () => {
        const saver = new FencedCheckpointSaver({ gate });
        const staged: StagedKeys = [];
        const awaitMs = durability === 'exit' ? 100 : 10_000;
        const graph = buildEffectGraph(saver, 'run-1', staged, { awaitMs });
        const thread = `outcome-${durability}`;
        const state = await graph.invoke({ steps: ['input'] }, { ...config(thread), durability });
        expect(state.outcome).toBe(durability === 'exit' ? 'pending' : 'delivered rcpt-1');
        await delivered(staged[0]!);
        expect(target.deliveries(staged[0]!)).toBe(1);
        if (durability === 'exit') {
          // The effect rode the run's only checkpoint: the same commit.
          const intent = await gate.getIntent(staged[0]!);
          const commit = await commitOf(gate, intent!.operationId);
          expect(commit.records?.some((record) => record.name.startsWith('cp/'))).toBe(true);
        }
        await saver.close();
      });
    });
  }

  for (const durability of ['sync', 'async'] as const) {
    it(`a fork from an old checkpoint is a new execution: its task stages a key of its own, and each effect is delivered once (durability ${durability})`, async () => {
      const saver = new FencedCheckpointSaver({ gate });
      const thread = `fork-${durability}`;
      const staged: StagedKeys = [];
      const graph = buildEffectGraph(saver, 'run-1', staged);
      await graph.invoke({ steps: ['input'] }, { ...config(thread), durability });
      await delivered(staged[0]!);

      const origin = await checkpointBefore(graph, thread, 'act');
      // LangGraph forks the old checkpoint into a new one and runs `act` from there: a new task.
      const fork = await graph.invoke(null, {
        configurable: { thread_id: thread, checkpoint_id: origin },
        durability,
      });
      expect(fork.steps.at(-1)).toBe('report by run-1');
      expect(staged).toHaveLength(2);
      expect(staged[1]).not.toBe(staged[0]);
      await delivered(staged[1]!);
      expect(staged.map((key) => target.deliveries(key))).toEqual([1, 1]);
      await saver.close();
    });
  }

  it('a task whose writes are committed again with a key that exists absorbs it: the write is stored, the effect stays one', async () => {
    const replicaA = new FencedCheckpointSaver({ gate });
    const replicaB = new FencedCheckpointSaver({ gate });
    const ownerA = await replicaA.claimWriteOwnership('absorb');
    const task = nodeConfigFor(ownerA, 'absorb', 'task-1');
    const origin = await ownerA.put(
      { configurable: { thread_id: 'absorb', checkpoint_ns: '' } },
      { ...emptyCheckpoint(), id: ORIGIN },
      { source: 'loop', step: 0, parents: {} },
      {},
    );
    const key = stageEffect(task, 'notify', 'crm', { attempt: 1 });
    await ownerA.putWrites(origin, [['steps', ['a']]], 'task-1');
    // The same task committed again by the thread's next owner (a replay of its step).
    const ownerB = await replicaB.claimWriteOwnership('absorb');
    expect(
      stageEffect(nodeConfigFor(ownerB, 'absorb', 'task-1'), 'notify', 'crm', { attempt: 2 }),
    ).toBe(key);
    await ownerB.putWrites(origin, [['steps', ['b']]], 'task-1');
    const intents = await intentsOf(replicaA.scopeFor('absorb'));
    expect(intents.map((intent) => [intent.effectKey, intent.payload])).toEqual([
      [key, { attempt: 1 }],
    ]);
    await delivered(key);
    expect(target.deliveries(key)).toBe(1);
    // The pending write exists (it keeps its first value), then the key: both absorbed, and
    // putWrites answered without an error.
    const commits = (await gate.audit({ scope: replicaA.scopeFor('absorb'), kind: 'commit' }))
      .items;
    expect(commits.map((entry) => [entry.fence, entry.outcome, entry.reason])).toEqual([
      [1, 'committed', null],
      [1, 'committed', null],
      [2, 'rejected', 'stale_revision'],
      [2, 'rejected', 'duplicate_effect'],
    ]);
    await replicaA.close();
    await replicaB.close();
  });

  it('an effect commits with or after the checkpoint its step ran from, however late that checkpoint lands (durability async)', async () => {
    // Checkpoints land late: the step's tasks already ran and asked for their writes.
    const slowCheckpoints = withSlowCheckpoints(gate, 150);
    const saver = new FencedCheckpointSaver({ gate: slowCheckpoints });
    const thread = 'invariant';
    const staged: StagedKeys = [];
    const graph = buildEffectGraph(saver, 'run-1', staged);
    await graph.invoke({ steps: ['input'] }, { ...config(thread), durability: 'async' });
    const origin = await checkpointBefore(graph, thread, 'act');
    const intent = await gate.getIntent(staged[0]!);
    const entries = (await gate.audit({ scope: saver.scopeFor(thread), kind: 'commit' })).items;
    const checkpointAt = entries.findIndex((entry) =>
      entry.records?.some(
        (record) => record.name.endsWith(`/${origin}`) && record.name.startsWith('cp/'),
      ),
    );
    const effectAt = entries.findIndex((entry) => entry.operationId === intent!.operationId);
    expect(checkpointAt).toBeGreaterThanOrEqual(0);
    expect(effectAt).toBeGreaterThanOrEqual(checkpointAt);
    await delivered(staged[0]!);
    await saver.close();
  });

  it('under runThread the effect commits with the run fence, in every durability mode', async () => {
    const saver = new FencedCheckpointSaver({ gate });
    for (const durability of DURABILITIES) {
      const staged: StagedKeys = [];
      const threadId = `run-thread-${durability}`;
      const graph = buildEffectGraph(saver, 'run-1', staged);
      await runThread(graph, {
        gate,
        threadId,
        input: { steps: ['input'] },
        config: { durability },
      });
      const intents = await intentsOf(saver.scopeFor(threadId));
      expect(intents.map((intent) => [intent.effectKey, intent.fence])).toEqual([[staged[0], 1]]);
      await delivered(staged[0]!);
    }
    await saver.close();
  });

  it('refuses a call outside a fenced graph, a bad target and a seventeenth effect of one task, with invalid_request', async () => {
    expect(() => stageEffect({ configurable: {} }, 'k', 'crm', {})).toThrow(
      expect.objectContaining({
        code: 'invalid_request',
        message: expect.stringMatching(/FencedCheckpointSaver/) as unknown,
      }),
    );
    const saver = new FencedCheckpointSaver({ gate });
    const nodeConfig = nodeConfigFor(saver, 't', 'task-1');
    expect(() => stageEffect(nodeConfig, 'k', 'no spaces allowed', {})).toThrow(
      expect.objectContaining({ code: 'invalid_request', details: { field: 'target' } }),
    );
    for (let i = 0; i < 16; i++) stageEffect(nodeConfig, `k${i}`, 'crm', { i });
    // The same key again replaces its payload; a new one is one too many.
    expect(() => stageEffect(nodeConfig, 'k3', 'crm', { again: true })).not.toThrow();
    expect(() => stageEffect(nodeConfig, 'k16', 'crm', {})).toThrow(
      expect.objectContaining({ code: 'invalid_request', details: { field: 'key' } }),
    );
    await saver.close();
  });
});

const ORIGIN = '1f0a0000-0000-6000-8000-000000000000';

/** The config LangGraph gives a node of `taskId` that ran from checkpoint ORIGIN. */
function nodeConfigFor(checkpointer: BaseCheckpointSaver, threadId: string, taskId: string) {
  return nodeConfig(checkpointer, threadId, taskId, ORIGIN);
}

/** The id of the checkpoint whose next step runs `node`. */
async function checkpointBefore(
  graph: ReturnType<typeof buildEffectGraph>,
  thread: string,
  node: string,
): Promise<string> {
  for await (const snapshot of graph.getStateHistory(config(thread))) {
    if (snapshot.next.includes(node)) return snapshot.config.configurable?.checkpoint_id as string;
  }
  throw new Error(`no checkpoint before ${node}`);
}

/** The audit entry of the commit with this operationId. */
async function commitOf(gate: Fencegate, operationId: string) {
  const entries = (await gate.audit({ kind: 'commit' })).items;
  const entry = entries.find((item) => item.operationId === operationId);
  if (entry === undefined) throw new Error(`no commit ${operationId}`);
  return entry;
}

/** The gate, with each commit that stores a checkpoint held back `delayMs`. */
function withSlowCheckpoints(gate: Fencegate, delayMs: number): FencegateApi {
  return new Proxy(gate, {
    get(target, property, receiver) {
      if (property !== 'commit') {
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? (value.bind(target) as unknown) : value;
      }
      return async (request: CommitRequest) => {
        if (request.writes?.some((write) => write.name.startsWith('cp/'))) {
          await new Promise((resolve) => setTimeout(resolve, delayMs));
        }
        return target.commit(request);
      };
    },
  });
}
