/**
 * The memory-store clauses, one function each: what a LangGraph long-term memory store (a
 * `BaseStore`) must do so that no write is lost silently. The first ones are LangGraph's own store
 * behaviour (get, put, delete, batch, search, namespaces); the rest are what LangGraph's stores do
 * not promise: a put with a precondition (`ifRevision`, `ifAbsent`) lands only while it holds, two
 * parallel nodes of one graph writing one key both end up in it, and a superseded run's write is
 * refused.
 *
 * A conflict is recognised by the marker `isMemoryConflictError: true` on the error, a superseded
 * run's refusal by `isStaleWriteOwnerError: true`, and an item's revision by its `revision`
 * field, so a store needs nothing of this package at run time.
 */
import { randomUUID } from 'node:crypto';
import type { BaseCheckpointSaver, BaseStore, Item } from '@langchain/langgraph-checkpoint';

/** One run of a thread: the store it writes memory through, and its graph's checkpointer. */
export interface MemoryRun {
  store: BaseStore;
  /** Compiled into the clause's graph with `store` (default: none). */
  checkpointer?: BaseCheckpointSaver;
}

export interface MemoryStoreSubject {
  /** A run of `threadId`: the same thread gives the same memory. */
  run(threadId: string): MemoryRun | Promise<MemoryRun>;
  /** Gives the thread to a new run: every earlier run of it must be refused from then on. */
  supersede(threadId: string): Promise<void>;
}

type Clause = (subject: MemoryStoreSubject) => Promise<void>;

/** A failed clause: the message says what the store did instead. */
export class MemoryStoreViolation extends Error {
  override readonly name = 'MemoryStoreViolation';
}

function check(condition: boolean, message: () => string): void {
  if (!condition) throw new MemoryStoreViolation(message());
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function marked(error: unknown, marker: string): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as Record<string, unknown>)[marker] === true
  );
}

function revisionOf(item: Item | null): number {
  return (item as { revision?: number } | null)?.revision ?? 0;
}

async function fresh(subject: MemoryStoreSubject): Promise<BaseStore> {
  return (await subject.run(`memory-${randomUUID()}`)).store;
}

/** What `run()` resolves with, or the error it threw (null when it resolved). */
async function refusal(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
    return null;
  } catch (error) {
    return error ?? new Error('rejected without a reason');
  }
}

async function putThenGet(subject: MemoryStoreSubject): Promise<void> {
  const store = await fresh(subject);
  const value = { text: 'prefers dark mode', tags: ['ui'], nested: { level: 2 }, none: null };
  await store.put(['users', 'u1'], 'theme', value);
  const item = await store.get(['users', 'u1'], 'theme');
  check(item !== null && same(item.value, value), () => `get answered ${JSON.stringify(item)}`);
  check(
    item!.key === 'theme' && same(item!.namespace, ['users', 'u1']),
    () => `the item names ${JSON.stringify([item!.namespace, item!.key])}`,
  );
  check(
    item!.createdAt instanceof Date && item!.updatedAt instanceof Date,
    () => 'createdAt and updatedAt are not dates',
  );
  check((await store.get(['users', 'u1'], 'missing')) === null, () => 'a missing key is not null');
}

async function putReplaces(subject: MemoryStoreSubject): Promise<void> {
  const store = await fresh(subject);
  await store.put(['users'], 'k', { v: 1 });
  // Read the time now: a store may answer the item it keeps, which the next put changes.
  const firstUpdate = (await store.get(['users'], 'k'))!.updatedAt.getTime();
  await new Promise((resolve) => setTimeout(resolve, 5));
  await store.put(['users'], 'k', { v: 2, extra: true });
  const second = await store.get(['users'], 'k');
  check(same(second?.value, { v: 2, extra: true }), () => `get answered ${JSON.stringify(second)}`);
  check(second!.updatedAt.getTime() > firstUpdate, () => 'updatedAt did not move forward');
}

async function deleteRemoves(subject: MemoryStoreSubject): Promise<void> {
  const store = await fresh(subject);
  await store.put(['users'], 'k', { v: 1 });
  await store.delete(['users'], 'k');
  check((await store.get(['users'], 'k')) === null, () => 'the deleted item is still read');
  await store.delete(['users'], 'never-written');
  await store.put(['users'], 'k', { v: 3 });
  check(same((await store.get(['users'], 'k'))?.value, { v: 3 }), () => 'no put after a delete');
}

async function badNamespacesRefused(subject: MemoryStoreSubject): Promise<void> {
  const store = await fresh(subject);
  const bad: unknown[][] = [[], ['has.period'], ['ok', ''], ['ok', 7], ['langgraph']];
  for (const namespace of bad) {
    const error = await refusal(() => store.put(namespace as string[], 'k', { v: 1 }));
    check(error !== null, () => `a put into ${JSON.stringify(namespace)} was accepted`);
  }
  const names = await store.listNamespaces();
  check(names.length === 0, () => `refused puts left namespaces ${JSON.stringify(names)}`);
}

async function batchInOrder(subject: MemoryStoreSubject): Promise<void> {
  const store = await fresh(subject);
  const results = await store.batch([
    { namespace: ['batch'], key: 'a', value: { data: 'first' } },
    { namespace: ['batch'], key: 'b', value: { data: 'second' } },
    { namespace: ['batch'], key: 'a' },
    { namespace: ['batch'], key: 'a', value: null },
    { namespace: ['batch'], key: 'a' },
  ]);
  check(results.length === 5, () => `${results.length} results for 5 operations`);
  check(
    results.slice(0, 2).every((result) => result === undefined || result === null),
    () => 'a put answered a value',
  );
  check(
    same((results[2] as Item | null)?.value, { data: 'first' }),
    () => 'the get missed the put',
  );
  check(results[4] === null, () => 'the get after the delete found the item');
}

async function badBatchChangesNothing(subject: MemoryStoreSubject): Promise<void> {
  const store = await fresh(subject);
  const error = await refusal(() =>
    store.batch([
      { namespace: ['batch'], key: 'a', value: { data: 'first' } },
      { namespace: [], key: 'b', value: { data: 'invalid' } },
    ]),
  );
  check(error !== null, () => 'a batch with an empty namespace was accepted');
  check((await store.get(['batch'], 'a')) === null, () => 'the valid put before it was applied');
}

async function seedDocs(store: BaseStore): Promise<void> {
  await store.put(['docs'], 'd1', { category: 'guide', level: 1, tags: ['js'] });
  await store.put(['docs'], 'd2', { category: 'guide', level: 2, tags: ['ts'] });
  await store.put(['docs', 'archive'], 'd3', { category: 'note', level: 3, tags: ['py'] });
  await store.put(['recipes'], 'r1', { category: 'dessert', level: 1, tags: [] });
}

async function searchPrefixAndFilter(subject: MemoryStoreSubject): Promise<void> {
  const store = await fresh(subject);
  await seedDocs(store);
  const keys = (items: Item[]) => items.map((item) => item.key).sort();
  const all = await store.search(['docs']);
  check(
    same(keys(all), ['d1', 'd2', 'd3']),
    () => `prefix search found ${JSON.stringify(keys(all))}`,
  );
  const guides = await store.search(['docs'], { filter: { category: 'guide' } });
  check(
    same(keys(guides), ['d1', 'd2']),
    () => `equality filter found ${JSON.stringify(keys(guides))}`,
  );
  const ops = await store.search(['docs'], {
    filter: { level: { $gte: 2 }, category: { $ne: 'x' } },
  });
  check(same(keys(ops), ['d2', 'd3']), () => `operator filter found ${JSON.stringify(keys(ops))}`);
  const within = await store.search(['docs'], { filter: { category: { $in: ['note', 'other'] } } });
  check(same(keys(within), ['d3']), () => `$in found ${JSON.stringify(keys(within))}`);
  const none = await store.search(['nothing-here']);
  check(none.length === 0, () => 'a search of an empty namespace found items');
}

async function searchPages(subject: MemoryStoreSubject): Promise<void> {
  const store = await fresh(subject);
  await seedDocs(store);
  const first = await store.search(['docs'], { limit: 2, offset: 0 });
  const second = await store.search(['docs'], { limit: 2, offset: 2 });
  const seen = [...first, ...second].map((item) => item.key);
  check(
    first.length === 2 && second.length === 1,
    () => `pages of ${first.length} and ${second.length}`,
  );
  check(new Set(seen).size === 3, () => `pages overlap: ${JSON.stringify(seen)}`);
}

async function namespacesListed(subject: MemoryStoreSubject): Promise<void> {
  const store = await fresh(subject);
  await store.put(['docs', 'v1'], 'a', { v: 1 });
  await store.put(['docs', 'v2'], 'b', { v: 1 });
  await store.put(['cache', 'temp', 'deep'], 'c', { v: 1 });
  const all = await store.listNamespaces();
  check(
    same(all, [
      ['cache', 'temp', 'deep'],
      ['docs', 'v1'],
      ['docs', 'v2'],
    ]),
    () => `listNamespaces answered ${JSON.stringify(all)}`,
  );
  const docs = await store.listNamespaces({ prefix: ['docs'] });
  check(
    same(docs, [
      ['docs', 'v1'],
      ['docs', 'v2'],
    ]),
    () => `prefix answered ${JSON.stringify(docs)}`,
  );
  const v2 = await store.listNamespaces({ suffix: ['v2'] });
  check(same(v2, [['docs', 'v2']]), () => `suffix answered ${JSON.stringify(v2)}`);
  const wild = await store.listNamespaces({ prefix: ['*', 'temp'] });
  check(same(wild, [['cache', 'temp', 'deep']]), () => `wildcard answered ${JSON.stringify(wild)}`);
  const shallow = await store.listNamespaces({ maxDepth: 1 });
  check(
    same(shallow, [['cache'], ['docs']]),
    () => `maxDepth 1 answered ${JSON.stringify(shallow)}`,
  );
  const paged = await store.listNamespaces({ limit: 1, offset: 1 });
  check(same(paged, [['docs', 'v1']]), () => `limit/offset answered ${JSON.stringify(paged)}`);
}

type ConditionalPut = (
  namespace: string[],
  key: string,
  value: Record<string, unknown>,
  precondition: { ifRevision?: number; ifAbsent?: boolean },
) => Promise<void>;

/** The store's put with a precondition as its fourth argument. */
function conditionalPut(store: BaseStore): ConditionalPut {
  return store.put.bind(store) as unknown as ConditionalPut;
}

async function currentRevisionLands(subject: MemoryStoreSubject): Promise<void> {
  const store = await fresh(subject);
  await conditionalPut(store)(['cas'], 'k', { v: 1 }, { ifAbsent: true });
  const read = await store.get(['cas'], 'k');
  check(revisionOf(read) > 0, () => `an item carries no revision: ${JSON.stringify(read)}`);
  await conditionalPut(store)(['cas'], 'k', { v: 2 }, { ifRevision: revisionOf(read) });
  const after = await store.get(['cas'], 'k');
  check(
    same(after?.value, { v: 2 }),
    () => `the put at the current revision left ${JSON.stringify(after?.value)}`,
  );
  check(revisionOf(after) > revisionOf(read), () => 'the revision did not move');
}

async function staleRevisionRefused(subject: MemoryStoreSubject): Promise<void> {
  const store = await fresh(subject);
  await store.put(['cas'], 'k', { v: 1 });
  const read = await store.get(['cas'], 'k');
  await store.put(['cas'], 'k', { v: 'written meanwhile' });
  const error = await refusal(() =>
    conditionalPut(store)(
      ['cas'],
      'k',
      { v: 'from a stale read' },
      { ifRevision: revisionOf(read) },
    ),
  );
  check(
    marked(error, 'isMemoryConflictError'),
    () => `a put at a stale revision answered ${String(error)}`,
  );
  const now = await store.get(['cas'], 'k');
  check(
    same(now?.value, { v: 'written meanwhile' }),
    () => `the refused put left ${JSON.stringify(now?.value)}`,
  );
}

async function ifAbsentRefused(subject: MemoryStoreSubject): Promise<void> {
  const store = await fresh(subject);
  await store.put(['cas'], 'k', { v: 'first' });
  const error = await refusal(() =>
    conditionalPut(store)(['cas'], 'k', { v: 'second' }, { ifAbsent: true }),
  );
  check(
    marked(error, 'isMemoryConflictError'),
    () => `ifAbsent on an existing item answered ${String(error)}`,
  );
  const now = await store.get(['cas'], 'k');
  check(
    same(now?.value, { v: 'first' }),
    () => `the refused put left ${JSON.stringify(now?.value)}`,
  );
}

/**
 * Two parallel nodes of one StateGraph each add their name to one item, reading it and putting it
 * back at the revision read; both read before either writes. One put lands; the other must be
 * refused and, on its retry at the new revision, land too: both names are in the item.
 */
async function parallelNodesLoseNothing(subject: MemoryStoreSubject): Promise<void> {
  const { Annotation, StateGraph, START, END } = await import('@langchain/langgraph');
  const threadId = `memory-race-${randomUUID()}`;
  const run = await subject.run(threadId);
  const { store } = run;
  const namespace = ['team', 'notes'];
  let waiting = 2;
  let bothRead: () => void = () => undefined;
  const barrier = new Promise<void>((resolve) => (bothRead = resolve));
  let conflicts = 0;
  const addName = (name: string) => async () => {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const item = await store.get(namespace, 'log');
      const names = [...((item?.value.names as string[] | undefined) ?? []), name];
      if (attempt === 0 && --waiting === 0) bothRead();
      if (attempt === 0) await barrier;
      try {
        await conditionalPut(store)(namespace, 'log', { names }, { ifRevision: revisionOf(item) });
        return { done: [name] };
      } catch (error) {
        if (!marked(error, 'isMemoryConflictError')) throw error;
        conflicts += 1;
      }
    }
    throw new MemoryStoreViolation(`${name} met a conflict on every try`);
  };
  const State = Annotation.Root({
    done: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  });
  const graph = new StateGraph(State)
    .addNode('left', addName('left'))
    .addNode('right', addName('right'))
    .addEdge(START, 'left')
    .addEdge(START, 'right')
    .addEdge('left', END)
    .addEdge('right', END)
    .compile({
      store,
      ...(run.checkpointer === undefined ? {} : { checkpointer: run.checkpointer }),
    });
  await graph.invoke({ done: [] }, { configurable: { thread_id: threadId } });
  const names = ((await store.get(namespace, 'log'))?.value.names as string[] | undefined) ?? [];
  check(
    same([...names].sort(), ['left', 'right']),
    () =>
      `the item holds ${JSON.stringify(names)} after both nodes wrote (${conflicts} conflicts): a write was lost silently`,
  );
  check(conflicts === 1, () => `${conflicts} conflicts where the race makes exactly one`);
}

async function supersededRunRefused(subject: MemoryStoreSubject): Promise<void> {
  const threadId = `memory-superseded-${randomUUID()}`;
  const old = (await subject.run(threadId)).store;
  await old.put(['facts'], 'k', { v: 'before' });
  await subject.supersede(threadId);
  const current = (await subject.run(threadId)).store;
  await current.put(['facts'], 'k', { v: 'by the new run' });
  const error = await refusal(() => old.put(['facts'], 'k', { v: 'by the superseded run' }));
  check(
    marked(error, 'isStaleWriteOwnerError'),
    () => `the superseded run's put answered ${String(error)}`,
  );
  const deleteError = await refusal(() => old.delete(['facts'], 'k'));
  check(
    marked(deleteError, 'isStaleWriteOwnerError'),
    () => `its delete answered ${String(deleteError)}`,
  );
  const now = await current.get(['facts'], 'k');
  check(
    same(now?.value, { v: 'by the new run' }),
    () => `the item holds ${JSON.stringify(now?.value)}`,
  );
}

export const MEMORY_STORE_CLAUSES = {
  put_then_get_returns_the_item: putThenGet,
  put_replaces_the_value: putReplaces,
  delete_removes_the_item: deleteRemoves,
  invalid_namespaces_are_refused: badNamespacesRefused,
  batch_runs_in_order: batchInOrder,
  batch_with_an_invalid_operation_changes_nothing: badBatchChangesNothing,
  search_by_prefix_and_filter: searchPrefixAndFilter,
  search_pages_do_not_overlap: searchPages,
  list_namespaces_by_prefix_suffix_and_depth: namespacesListed,
  put_at_the_current_revision_lands: currentRevisionLands,
  put_at_a_stale_revision_is_refused: staleRevisionRefused,
  put_if_absent_on_an_existing_item_is_refused: ifAbsentRefused,
  parallel_nodes_writing_one_key_lose_nothing: parallelNodesLoseNothing,
  superseded_run_cannot_write_memory: supersededRunRefused,
} satisfies Record<string, Clause>;

export type MemoryStoreClause = keyof typeof MEMORY_STORE_CLAUSES;
