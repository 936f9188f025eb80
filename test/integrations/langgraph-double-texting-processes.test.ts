/**
 * Two messages on one thread from two processes sharing one SQLite file: the strategies hold
 * across processes, a dead waiter drops out of the line when its ticket lapses, verify after each.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bundledEntries, type BundledEntries } from '../helpers/bundled-entry.js';
import { Fencegate } from '../../src/gate.js';
import { FencedCheckpointSaver, runThread } from '../../src/integrations/langgraph/index.js';
import { PausePoints } from '../../src/testing/index.js';
import { buildGraph, fullRun } from './langgraph-double-texting-graph.js';

const CHILD = new URL('./langgraph-double-texting-child.ts', import.meta.url).pathname;
/** The child, bundled once for the file: each start is then plain node instead of tsx. */
let childBundle: BundledEntries | undefined;
beforeAll(async () => {
  childBundle = await bundledEntries([CHILD]);
});
afterAll(() => childBundle?.remove());
/**
 * Every run's lease, renewed every third of it: long enough that a busy machine never lets a live
 * run lapse by accident. A child whose lease lapsed has its writes refused and its run ended, so a
 * step it had not yet stored (under async, stored while its next node works) never appears.
 */
const RUN_TTL_MS = 5_000;
/** The lease of a child that is killed while it waits: its ticket lapses soon after. */
const DEAD_CHILD_TTL_MS = 600;
type Durability = 'sync' | 'async' | 'exit';

interface Child {
  process: ChildProcessWithoutNullStreams;
  /** The next line the child prints. */
  line(): Promise<string>;
}

/**
 * Starts a child and waits until it has opened the store: its start-up (loading TypeScript, slow
 * on a busy machine) is then behind every wait the test bounds.
 */
async function startChild(options: Record<string, unknown>): Promise<Child> {
  const child = spawn(process.execPath, [childBundle!.bundleOf(CHILD), JSON.stringify(options)]);
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const started: Child = {
    process: child,
    line: async () => {
      const next = await lines.next();
      if (next.done === true) throw new Error('the child ended without a line');
      return String(next.value);
    },
  };
  expect(await started.line()).toBe('open');
  return started;
}

describe('runThread across two processes', () => {
  let dir: string;
  let store: string;
  let gate: Fencegate;
  let saver: FencedCheckpointSaver;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fencegate-double-texting-'));
    store = `sqlite:${join(dir, 'threads.db')}`;
    gate = await Fencegate.open({ store });
    saver = new FencedCheckpointSaver({ gate, holder: 'parent' });
  });

  afterEach(async () => {
    expect((await gate.verify()).violations).toEqual([]);
    await saver.close();
    await gate.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const child = (thread: string, run: string, message: string, more: Record<string, unknown>) =>
    startChild({ store, thread, run, message, ttlMs: RUN_TTL_MS, durability: 'sync', ...more });

  function run(thread: string, name: string, message: string, more: Record<string, unknown> = {}) {
    return runThread(buildGraph(saver, name), {
      gate,
      threadId: thread,
      input: { steps: [message] },
      holder: name,
      ttlMs: RUN_TTL_MS,
      pollMs: 20,
      ...more,
    });
  }

  async function steps(thread: string): Promise<string[]> {
    const tuple = await saver.getTuple({ configurable: { thread_id: thread } });
    return (tuple?.checkpoint.channel_values as { steps?: string[] } | undefined)?.steps ?? [];
  }

  async function tickets(thread: string): Promise<number> {
    const page = await gate.listScopes({ prefix: `multitask/${saver.scopeFor(thread)}/ticket/` });
    return page.items.filter((scope) => scope.holder !== null).length;
  }

  for (const durability of ['sync', 'async', 'exit'] as Durability[]) {
    for (const strategy of ['interrupt', 'rollback'] as const) {
      it(`${strategy} stops a run of another process (durability ${durability})`, async () => {
        const thread = `${strategy}-${durability}`;
        if (strategy === 'rollback') await run(thread, 'run-0', 'm0', { config: { durability } });
        const before = await steps(thread);
        const other = await child(thread, 'run-1', 'm1', {
          durability,
          strategy: 'reject',
          hold: true,
        });
        expect(await other.line()).toBe('in act');
        if (durability !== 'exit') {
          // Under async the other process stores its step while its next node works, which it
          // does for as long as it holds the thread; on a loaded machine that can take longer
          // than expect.poll's default second.
          await expect
            .poll(async () => (await steps(thread)).includes('plan by run-1'), { timeout: 15_000 })
            .toBe(true);
        }
        const result = await run(thread, 'run-2', 'm2', {
          config: { durability },
          multitaskStrategy: strategy,
        });
        // The other run's node works until its signal aborts: at its next renewal, refused.
        expect(JSON.parse(await other.line())).toEqual({
          error: 'stale_fence',
          signalAborted: true,
        });
        const kept =
          strategy === 'rollback' || durability === 'exit' ? [] : ['m1', 'plan by run-1'];
        expect(result.steps).toEqual([...before, ...kept, ...fullRun('run-2', 'm2')]);
      });
    }
  }

  /** Run 1 of this process inside `act`, and run 2 of a child process waiting in line. */
  async function childInLine(thread: string, childTtlMs = RUN_TTL_MS) {
    const points = new PausePoints();
    const first = runThread(buildGraph(saver, 'run-1', { hold: () => points.reach('act') }), {
      gate,
      threadId: thread,
      input: { steps: ['m1'] },
      holder: 'run-1',
      ttlMs: RUN_TTL_MS,
    });
    await points.waitUntilReached('act', first);
    const other = await child(thread, 'run-2', 'm2', {
      strategy: 'enqueue',
      hold: false,
      ttlMs: childTtlMs,
    });
    await expect.poll(() => tickets(thread), { timeout: 10_000 }).toBe(1);
    return { first, points, other };
  }

  it('enqueue: a waiter of another process runs before one that arrived after it', async () => {
    const thread = 'enqueue';
    const { first, points, other } = await childInLine(thread);
    const third = run(thread, 'run-3', 'm3', { multitaskStrategy: 'enqueue' });
    await expect.poll(() => tickets(thread), { timeout: 10_000 }).toBe(2);
    points.release('act');

    const both = [...fullRun('run-1', 'm1'), ...fullRun('run-2', 'm2')];
    expect(JSON.parse(await other.line())).toEqual({ steps: both });
    expect((await third).steps).toEqual([...both, ...fullRun('run-3', 'm3')]);
    await first;
  });

  it('enqueue: a waiter whose process died drops out when its ticket lapses', async () => {
    const thread = 'dead-waiter';
    const { first, points, other } = await childInLine(thread, DEAD_CHILD_TTL_MS);
    other.process.kill('SIGKILL');
    const third = run(thread, 'run-3', 'm3', { multitaskStrategy: 'enqueue' });
    points.release('act');

    expect((await third).steps).toEqual([...fullRun('run-1', 'm1'), ...fullRun('run-3', 'm3')]);
    await first;
  });
});
