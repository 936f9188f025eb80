/**
 * FencedStore's own rules beside the contract: the thread a call finds (a binding, else the
 * node's config), the claim's writer whose fence memory writes carry, bad input refused with
 * nothing written, a conflict answering the current item, memory deleted with its thread, and
 * LangGraph's InMemoryStore losing one of two parallel writes under the same graph.
 */
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { InMemoryStore } from '@langchain/langgraph-checkpoint';
import { describe, expect, it } from 'vitest';
import { isFencegateError } from '../../src/errors.js';
import {
  FencedCheckpointSaver,
  FencedStore,
  isMemoryConflictError,
  isStaleWriteOwnerError,
  type MemoryConflictError,
} from '../../src/integrations/langgraph/index.js';
import { MEMORY_STORE_CLAUSES } from '../../src/testing/vitest/index.js';
import { verifiedGateEachTest } from './langgraph-fixture.js';

const gateOf = verifiedGateEachTest();

function memoryOf() {
  const saver = new FencedCheckpointSaver({ gate: gateOf() });
  return { saver, memory: new FencedStore({ saver }) };
}

async function codeOf(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (error) {
    if (isFencegateError(error)) return error.code;
    throw error;
  }
  return 'accepted';
}

const Steps = Annotation.Root({
  steps: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

describe('FencedStore', () => {
  it('refuses a call that names no thread, and bad input, with invalid_request and writes nothing', async () => {
    const { memory } = memoryOf();
    expect(await codeOf(() => memory.put(['facts'], 'k', { v: 1 }))).toBe('invalid_request');
    const run = memory.forThread('t-bad');
    const refused = [
      () => run.search(['facts'], { query: 'similar to this' }),
      () => run.put(['facts'], 'k', [1, 2] as unknown as Record<string, unknown>),
      () => run.put(['facts'], 'k', { v: 1 }, { ifAbsent: true, ifRevision: 3 }),
      () => run.put(['facts'], 'k', { v: 1 }, { ifRevision: -1 }),
      () => run.search(['facts'], { filter: { v: { $regex: 'x' } } }),
      () => run.put(['facts'], 'k'.repeat(300), { v: 1 }),
      () => run.put(['langgraph'], 'k', { v: 1 }),
      () => run.put(['facts'], '', { v: 1 }),
    ];
    for (const call of refused) expect(await codeOf(call)).toBe('invalid_request');
    expect(await gateOf().listRecords('langgraph/t-bad')).toEqual([]);
  });

  it("finds the run's thread in a node's config, and writes under the claim's fence", async () => {
    const { saver, memory } = memoryOf();
    const owner = await saver.claimWriteOwnership('t-claim');
    const graph = new StateGraph(Steps)
      .addNode('remember', async () => {
        // Unbound: the call finds thread and writer in the node's own config.
        await memory.put(['prefs'], 'tone', { value: 'brief' });
        return { steps: ['remember'] };
      })
      .addEdge(START, 'remember')
      .addEdge('remember', END)
      .compile({ checkpointer: owner, store: memory });
    await graph.invoke({ steps: [] }, { configurable: { thread_id: 't-claim' } });
    const item = await memory.forThread('t-claim').get(['prefs'], 'tone');
    expect(item?.value).toEqual({ value: 'brief' });
    const audit = await gateOf().audit({ scope: saver.scopeFor('t-claim'), kind: 'commit' });
    const memoryCommit = audit.items.find((entry) => entry.records?.[0]?.name === 'mem/prefs/tone');
    expect(memoryCommit?.fence).toBe(owner.fence);

    // A newer claim supersedes the owner: the same graph's memory write is refused and stores nothing.
    await saver.claimWriteOwnership('t-claim');
    const stale = graph.invoke({ steps: [] }, { configurable: { thread_id: 't-claim' } });
    await expect(stale).rejects.toSatisfy(isStaleWriteOwnerError);
    expect((await memory.forThread('t-claim').get(['prefs'], 'tone'))?.revision).toBe(
      item?.revision,
    );
  });

  it("serves a node's config.store when bound as the run's store, and refuses it unbound", async () => {
    const { saver, memory } = memoryOf();
    const graph = new StateGraph(Steps)
      .addNode('remember', async (_, config) => {
        await config.store!.put(['prefs'], 'tone', { value: 'brief' });
        return { steps: [String((await config.store!.get(['prefs'], 'tone'))?.value.value)] };
      })
      .addEdge(START, 'remember')
      .addEdge('remember', END)
      .compile({ checkpointer: saver, store: memory });
    const config = { configurable: { thread_id: 't-bound' } };
    const state = await graph.invoke({ steps: [] }, { ...config, store: memory.forRun(config) });
    expect(state.steps).toEqual(['brief']);
    // LangGraph runs config.store's operations outside the node's config: no thread is known.
    const unbound = graph.invoke({ steps: [] }, { configurable: { thread_id: 't-unbound' } });
    await expect(unbound).rejects.toMatchObject({ code: 'invalid_request' });
    expect(await memory.forThread('t-unbound').listNamespaces()).toEqual([]);
    await saver.close();
  });

  it('answers a conflict with the item as it is now, and a retry at its revision lands', async () => {
    const run = memoryOf().memory.forThread('t-conflict');
    await run.put(['notes'], 'k', { v: 1 });
    const read = await run.get(['notes'], 'k');
    await run.put(['notes'], 'k', { v: 2 });
    const error = await run
      .put(['notes'], 'k', { v: 'stale' }, { ifRevision: read!.revision })
      .catch((caught: unknown) => caught);
    expect(isMemoryConflictError(error)).toBe(true);
    const conflict = error as MemoryConflictError;
    expect(conflict.code).toBe('stale_revision');
    expect(conflict.current?.value).toEqual({ v: 2 });
    await run.put(['notes'], 'k', { v: 3 }, { ifRevision: conflict.current!.revision });
    expect((await run.get(['notes'], 'k'))?.value).toEqual({ v: 3 });
    const deleted = await run
      .delete(['notes'], 'k', { ifRevision: read!.revision })
      .catch((caught: unknown) => caught);
    expect(isMemoryConflictError(deleted)).toBe(true);
  });

  it('skips records under mem/ whose names no put writes, in search and listNamespaces', async () => {
    const { saver, memory } = memoryOf();
    const owner = await saver.claimWriteOwnership('t-raw');
    // The holder commits raw records whose names escapeName never makes: a bad escape, bytes that
    // are no UTF-8, a needless escape of `a` (which must not read as key `a`), an empty key.
    const raw = ['mem/ns/@ZZ', 'mem/ns/@FF', 'mem/ns/@61', 'mem/ns/@6', 'mem/ns/', 'mem/@6Es/k'];
    const result = await gateOf().commit({
      scope: saver.scopeFor('t-raw'),
      fence: owner.fence,
      operationId: 'raw-memory-names',
      writes: raw.map((name) => ({ name, expectRevision: 0, value: { value: { v: name } } })),
    });
    expect(result.outcome).toBe('committed');
    const run = memory.forThread('t-raw');
    await run.put(['ns'], 'a', { v: 'put' });
    await run.put(['ns'], '\0', { v: 'nul' });
    const found = await run.search(['ns']);
    expect(found.map((item) => [item.key, item.value])).toEqual([
      ['\0', { v: 'nul' }],
      ['a', { v: 'put' }],
    ]);
    expect((await run.get(['ns'], 'a'))?.value).toEqual({ v: 'put' });
    expect(await run.listNamespaces()).toEqual([['ns']]);
  });

  it("is deleted with its thread: deleteThread erases the thread's memory", async () => {
    const { saver, memory } = memoryOf();
    const run = memory.forThread('t-gone');
    await run.put(['facts'], 'k', { v: 1 });
    await saver.close();
    await saver.deleteThread('t-gone');
    expect(await run.get(['facts'], 'k')).toBeNull();
    expect(await run.listNamespaces()).toEqual([]);
  });

  it("LangGraph's InMemoryStore loses one of two parallel nodes' writes, silently", async () => {
    const store = new InMemoryStore();
    const race = MEMORY_STORE_CLAUSES.parallel_nodes_writing_one_key_lose_nothing({
      run: () => ({ store }),
      supersede: () => Promise.resolve(),
    });
    await expect(race).rejects.toThrow(
      /the item holds \["(left|right)"\] after both nodes wrote \(0 conflicts\)/,
    );
  });
});
