/**
 * The node-effect clauses, one function each: what a checkpointer must do with an effect a node
 * stages so that it happens once per task, however often LangGraph runs the task. They drive the
 * checkpointer as LangGraph does (a node's config, then `putWrites` for the task, `put` for the
 * next checkpoint) and read what was committed through the subject, so they check any
 * checkpointer that offers a way to stage effects, and state what one without it does.
 *
 * The failure they describe: a node calls an outside API, then the task runs again (its process
 * died before its writes were stored, it failed, it was interrupted and resumed, it belonged to a
 * run another run superseded), and the API is called again.
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import type { PendingWrite } from '@langchain/langgraph-checkpoint';
import {
  configOf,
  orderedId,
  putCheckpoint,
  type WriteOwnershipCheckpointer,
  type WriteOwnershipWriter,
} from './write-ownership-clauses.js';

/** What the clauses are given: the checkpointer, and how effects are staged and read. */
export interface NodeEffectsSubject<T extends WriteOwnershipCheckpointer> {
  checkpointer: T;
  /**
   * Called where a node would call it, with the node's config (its `__pregel_checkpointer` the
   * writer of the run): stages the effect, or, for a checkpointer without staging, causes it.
   * Answers the effect's key.
   */
  stageEffect(config: RunnableConfig, key: string, target: string, payload: unknown): unknown;
  /** The keys of the effects committed (or caused) on a thread so far, once per commit. */
  effectsOf(threadId: string): Promise<string[]>;
}

type Subject = NodeEffectsSubject<WriteOwnershipCheckpointer>;
type Clause = (subject: Subject) => Promise<void>;

/** A failed clause: the message says what the checkpointer did instead. */
export class NodeEffectsViolation extends Error {
  override readonly name = 'NodeEffectsViolation';
}

function check(condition: boolean, message: () => string): void {
  if (!condition) throw new NodeEffectsViolation(message());
}

const ERROR_CHANNEL = '__error__';
const INTERRUPT_CHANNEL = '__interrupt__';
const TARGET = 'crm';

/** The config LangGraph gives a node of task `taskId` whose step ran from `origin`. */
export function nodeConfig(
  writer: WriteOwnershipWriter,
  threadId: string,
  taskId: string,
  origin: string,
): RunnableConfig {
  return {
    configurable: {
      thread_id: threadId,
      checkpoint_ns: `act:${taskId}`,
      checkpoint_map: { '': origin },
      __pregel_task_id: taskId,
      __pregel_checkpointer: writer,
    },
  };
}

/** A thread owned by a fresh writer, with the checkpoint its next step runs from. */
async function threadAt(subject: Subject) {
  const threadId = `node-effects-${orderedId()}`;
  const writer = await subject.checkpointer.claimWriteOwnership(threadId);
  const origin = await putCheckpoint(writer, threadId, 0);
  return { threadId, writer, origin, taskId: orderedId() };
}

/** The task's writes, as LangGraph stores them for the checkpoint its step ran from. */
function putWrites(
  writer: WriteOwnershipWriter,
  threadId: string,
  origin: string,
  taskId: string,
  writes: PendingWrite[] = [['steps', ['act']]],
): Promise<void> {
  return writer.putWrites(configOf(threadId, origin), writes, taskId);
}

async function stage(subject: Subject, config: RunnableConfig, key = 'notify'): Promise<string> {
  return String(await subject.stageEffect(config, key, TARGET, { key }));
}

function once(effects: string[], key: string): boolean {
  return effects.filter((one) => one === key).length === 1;
}

async function droppedWith(subject: Subject, channel: string): Promise<void> {
  const { threadId, writer, origin, taskId } = await threadAt(subject);
  const config = nodeConfig(writer, threadId, taskId, origin);
  const key = await stage(subject, config);
  await putWrites(writer, threadId, origin, taskId, [[channel, { message: 'ended' }]]);
  const after = await subject.effectsOf(threadId);
  check(
    after.length === 0,
    () => `the task ended with ${channel}, yet ${after.length} effect(s) committed`,
  );
  check((await stage(subject, config)) === key, () => 'the rerun of the task staged another key');
  await putWrites(writer, threadId, origin, taskId);
  const effects = await subject.effectsOf(threadId);
  check(once(effects, key), () => `after the rerun the effect is there ${effects.length} times`);
}

export const NODE_EFFECT_CLAUSES = {
  /** The effect a task staged is committed with the task's writes. */
  async effect_commits_with_the_tasks_writes(subject: Subject) {
    const { threadId, writer, origin, taskId } = await threadAt(subject);
    const key = await stage(subject, nodeConfig(writer, threadId, taskId, origin));
    await putWrites(writer, threadId, origin, taskId);
    const effects = await subject.effectsOf(threadId);
    check(once(effects, key), () => `expected the effect once, found ${JSON.stringify(effects)}`);
  },

  /** Staging alone causes nothing: a task that never ends well never has its effect. */
  async nothing_commits_before_the_tasks_writes(subject: Subject) {
    const { threadId, writer, origin, taskId } = await threadAt(subject);
    await stage(subject, nodeConfig(writer, threadId, taskId, origin));
    const effects = await subject.effectsOf(threadId);
    check(effects.length === 0, () => `the effect happened before the task's writes were stored`);
  },

  /** A task that fails drops its effect; its rerun stages the same key, which commits once. */
  async an_error_drops_the_effect_and_the_rerun_commits_it_once(subject: Subject) {
    await droppedWith(subject, ERROR_CHANNEL);
  },

  /** A task that calls interrupt() drops its effect; the resumed task commits it once. */
  async an_interrupt_drops_the_effect_and_the_resume_commits_it_once(subject: Subject) {
    await droppedWith(subject, INTERRUPT_CHANNEL);
  },

  /** The key names the task: the same task and key give it, another task another. */
  async the_key_names_the_task(subject: Subject) {
    const { threadId, writer, origin, taskId } = await threadAt(subject);
    const first = await stage(subject, nodeConfig(writer, threadId, taskId, origin));
    const again = await stage(subject, nodeConfig(writer, threadId, taskId, origin));
    const other = await stage(subject, nodeConfig(writer, threadId, orderedId(), origin));
    check(first === again, () => 'the same task and key staged two keys');
    check(first !== other, () => 'two tasks staged the same key');
  },

  /** The task's writes committed again (a replay of its step) keep the effect once, without error. */
  async an_existing_key_is_absorbed_not_refused(subject: Subject) {
    const { threadId, writer, origin, taskId } = await threadAt(subject);
    const key = await stage(subject, nodeConfig(writer, threadId, taskId, origin));
    await putWrites(writer, threadId, origin, taskId);
    const next = await subject.checkpointer.claimWriteOwnership(threadId);
    await stage(subject, nodeConfig(next, threadId, taskId, origin));
    try {
      await putWrites(next, threadId, origin, taskId);
    } catch (error) {
      throw new NodeEffectsViolation(`the replayed task's writes were refused: ${String(error)}`);
    }
    const effects = await subject.effectsOf(threadId);
    check(once(effects, key), () => `after the replay the effect is there ${effects.length} times`);
  },

  /** A writer superseded while its node ran has nothing it staged committed. */
  async a_superseded_writers_effects_never_commit(subject: Subject) {
    const { threadId, writer, origin, taskId } = await threadAt(subject);
    const key = await stage(subject, nodeConfig(writer, threadId, taskId, origin));
    await subject.checkpointer.claimWriteOwnership(threadId);
    await putWrites(writer, threadId, origin, taskId).catch(() => undefined);
    const effects = await subject.effectsOf(threadId);
    check(!effects.includes(key), () => 'the superseded writer’s effect was committed');
  },

  /** A run that stores no task writes (durability exit) has the effect ride its next checkpoint. */
  async without_task_writes_the_effect_rides_the_next_checkpoint(subject: Subject) {
    const { threadId, writer, origin, taskId } = await threadAt(subject);
    const key = await stage(subject, nodeConfig(writer, threadId, taskId, origin));
    await putCheckpoint(writer, threadId, 1, origin);
    const effects = await subject.effectsOf(threadId);
    check(
      once(effects, key),
      () => `expected the effect once with the checkpoint, found ${effects.length}`,
    );
  },

  /** An effect commits with or after the checkpoint its step ran from, never before it. */
  async an_effect_never_commits_before_its_origin_checkpoint(subject: Subject) {
    const threadId = `node-effects-${orderedId()}`;
    const writer = await subject.checkpointer.claimWriteOwnership(threadId);
    const origin = await putCheckpoint(writer, threadId, 0);
    // The next step's checkpoint is not stored yet when its task asks for its writes.
    const pendingOrigin = orderedId();
    const taskId = orderedId();
    const key = await stage(subject, nodeConfig(writer, threadId, taskId, pendingOrigin));
    const writes = putWrites(writer, threadId, pendingOrigin, taskId);
    writes.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const early = await subject.effectsOf(threadId);
    check(
      !early.includes(key),
      () => 'the effect committed before the checkpoint its step ran from',
    );
    await writer.put(
      configOf(threadId, origin),
      {
        v: 4,
        id: pendingOrigin,
        ts: new Date().toISOString(),
        channel_values: {},
        channel_versions: {},
        versions_seen: {},
      },
      { source: 'loop', step: 1, parents: {} },
      {},
    );
    await writes;
    check(once(await subject.effectsOf(threadId), key), () => 'the effect never committed');
  },
} satisfies Record<string, Clause>;

export type NodeEffectsClause = keyof typeof NODE_EFFECT_CLAUSES;
