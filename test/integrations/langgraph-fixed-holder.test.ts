/**
 * runThread given one fixed `holder` for every run, as a worker names itself: each run holds the
 * thread as `<holder>/<runId>`, a holder of its own, so a second run on a busy thread meets the
 * first run's lease and each multitask strategy does what it says, instead of the acquire answering
 * the first run's live grant and both runs writing the thread under one fence.
 */
import { describe, expect, it } from 'vitest';
import {
  isStaleWriteOwnerError,
  isThreadBusyError,
  runThread,
  type MultitaskStrategy,
} from '../../src/integrations/langgraph/index.js';
import { PausePoints } from '../../src/testing/index.js';
import { buildGraph, fullRun, type RunHooks } from './langgraph-double-texting-graph.js';
import { runHolder, useThreadFixture } from './langgraph-thread-fixture.js';

const HOLDER = 'support-worker-1';
const TTL_MS = 1_500;

describe('runThread with a fixed holder', () => {
  const fx = useThreadFixture();

  function start(
    thread: string,
    run: string,
    strategy: MultitaskStrategy,
    hooks?: RunHooks,
  ): Promise<{ steps: string[] }> {
    return runThread(buildGraph(fx.saver, run, hooks), {
      gate: fx.gate,
      threadId: thread,
      input: { steps: [`m-${run}`] },
      config: { durability: 'sync' },
      multitaskStrategy: strategy,
      holder: HOLDER,
      ttlMs: TTL_MS,
      pollMs: 20,
    });
  }

  /** `run-1` inside `act`, holding the thread, its plan stored. */
  async function busyThread(thread: string, hooks: RunHooks = {}) {
    const points = new PausePoints();
    const running = start(thread, 'run-1', 'reject', {
      ...hooks,
      hold: () => points.reach('act'),
    });
    running.catch(() => undefined);
    await points.waitUntilReached('act', running);
    return { running, points };
  }

  async function runHolders(thread: string): Promise<string[]> {
    const scope = fx.saver.scopeFor(thread);
    const grants = [
      ...(await fx.gate.audit({ scope, kind: 'acquire', limit: 100 })).items,
      ...(await fx.gate.audit({ scope, kind: 'takeover', limit: 100 })).items,
    ];
    return grants.map((entry) => entry.holder ?? '');
  }

  it('reject: the second run is refused, naming the first run; nothing of it is written', async () => {
    const thread = 'reject';
    const { running, points } = await busyThread(thread);
    const fence = (await fx.gate.getScope(fx.saver.scopeFor(thread)))?.fence;
    let planned = false;

    const refusal = await start(thread, 'run-2', 'reject', {
      planned: () => (planned = true),
    }).catch((error: unknown) => error);

    expect(isThreadBusyError(refusal)).toBe(true);
    expect((refusal as { holder: string }).holder).toEqual(runHolder(HOLDER));
    expect(planned).toBe(false);
    expect((await fx.gate.getScope(fx.saver.scopeFor(thread)))?.fence).toBe(fence);
    points.release('act');
    expect((await running).steps).toEqual(fullRun('run-1', 'm-run-1'));
    expect(await fx.gate.getScope(fx.saver.scopeFor(thread))).toMatchObject({ holder: null });
    const [holder] = await runHolders(thread);
    expect(holder).toEqual(runHolder(HOLDER));
  });

  it('enqueue: the second run waits for the first to end and goes on from it', async () => {
    const thread = 'enqueue';
    const order: string[] = [];
    const planned = (run: string) => order.push(run);
    const { running, points } = await busyThread(thread, { planned });

    const second = start(thread, 'run-2', 'enqueue', { planned });
    const tickets = `multitask/${fx.saver.scopeFor(thread)}/ticket/`;
    await expect
      .poll(async () => (await fx.gate.listScopes({ prefix: tickets })).items.length)
      .toBe(1);
    points.release('act');

    const first = fullRun('run-1', 'm-run-1');
    expect((await running).steps).toEqual(first);
    expect((await second).steps).toEqual([...first, ...fullRun('run-2', 'm-run-2')]);
    expect(order).toEqual(['run-1', 'run-2']);
    // The waiter's refused tries are audited too: two holders, one a run.
    const holders = new Set(await runHolders(thread));
    expect(holders.size).toBe(2);
    for (const holder of holders) expect(holder).toEqual(runHolder(HOLDER));
  });

  for (const strategy of ['interrupt', 'rollback'] as const) {
    it(`${strategy}: the second run takes the thread over; the first is refused stale_fence`, async () => {
      const thread = strategy;
      const before = strategy === 'rollback' ? (await start(thread, 'run-0', 'reject')).steps : [];
      const { running, points } = await busyThread(thread);

      const second = await start(thread, 'run-2', strategy);
      points.release('act');
      const stopped = await running.catch((error: unknown) => error);

      expect(isStaleWriteOwnerError(stopped)).toBe(true);
      expect(stopped).toMatchObject({ code: 'stale_fence', threadId: thread });
      const kept = strategy === 'rollback' ? [] : ['m-run-1', 'plan by run-1'];
      expect(second.steps).toEqual([...before, ...kept, ...fullRun('run-2', 'm-run-2')]);
      expect(await fx.gate.getScope(fx.saver.scopeFor(thread))).toMatchObject({ holder: null });
      const [takeover] = (
        await fx.gate.audit({ scope: fx.saver.scopeFor(thread), kind: 'takeover' })
      ).items;
      expect(takeover?.holder).toEqual(runHolder(HOLDER));
    });
  }
});
