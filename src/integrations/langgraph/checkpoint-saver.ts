/**
 * FencedCheckpointSaver: a LangGraph checkpoint saver whose every write is a fenced fencegate
 * commit. A thread is one scope (`scopeFor(threadId)`); its checkpoints, channel blobs and pending
 * writes are records of that scope (see record-names.ts). A run that is superseded (an operator
 * took the thread over, a cutover moved it) has its next checkpoint refused `stale_fence`, so
 * `graph.invoke` rejects with that error instead of overwriting its successor's state.
 *
 * `claimWriteOwnership(threadId)` takes a thread for a new owner (acquire, or take over a live
 * one) and answers a checkpointer bound to the new fence (thread-write-owner.ts). A superseded
 * writer's writes are refused with StaleWriteOwnerError, the store's refusal under its catalog code.
 */
import { randomUUID } from 'node:crypto';
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  ERROR,
  INTERRUPT,
  TASKS,
  WRITES_IDX_MAP,
  compareWritesSortKeys,
  getCheckpointId,
  maxChannelVersion,
  writesSortKey,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import type { FencegateApi } from '../../api.js';
import { DEFAULT_LIMITS } from '../../core/limits.js';
import { FencegateError, isFencegateError } from '../../errors.js';
import type { IntentRequest, ListRecordsQuery, RecordState } from '../../types.js';
import { escapeName, unescapeName } from '../name-escape.js';
import {
  DEFAULT_SCOPE_PREFIX,
  blobName,
  checkpointName,
  checkpointPrefix,
  writeName,
  writesPrefix,
} from './record-names.js';
import { CheckpointLanding } from './checkpoint-landing.js';
import {
  MAX_EFFECTS_PER_TASK,
  nodeIntent,
  type NodeEffectStager,
  type StagedNodeEffect,
} from './node-effects.js';
import type { RecordToWrite } from './record-writer.js';
import { StagedEffects, type WriterKey } from './staged-effects.js';
import { asStaleWriteOwner, isStaleWriteOwnerError } from './stale-write-owner-error.js';
import { ThreadLeases } from './thread-leases.js';
import { ThreadWriteBatch } from './thread-write-batch.js';
import { ThreadWriteOwner } from './thread-write-owner.js';

export interface FencedCheckpointSaverOptions {
  /** A Fencegate, or a FencegateClient with a worker token. */
  gate: FencegateApi;
  /**
   * Who holds a thread's lease when a run brings no `configurable.fence`; a claim holds the
   * thread as `<holder>:<claim id>`. Default: an id unique to this saver instance, so replicas
   * never share a fence by accident (for runs without a fence, replicas given the same holder
   * share one: each acquire of the other's live lease answers the same fence).
   */
  holder?: string;
  /** The lease of such a run, renewed every third of it. Default 30 s. */
  ttlMs?: number;
  /** Scopes are `<scopePrefix><thread id>`. Default `langgraph/`. */
  scopePrefix?: string;
  /**
   * Deletes threads: deleting a scope is an operator action. Defaults to `gate`, which over HTTP
   * then needs an operator token; a saver with only a worker token cannot erase history.
   */
  operatorGate?: FencegateApi;
  /** Writes per commit; the store's limit (64 by default). */
  maxWrites?: number;
  serde?: SerializerProtocol;
  /**
   * The policy version this saver runs: its leases are acquired (and a thread new to the store
   * pinned) under it, and its commits are labelled with it. A thread pinned to another version is
   * refused `policy_mismatch` (`details.currentPolicyVersion`) before anything is written.
   */
  policyVersion?: string;
}

/** A value as the serializer typed it; the bytes as base64 so the record stays JSON. */
interface Serialized {
  type: string;
  data: string;
}

interface StoredCheckpoint {
  ns: string;
  id: string;
  parent: string | null;
  checkpoint: Serialized;
  metadata: Serialized;
}

interface StoredWrite {
  task: string;
  channel: string;
  path: string;
  index: number;
  value: Serialized;
}

/** A blob for a channel that has a new version but no value (LangGraph's empty channel). */
const EMPTY: Serialized = { type: 'empty', data: '' };
const PAGE = 100;
/** Where LangGraph puts the run's checkpointer in each task's config. */
const CHECKPOINTER_KEY = '__pregel_checkpointer';
const DEFAULT_TTL_MS = 30_000;

/** The writes of a task that ended in an error or an interrupt: its staged effects are dropped. */
const FAILED_TASK_CHANNELS: ReadonlySet<string> = new Set([ERROR, INTERRUPT]);

export class FencedCheckpointSaver extends BaseCheckpointSaver implements NodeEffectStager {
  readonly #gate: FencegateApi;
  readonly #operatorGate: FencegateApi;
  readonly #scopePrefix: string;
  readonly #leases: ThreadLeases;
  /** Writes asked for in the same turn on one thread go out as one commit (thread-write-batch.ts). */
  readonly #batch: ThreadWriteBatch;
  /** Effects nodes staged, until their task's writes (or the run's checkpoint) commit them. */
  readonly #effects = new StagedEffects();
  /** Stored checkpoints: effects commit with or after the checkpoint their step ran from. */
  readonly #landing: CheckpointLanding;
  /** Who holds this saver's leases: `options.holder`, or an id unique to this instance. */
  readonly holder: string;
  /** The policy version the saver acquires and commits under, if it names one. */
  readonly policyVersion: string | undefined;

  constructor(options: FencedCheckpointSaverOptions) {
    super(options.serde);
    this.#gate = options.gate;
    this.#operatorGate = options.operatorGate ?? options.gate;
    this.#scopePrefix = options.scopePrefix ?? DEFAULT_SCOPE_PREFIX;
    this.holder = options.holder ?? `langgraph-saver-${randomUUID()}`;
    this.policyVersion = options.policyVersion;
    this.#leases = new ThreadLeases(
      options.gate,
      this.holder,
      options.ttlMs ?? DEFAULT_TTL_MS,
      options.policyVersion,
    );
    this.#batch = new ThreadWriteBatch(options.gate, {
      maxWrites: options.maxWrites ?? DEFAULT_LIMITS.maxWrites,
      maxIntents: DEFAULT_LIMITS.maxIntents,
      policyVersion: options.policyVersion,
    });
    this.#landing = new CheckpointLanding(options.ttlMs ?? DEFAULT_TTL_MS);
  }

  /** The gate node effects are committed to and read from (`awaitEffect`). */
  get effectGate(): FencegateApi {
    return this.#gate;
  }

  /**
   * Keeps a node's effect for its task's writes (node-effects.ts `stageEffect` calls it); answers
   * the effect key. The run's fence, when it brings one, says whose writes may carry it.
   */
  stageNodeEffect(config: RunnableConfig, effect: StagedNodeEffect): string {
    const scope = this.scopeFor(effect.threadId);
    const writer = writerOf(config);
    const intent = nodeIntent(scope, effect);
    const kept = this.#effects.stage(
      scope,
      writer,
      effect.taskId,
      effect.origin,
      intent,
      MAX_EFFECTS_PER_TASK,
    );
    if (!kept) {
      throw new FencegateError(
        'invalid_request',
        `stageEffect: a task stages at most ${MAX_EFFECTS_PER_TASK} effects (they commit together); stage one effect carrying a list instead`,
        { field: 'key' },
      );
    }
    return intent.effectKey;
  }

  /**
   * Takes the thread for a new owner: acquires it, or takes it over from a live owner (another
   * saver, a run of this one, an earlier claim), and answers a checkpointer whose writes carry the
   * new fence. Every earlier writer of the thread is refused from then on. Over HTTP the takeover
   * needs an operator token, or a worker token whose take-over right covers the thread's scope.
   */
  async claimWriteOwnership(threadId: string): Promise<ThreadWriteOwner> {
    const id = String(threadId);
    const scope = this.scopeFor(id);
    const lease = await this.#leases.claim(scope);
    return new ThreadWriteOwner(this, id, lease, () => this.#leases.releaseLease(scope, lease));
  }

  /** What this saver reads and writes through (a FencedStore of its threads shares it). */
  get gate(): FencegateApi {
    return this.#gate;
  }

  /**
   * The fence a write of `config`'s thread carries: the fence of the claim's writer when it is the
   * run's checkpointer (a node's config names it), else the run's `configurable.fence`, else this
   * saver's lease on the thread, acquired now if it holds none.
   */
  async fenceFor(config: RunnableConfig): Promise<number> {
    const threadId = requireThread(config, 'write');
    const checkpointer: unknown = config.configurable?.[CHECKPOINTER_KEY];
    if (checkpointer instanceof ThreadWriteOwner && checkpointer.threadId === threadId) {
      return checkpointer.fence;
    }
    return await this.#fence(config, this.scopeFor(threadId));
  }

  /** The scope of a thread: acquire or take it over to give a run its fence. */
  scopeFor(threadId: string): string {
    return `${this.#scopePrefix}${escapeName(String(threadId))}`;
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = threadOf(config);
    if (threadId === undefined) return undefined;
    const ns = namespaceOf(config) ?? '';
    const scope = this.scopeFor(threadId);
    const checkpointId = getCheckpointId(config);
    let record: RecordState | undefined;
    if (checkpointId) {
      record = await this.#gate.getRecord(scope, checkpointName(ns, checkpointId));
    } else {
      // Name order is time order: the first record newest first is the one wanted.
      const newestFirst = { prefix: checkpointPrefix(ns), direction: 'desc' } as const;
      for await (const newest of this.#records(scope, newestFirst, 1)) {
        if (!newest.exists) continue;
        record = newest;
        break;
      }
    }
    if (record === undefined || !record.exists) return undefined;
    const stored = record.value as StoredCheckpoint;
    return await this.#toTuple(threadId, stored, await this.#load(stored.metadata));
  }

  async *list(
    config: RunnableConfig,
    options: CheckpointListOptions = {},
  ): AsyncGenerator<CheckpointTuple> {
    const { before, filter } = options;
    let remaining = options.limit ?? Number.POSITIVE_INFINITY;
    if (remaining <= 0) return;
    const ns = namespaceOf(config);
    const onlyId = config.configurable?.checkpoint_id as string | undefined;
    const beforeId = before?.configurable?.checkpoint_id as string | undefined;
    const threadId = threadOf(config);
    const threads = threadId === undefined ? this.#threads() : single(threadId);
    for await (const thread of threads) {
      const query: ListRecordsQuery = { prefix: checkpointPrefix(ns), direction: 'desc' };
      // Within one namespace the name index starts right below `before`.
      if (ns !== undefined && beforeId) query.after = checkpointName(ns, beforeId);
      for await (const record of this.#records(this.scopeFor(thread), query)) {
        if (!record.exists) continue;
        const stored = record.value as StoredCheckpoint;
        if (onlyId && stored.id !== onlyId) continue;
        if (beforeId && !(stored.id < beforeId)) continue;
        const metadata = (await this.#load(stored.metadata)) as CheckpointMetadata;
        if (filter && !matches(metadata, filter)) continue;
        yield await this.#toTuple(thread, stored, metadata);
        remaining -= 1;
        if (remaining <= 0) return;
      }
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = requireThread(config, 'put a checkpoint');
    const ns = namespaceOf(config) ?? '';
    // The values go to their blobs; the checkpoint record keeps everything else. A shallow copy
    // is enough: the serializer reads it before anything else runs (its first step is synchronous).
    const values = checkpoint.channel_values;
    const serialized = Promise.all([
      this.#dump({ ...checkpoint, channel_values: {} }),
      this.#dump(metadata),
    ]);
    // Only the channels that changed get a blob; the others are read from their versioned blobs.
    const records: RecordToWrite[] = await Promise.all(
      Object.entries(newVersions).map(async ([channel, version]) => ({
        name: blobName(ns, channel, version),
        value: channel in values ? await this.#dump(values[channel]) : EMPTY,
        keepExisting: true,
      })),
    );
    const [storedCheckpoint, storedMetadata] = await serialized;
    const stored: StoredCheckpoint = {
      ns,
      id: checkpoint.id,
      parent: (config.configurable?.checkpoint_id as string | undefined) ?? null,
      checkpoint: storedCheckpoint,
      metadata: storedMetadata,
    };
    records.push({ name: checkpointName(ns, checkpoint.id), value: stored });
    // Tasks of earlier steps whose writes were never stored (durability `exit`) commit their
    // effects with this checkpoint; under the other modes their writes took them already.
    const scope = this.scopeFor(threadId);
    const intents = this.#effects.takeOlderThan(scope, writerOf(config), checkpoint.id);
    const landing = `${scope}\0${ns}\0${checkpoint.id}`;
    try {
      await this.#write(config, threadId, records, `put ${ns} ${checkpoint.id}`, intents);
    } catch (error) {
      this.#landing.refused(landing, error);
      throw error;
    }
    this.#landing.landed(landing);
    return {
      configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id },
    };
  }

  async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    const threadId = requireThread(config, 'put writes');
    const checkpointId = config.configurable?.checkpoint_id as string | undefined;
    if (checkpointId === undefined) {
      throw new FencegateError('invalid_request', 'putWrites needs configurable.checkpoint_id', {
        field: 'configurable.checkpoint_id',
      });
    }
    const ns = namespaceOf(config) ?? '';
    // A special channel (an error, an interrupt) has one fixed slot that a later write replaces;
    // a regular write keeps the slot it was first stored in.
    const byName = new Map<string, RecordToWrite>();
    for (const [position, [channel, value]] of writes.entries()) {
      const index = WRITES_IDX_MAP[channel] ?? position;
      const write: StoredWrite = {
        task: taskId,
        channel,
        path: taskPath ?? '',
        index,
        value: await this.#dump(value),
      };
      const name = writeName(ns, checkpointId, taskId, index);
      byName.set(name, { name, value: write, keepExisting: index >= 0 });
    }
    const scope = this.scopeFor(threadId);
    // A task that failed or was interrupted runs again under the same id and stages again.
    const staged = this.#effects.takeTask(scope, writerOf(config), taskId);
    const failed = writes.some(([channel]) => FAILED_TASK_CHANNELS.has(channel));
    const intents = failed ? [] : staged;
    if (byName.size === 0 && intents.length === 0) return;
    if (intents.length > 0) {
      await this.#landing.waitFor(`${scope}\0${ns}\0${checkpointId}`, async () => {
        return (await this.#gate.getRecord(scope, checkpointName(ns, checkpointId))).exists;
      });
    }
    const records = [...byName.values()];
    await this.#write(config, threadId, records, `writes ${ns} ${checkpointId}`, intents);
  }

  async deleteThread(threadId: string): Promise<void> {
    const scope = this.scopeFor(threadId);
    this.#leases.forget(scope);
    try {
      await this.#operatorGate.deleteScope(scope, { reason: 'langgraph deleteThread' });
    } catch (error) {
      if (isFencegateError(error) && ['scope_not_found', 'scope_deleted'].includes(error.code)) {
        return;
      }
      throw error;
    }
  }

  /** Releases this saver's lease on a thread; its next write acquires the thread again. */
  async releaseThread(threadId: string): Promise<void> {
    await this.#leases.release(this.scopeFor(threadId));
  }

  /** Releases every lease this saver holds. */
  async close(): Promise<void> {
    await this.#leases.releaseAll();
  }

  async #write(
    config: RunnableConfig,
    threadId: string,
    records: RecordToWrite[],
    purpose: string,
    intents: IntentRequest[] = [],
  ): Promise<void> {
    const scope = this.scopeFor(threadId);
    try {
      const fence = await this.#fence(config, scope);
      await this.#batch.write({ scope, fence, records, purpose, intents });
    } catch (error) {
      const answer = asStaleWriteOwner(threadId, error);
      // A superseded writer's staged effects are refused with its writes, never handed on.
      if (isStaleWriteOwnerError(answer)) this.#effects.dropWriter(scope, writerOf(config));
      throw answer;
    }
  }

  /** The run's own fence when it brings one, else this saver's lease on the thread. */
  async #fence(config: RunnableConfig, scope: string): Promise<number> {
    const given: unknown = config.configurable?.fence;
    if (given === undefined) return (await this.#leases.hold(scope)).fence;
    if (typeof given !== 'number' || !Number.isSafeInteger(given) || given < 0) {
      throw new FencegateError('invalid_request', 'configurable.fence must be a whole number ≥ 0', {
        field: 'configurable.fence',
      });
    }
    return given;
  }

  async #toTuple(
    threadId: string,
    stored: StoredCheckpoint,
    metadata: unknown,
  ): Promise<CheckpointTuple> {
    const scope = this.scopeFor(threadId);
    const checkpoint = (await this.#load(stored.checkpoint)) as Checkpoint;
    checkpoint.channel_values = await this.#channelValues(scope, stored.ns, checkpoint);
    if (checkpoint.v < 4 && stored.parent !== null) {
      await this.#migratePendingSends(scope, stored, checkpoint);
    }
    const writes = await this.#pendingWrites(scope, stored.ns, stored.id);
    const tuple: CheckpointTuple = {
      config: {
        configurable: { thread_id: threadId, checkpoint_ns: stored.ns, checkpoint_id: stored.id },
      },
      checkpoint,
      metadata: metadata as CheckpointMetadata,
      pendingWrites: await Promise.all(
        writes.map(async (write): Promise<CheckpointPendingWrite> => [
          write.task,
          write.channel,
          await this.#load(write.value),
        ]),
      ),
    };
    if (stored.parent !== null) {
      tuple.parentConfig = {
        configurable: {
          thread_id: threadId,
          checkpoint_ns: stored.ns,
          checkpoint_id: stored.parent,
        },
      };
    }
    return tuple;
  }

  async #channelValues(
    scope: string,
    ns: string,
    checkpoint: Checkpoint,
  ): Promise<Record<string, unknown>> {
    const entries = await Promise.all(
      Object.entries(checkpoint.channel_versions).map(async ([channel, version]) => {
        const blob = await this.#gate.getRecord(scope, blobName(ns, channel, version));
        const value = blob.value as Serialized | null;
        if (!blob.exists || value === null || value.type === EMPTY.type) return null;
        return [channel, await this.#load(value)] as const;
      }),
    );
    return Object.fromEntries(entries.filter((entry) => entry !== null));
  }

  /** Checkpoints before format 4 kept pending sends as writes of their parent, not as a channel. */
  async #migratePendingSends(
    scope: string,
    stored: StoredCheckpoint,
    checkpoint: Checkpoint,
  ): Promise<void> {
    const parentWrites = await this.#pendingWrites(scope, stored.ns, stored.parent ?? '');
    const sends = await Promise.all(
      parentWrites
        .filter((write) => write.channel === TASKS)
        .map((write) => this.#load(write.value)),
    );
    checkpoint.channel_values[TASKS] = sends;
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }

  /** Every pending write of a checkpoint, in the order live execution applies them. */
  async #pendingWrites(scope: string, ns: string, checkpointId: string): Promise<StoredWrite[]> {
    const writes: StoredWrite[] = [];
    for await (const record of this.#records(scope, { prefix: writesPrefix(ns, checkpointId) })) {
      if (record.exists) writes.push(record.value as StoredWrite);
    }
    const key = (write: StoredWrite) => writesSortKey(write.path, write.task, write.index);
    return writes.sort((a, b) => compareWritesSortKeys(key(a), key(b)));
  }

  /**
   * Records page by page: a long thread is never read whole. `firstPage` sizes the first page for
   * a caller that expects to stop early; later pages are full ones.
   */
  async *#records(
    scope: string,
    query: ListRecordsQuery,
    firstPage = PAGE,
  ): AsyncGenerator<RecordState> {
    let cursor: string | undefined;
    do {
      const page = await this.#gate.listRecordsPage(scope, {
        ...query,
        limit: cursor === undefined ? firstPage : PAGE,
        ...(cursor === undefined ? {} : { cursor }),
      });
      yield* page.items;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }

  /** Thread ids of every active thread scope, page by page. */
  async *#threads(): AsyncGenerator<string> {
    let cursor: string | undefined;
    do {
      const page = await this.#gate.listScopes({
        prefix: this.#scopePrefix,
        limit: PAGE,
        ...(cursor === undefined ? {} : { cursor }),
      });
      for (const scope of page.items) {
        if (scope.status === 'active')
          yield unescapeName(scope.scope.slice(this.#scopePrefix.length));
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }

  async #dump(value: unknown): Promise<Serialized> {
    const [type, bytes] = await this.serde.dumpsTyped(value);
    return { type, data: Buffer.from(bytes).toString('base64') };
  }

  async #load(value: Serialized): Promise<unknown> {
    return (await this.serde.loadsTyped(value.type, Buffer.from(value.data, 'base64'))) as unknown;
  }
}

/** LangGraph ids are strings, though a caller may pass a number; anything else is refused. */
function configString(config: RunnableConfig, key: string): string | undefined {
  const value: unknown = config.configurable?.[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  throw new FencegateError('invalid_request', `configurable.${key} must be a string`, {
    field: `configurable.${key}`,
  });
}

/** Whose effects a call carries: the run's own fence, or the saver's lease for a run without. */
function writerOf(config: RunnableConfig): WriterKey {
  const fence: unknown = config.configurable?.fence;
  return typeof fence === 'number' ? fence : 'lease';
}

function threadOf(config: RunnableConfig): string | undefined {
  return configString(config, 'thread_id');
}

function namespaceOf(config: RunnableConfig): string | undefined {
  return configString(config, 'checkpoint_ns');
}

function requireThread(config: RunnableConfig, action: string): string {
  const threadId = threadOf(config);
  if (threadId === undefined) {
    throw new FencegateError(
      'invalid_request',
      `cannot ${action}: configurable.thread_id is missing; pass { configurable: { thread_id } }`,
      { field: 'configurable.thread_id' },
    );
  }
  return threadId;
}

function matches(metadata: CheckpointMetadata, filter: Record<string, unknown>): boolean {
  const fields = metadata as Record<string, unknown>;
  return Object.entries(filter).every(([key, value]) => fields[key] === value);
}

async function* single(threadId: string): AsyncGenerator<string> {
  await Promise.resolve();
  yield threadId;
}
