/**
 * ThreadWriteOwner: what `FencedCheckpointSaver.claimWriteOwnership(threadId)` answers, a
 * checkpointer bound to the fence of one claim of one thread. Its writes carry that fence, so once
 * a newer claim (from any process, any language) has moved the fence, each of its `put` and
 * `putWrites` is refused with StaleWriteOwnerError and stores nothing, every time. Reads need no
 * ownership and go to the saver. Use it as a graph's checkpointer for the run that claimed.
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from '@langchain/langgraph-checkpoint';
import type { FencegateApi } from '../../api.js';
import { FencegateError } from '../../errors.js';
import type { HeldLease } from '../lease-keeper.js';
import type { FencedCheckpointSaver } from './checkpoint-saver.js';
import type { NodeEffectStager, StagedNodeEffect } from './node-effects.js';

export class ThreadWriteOwner extends BaseCheckpointSaver implements NodeEffectStager {
  readonly threadId: string;
  readonly #saver: FencedCheckpointSaver;
  readonly #lease: HeldLease;
  readonly #release: () => Promise<void>;

  /** `release` gives the claim's lease back through the saver that holds it. */
  constructor(
    saver: FencedCheckpointSaver,
    threadId: string,
    lease: HeldLease,
    release: () => Promise<void>,
  ) {
    super(saver.serde);
    this.#saver = saver;
    this.threadId = threadId;
    this.#lease = lease;
    this.#release = release;
  }

  /** The fence this owner writes under. */
  get fence(): number {
    return this.#lease.fence;
  }

  /**
   * Aborts once this owner is known to be superseded (its lease renewal refused, a newer claim by
   * the same saver) or its lease ran out; the reason is the FencegateError that said so.
   */
  get signal(): AbortSignal {
    return this.#lease.signal;
  }

  getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return this.#saver.getTuple(config);
  }

  list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    return this.#saver.list(config, options);
  }

  put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    return this.#saver.put(this.#fenced(config), checkpoint, metadata, newVersions);
  }

  putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    return this.#saver.putWrites(this.#fenced(config), writes, taskId, taskPath);
  }

  deleteThread(threadId: string): Promise<void> {
    return this.#saver.deleteThread(threadId);
  }

  get effectGate(): FencegateApi {
    return this.#saver.effectGate;
  }

  /** A node's effect, committed with this owner's writes under its fence (node-effects.ts). */
  stageNodeEffect(config: RunnableConfig, effect: StagedNodeEffect): string {
    return this.#saver.stageNodeEffect(this.#fenced(config), effect);
  }

  /**
   * Gives the thread up: the fence stays and the next claim or run moves it; this writer's later
   * writes are refused `authority_revoked`.
   */
  release(): Promise<void> {
    return this.#release();
  }

  /** The config with this owner's fence; a write for another thread is a mistake, refused. */
  #fenced(config: RunnableConfig): RunnableConfig {
    const given: unknown = config.configurable?.thread_id;
    const threadId = typeof given === 'number' ? String(given) : given;
    if (threadId !== undefined && threadId !== this.threadId) {
      throw new FencegateError(
        'invalid_request',
        `this writer owns thread ${this.threadId}, not ${JSON.stringify(threadId)}; claim that thread with claimWriteOwnership`,
        { field: 'configurable.thread_id' },
      );
    }
    return {
      ...config,
      configurable: { ...config.configurable, thread_id: this.threadId, fence: this.fence },
    };
  }
}
