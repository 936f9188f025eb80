/**
 * FencedStore: LangGraph's long-term memory store (`BaseStore`) on fencegate records. Memory lives
 * inside the thread's scope (memory-names.ts), so every write is a commit under the fence the
 * thread's checkpoints are written under: a superseded run's memory write is refused by the same
 * check that refuses its checkpoints, and nothing of it is stored.
 *
 * A put may carry a precondition: `ifRevision` (the revision a get answered) or `ifAbsent`. When
 * it does not hold, the put is refused with MemoryConflictError and writes nothing. A put without
 * one is LangGraph's upsert: it replaces whatever the item holds when it lands.
 *
 * BaseStore calls carry no config, so the thread comes from the binding (`forRun(config)`), or,
 * for a store called inside a node, from the node's own config.
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';
import {
  BaseStore,
  type GetOperation,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchOperation,
} from '@langchain/langgraph-checkpoint';
import type { FencegateApi } from '../../api.js';
import { FencegateError } from '../../errors.js';
import type { RecordState, WriteRequest } from '../../types.js';
import type { FencedCheckpointSaver } from './checkpoint-saver.js';
import { MemoryConflictError, type MemoryItem } from './memory-conflict-error.js';
import { checkFilter, matchesFilter } from './memory-filter.js';
import {
  MEMORY_PREFIX,
  checkNamespace,
  memoryAddress,
  memoryName,
  namespacePrefix,
} from './memory-names.js';
import { selectNamespaces } from './memory-namespaces.js';
import { contentOperationId, rejection } from './record-writer.js';
import { asStaleWriteOwner } from './stale-write-owner-error.js';

export interface FencedStoreOptions {
  /** The saver whose threads hold the memory: its gate, its thread scopes, its fences. */
  saver: FencedCheckpointSaver;
}

/** A put's precondition; without one a put replaces whatever the item holds. */
export interface MemoryPrecondition {
  /** Write only while the item is at this revision (from `get` or `search`); 0: never existed. */
  ifRevision?: number;
  /** Write only while the item does not exist (never written, or deleted). */
  ifAbsent?: boolean;
}

export interface MemoryPutOptions extends MemoryPrecondition {
  /** Accepted for LangGraph's signature; FencedStore keeps no vector index. */
  index?: false | string[];
}

/** A PutOperation that may carry a precondition, for `batch`. */
export interface FencedPutOperation extends PutOperation, MemoryPrecondition {}

/**
 * What a memory record holds: the item's value and when the item was first written, in the
 * store's time. The first write cannot know the time its commit lands at: it stores null, and the
 * item's creation is then its record's `updatedAt` until a later write copies that in.
 */
interface StoredMemory {
  value: Record<string, unknown>;
  createdAt: number | null;
}

interface Thread {
  threadId: string;
  scope: string;
  config: RunnableConfig;
}

/** Unconditional puts retried on a concurrent change before the conflict is answered. */
const UPSERT_TRIES = 5;
const PAGE = 100;

export class FencedStore extends BaseStore {
  readonly #saver: FencedCheckpointSaver;
  readonly #gate: FencegateApi;
  readonly #run: RunnableConfig | undefined;

  constructor(options: FencedStoreOptions, run?: RunnableConfig) {
    super();
    this.#saver = options.saver;
    this.#gate = options.saver.gate;
    this.#run = run;
  }

  /**
   * This memory bound to the thread of `config` (`configurable.thread_id`) and the fence its
   * writes carry (`configurable.fence`, the claim's writer named in a node's config, else the
   * saver's lease). Pass it as the run's store: `graph.invoke(input, { ...config, store })`.
   */
  forRun(config: RunnableConfig): FencedStore {
    threadOf(config);
    return new FencedStore({ saver: this.#saver }, config);
  }

  /** `forRun` for a thread and, when the run has one, its fence. */
  forThread(threadId: string, options: { fence?: number } = {}): FencedStore {
    const configurable: Record<string, unknown> = { thread_id: threadId };
    if (options.fence !== undefined) configurable.fence = options.fence;
    return this.forRun({ configurable });
  }

  override async get(namespace: string[], key: string): Promise<MemoryItem | null> {
    const [item] = await this.batch([{ namespace, key }]);
    return item as MemoryItem | null;
  }

  /**
   * Writes `value` under `key`. With `ifRevision` or `ifAbsent` it lands only while that holds,
   * else it is refused with MemoryConflictError; without, it replaces what the item holds.
   */
  override async put(
    namespace: string[],
    key: string,
    value: Record<string, unknown>,
    options?: MemoryPutOptions | false | string[],
  ): Promise<void> {
    const precondition = options === false || Array.isArray(options) ? {} : (options ?? {});
    const op: FencedPutOperation = { namespace, key, value, ...precondition };
    if (precondition.index !== undefined) op.index = precondition.index;
    await this.batch([op]);
  }

  /** Deletes the item; with `ifRevision` only while it is at that revision. */
  override async delete(
    namespace: string[],
    key: string,
    precondition: Pick<MemoryPrecondition, 'ifRevision'> = {},
  ): Promise<void> {
    await this.batch([{ namespace, key, value: null, ...precondition }]);
  }

  /**
   * Runs the operations in order, each seeing the ones before it. Every operation is checked
   * before the first runs, so bad input changes nothing; a refusal (a conflict, a superseded run)
   * stops the batch there, with the operations before it applied.
   */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    operations.forEach(checkOperation);
    const thread = this.#thread();
    const results: unknown[] = [];
    for (const op of operations) {
      if ('namespacePrefix' in op) results.push(await this.#search(thread, op));
      else if ('value' in op) results.push(await this.#put(thread, op));
      else if ('key' in op) results.push(await this.#get(thread, op));
      else results.push(await this.#listNamespaces(thread, op));
    }
    return results as OperationResults<Op>;
  }

  #thread(): Thread {
    const config: RunnableConfig | undefined =
      this.#run ??
      (AsyncLocalStorageProviderSingleton.getRunnableConfig() as RunnableConfig | undefined);
    const threadId = config === undefined ? undefined : threadOf(config, true);
    if (config === undefined || threadId === undefined) {
      throw new FencegateError(
        'invalid_request',
        "FencedStore keeps memory in a thread's scope and no thread is known here: call it inside a graph node of a run with configurable.thread_id, or bind it with store.forRun(config) or store.forThread(threadId)",
        { field: 'configurable.thread_id' },
      );
    }
    return { threadId, scope: this.#saver.scopeFor(threadId), config };
  }

  async #get(thread: Thread, op: GetOperation): Promise<MemoryItem | null> {
    return toItem(await this.#gate.getRecord(thread.scope, memoryName(op.namespace, op.key)));
  }

  async #put(thread: Thread, op: FencedPutOperation): Promise<void> {
    const name = memoryName(op.namespace, op.key);
    const conditional = op.ifRevision !== undefined || op.ifAbsent === true;
    for (let attempt = 1; ; attempt += 1) {
      const current = await this.#gate.getRecord(thread.scope, name);
      const held = preconditionHolds(op, current);
      if (!held) throw conflict(op, current);
      if (op.value === null && !current.exists) return;
      const committed = await this.#commit(thread, op, current);
      if (committed) return;
      const now = await this.#gate.getRecord(thread.scope, name);
      if (conditional || attempt >= UPSERT_TRIES) throw conflict(op, now);
    }
  }

  /** One write expecting the revision read; false when the store says it moved since. */
  async #commit(thread: Thread, op: FencedPutOperation, current: RecordState): Promise<boolean> {
    const name = memoryName(op.namespace, op.key);
    const write: WriteRequest =
      op.value === null
        ? { name, expectRevision: current.revision, delete: true }
        : {
            name,
            expectRevision: current.revision,
            value: {
              value: op.value,
              createdAt: current.exists ? createdAt(current) : null,
            } satisfies StoredMemory,
          };
    try {
      const fence = await this.#saver.fenceFor(thread.config);
      const result = await this.#gate.commit({
        scope: thread.scope,
        fence,
        operationId: contentOperationId('langgraph-memory', fence, [thread.scope, write]),
        writes: [write],
      });
      if (result.outcome === 'committed') return true;
      if (['stale_revision', 'incarnation_changed'].includes(result.error.code)) return false;
      throw rejection(result);
    } catch (error) {
      throw asStaleWriteOwner(thread.threadId, error);
    }
  }

  async #search(thread: Thread, op: SearchOperation): Promise<MemoryItem[]> {
    const offset = op.offset ?? 0;
    const limit = op.limit ?? 10;
    const found: MemoryItem[] = [];
    for await (const record of this.#records(thread.scope, namespacePrefix(op.namespacePrefix))) {
      const item = toItem(record);
      if (item === null || !matchesFilter(item.value, op.filter)) continue;
      found.push(item);
      if (found.length >= offset + limit) break;
    }
    return found.slice(offset);
  }

  async #listNamespaces(thread: Thread, op: ListNamespacesOperation): Promise<string[][]> {
    const namespaces: string[][] = [];
    for await (const record of this.#records(thread.scope, MEMORY_PREFIX)) {
      const address = record.exists ? memoryAddress(record.name) : null;
      if (address !== null) namespaces.push(address.namespace);
    }
    return selectNamespaces(namespaces, op);
  }

  /** The records under `prefix`, page by page in name order: a thread is never read whole. */
  async *#records(scope: string, prefix: string): AsyncGenerator<RecordState> {
    let cursor: string | undefined;
    do {
      const page = await this.#gate.listRecordsPage(scope, {
        prefix,
        limit: PAGE,
        ...(cursor === undefined ? {} : { cursor }),
      });
      yield* page.items;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }
}

function toItem(record: RecordState): MemoryItem | null {
  const address = record.exists ? memoryAddress(record.name) : null;
  if (address === null || !isStoredMemory(record.value)) return null;
  const stored = record.value;
  const { namespace, key } = address;
  const created = createdAt(record);
  return {
    namespace,
    key,
    value: stored.value,
    createdAt: new Date(created),
    updatedAt: new Date(record.updatedAt ?? created),
    revision: record.revision,
  };
}

/** A value FencedStore wrote: a raw commit under `mem/` may hold anything else. */
function isStoredMemory(value: unknown): value is StoredMemory {
  if (typeof value !== 'object' || value === null) return false;
  const item = (value as { value?: unknown }).value;
  return typeof item === 'object' && item !== null && !Array.isArray(item);
}

/** When the item of an existing record was first written, by the store's clock. */
function createdAt(record: RecordState): number {
  return (record.value as StoredMemory).createdAt ?? record.updatedAt ?? 0;
}

function preconditionHolds(op: FencedPutOperation, current: RecordState): boolean {
  if (op.ifAbsent === true && current.exists) return false;
  if (op.ifRevision === undefined) return true;
  // A deleted item's revision is its deletion's: a put that read it absent expects 0 or that.
  return current.exists
    ? current.revision === op.ifRevision
    : op.ifRevision === 0 || op.ifRevision === current.revision;
}

function conflict(op: FencedPutOperation, current: RecordState): MemoryConflictError {
  const expected = op.ifRevision !== undefined ? `at revision ${op.ifRevision}` : 'absent';
  return new MemoryConflictError(op.namespace, op.key, expected, toItem(current));
}

/** Input refused before anything runs: namespaces, keys, values, filters, preconditions. */
function checkOperation(op: Operation): void {
  if ('namespacePrefix' in op) {
    checkNamespace(op.namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
    checkFilter(op.filter);
    if (op.query !== undefined && op.query !== null) {
      throw new FencegateError(
        'invalid_request',
        'FencedStore has no vector index: search by namespace prefix and filter, without query',
        { field: 'query' },
      );
    }
    checkCount(op.limit, 'limit');
    checkCount(op.offset, 'offset');
    return;
  }
  if ('key' in op) {
    const put = 'value' in op;
    checkNamespace(op.namespace, put ? {} : { allowEmpty: true, allowReservedRoot: true });
    memoryName(op.namespace, op.key);
    if (put) checkPut(op);
    return;
  }
  checkCount(op.limit, 'limit');
  checkCount(op.offset, 'offset');
  if (op.maxDepth !== undefined) checkCount(op.maxDepth, 'maxDepth');
}

function checkPut(op: FencedPutOperation): void {
  const { value } = op;
  if (value !== null && (typeof value !== 'object' || Array.isArray(value))) {
    throw new FencegateError(
      'invalid_request',
      'a memory value must be an object (or null to delete)',
      {
        field: 'value',
      },
    );
  }
  if (op.ifRevision !== undefined) checkCount(op.ifRevision, 'ifRevision');
  if (op.ifAbsent !== undefined && typeof op.ifAbsent !== 'boolean') {
    throw new FencegateError('invalid_request', 'ifAbsent must be true or false', {
      field: 'ifAbsent',
    });
  }
  if (op.ifAbsent === true && (op.ifRevision !== undefined || value === null)) {
    throw new FencegateError(
      'invalid_request',
      'ifAbsent goes with a put of a value, without ifRevision: give one precondition',
      { field: 'ifAbsent' },
    );
  }
}

function checkCount(value: unknown, field: string): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new FencegateError('invalid_request', `${field} must be a whole number ≥ 0`, { field });
  }
}

/** The config's thread id; refused when it is not a string or number, absent when `optional`. */
function threadOf(config: RunnableConfig, optional = false): string | undefined {
  const value: unknown = config.configurable?.thread_id;
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number') return String(value);
  if (optional && (value === undefined || value === null)) return undefined;
  throw new FencegateError(
    'invalid_request',
    'FencedStore needs configurable.thread_id (a string): the memory lives in that thread',
    { field: 'configurable.thread_id' },
  );
}
