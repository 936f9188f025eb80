/**
 * Two messages on one thread, in one process: runThread with each multitask strategy while a
 * real StateGraph run is inside a node, under each durability mode, verify after each.
 */
import { describe, expect, it } from 'vitest';
import { INTEGRATION_ERRORS } from '../../src/errors.js';
import {
  isStaleWriteOwnerError,
  isThreadBusyError,
  runThread,
  type MultitaskStrategy,
  type RollbackReport,
} from '../../src/integrations/langgraph/index.js';
import { PausePoints } from '../../src/testing/index.js';
import type { AuditEntry, AuditKind } from '../../src/types.js';
import { aborted, buildGraph, fullRun, type RunHooks } from './langgraph-double-texting-graph.js';
import { runHolder, useThreadFixture } from './langgraph-thread-fixture.js';

const DURABILITIES = ['sync', 'async', 'exit'] as const;
type Durability = (typeof DURABILITIES)[number];
const TTL_MS = 1_500;

describe('runThread: a second run on a busy thread', () => {
  const fx = useThreadFixture();

  function start(
    thread: string,
    run: string,
    message: string,
    durability: Durability,
    strategy: MultitaskStrategy,
    hooks?: RunHooks,
  ) {
    return runThread(buildGraph(fx.saver, run, hooks), {
      gate: fx.gate,
      threadId: thread,
      input: { steps: [message] },
      config: { durability },
      multitaskStrategy: strategy,
      holder: run,
      ttlMs: TTL_MS,
    });
  }

  /** Starts `run-1` and waits until it is inside `act` with its plan stored (if it stores any). */
  async function busyThread(thread: string, durability: Durability, hooks: RunHooks) {
    const points = new PausePoints();
    const running = start(thread, 'run-1', 'm1', durability, 'reject', {
      ...hooks,
      hold: hooks.hold ?? (() => points.reach('act')),
    });
    running.catch(() => undefined);
    // Its marker is its first write: once it is there, the run holds the thread and has started.
    await expect
      .poll(async () => (await fx.gate.getRecord(fx.saver.scopeFor(thread), 'run')).value)
      .toMatchObject({ holder: runHolder('run-1'), ended: false });
    if (durability !== 'exit') {
      await expect.poll(async () => (await steps(thread)).includes('plan by run-1')).toBe(true);
    }
    return { running, points };
  }

  async function steps(thread: string): Promise<string[]> {
    const tuple = await fx.saver.getTuple({ configurable: { thread_id: thread } });
    return (tuple?.checkpoint.channel_values as { steps?: string[] } | undefined)?.steps ?? [];
  }

  for (const durability of DURABILITIES) {
    describe(`durability ${durability}`, () => {
      it('reject: refused at once with ThreadBusyError naming the holder; nothing started', async () => {
        const thread = `reject-${durability}`;
        const { running, points } = await busyThread(thread, durability, {});
        const scope = fx.saver.scopeFor(thread);
        const before = await fx.gate.listRecords(scope);
        const fenceBefore = (await fx.gate.getScope(scope))?.fence;
        let planned = false;
        const refusal = await start(thread, 'run-2', 'm2', durability, 'reject', {
          planned: () => (planned = true),
        }).catch((error: unknown) => error);
        expect(isThreadBusyError(refusal)).toBe(true);
        expect(refusal).toMatchObject({
          code: 'lease_held',
          holder: runHolder('run-1'),
          threadId: thread,
        });
        expect(typeof (refusal as { leaseExpiresAt: unknown }).leaseExpiresAt).toBe('number');
        // docs/errors.md lists the class with the code it carries.
        const listed = INTEGRATION_ERRORS.find((spec) => spec.name === 'ThreadBusyError');
        expect(listed?.codes).toEqual([(refusal as { code: string }).code]);
        expect(planned).toBe(false);
        expect(await fx.gate.listRecords(scope)).toEqual(before);
        expect((await fx.gate.getScope(scope))?.fence).toBe(fenceBefore);

        points.release('act');
        expect((await running).steps).toEqual(fullRun('run-1', 'm1'));
      });

      it('enqueue: later runs wait and run in arrival order, each from its predecessor', async () => {
        const thread = `enqueue-${durability}`;
        const order: string[] = [];
        const { running, points } = await busyThread(thread, durability, {
          planned: (run) => order.push(run),
        });
        const planned = (run: string) => order.push(run);
        const second = start(thread, 'run-2', 'm2', durability, 'enqueue', { planned });
        await expect.poll(() => tickets(thread)).toBe(1);
        const third = start(thread, 'run-3', 'm3', durability, 'enqueue', { planned });
        await expect.poll(() => tickets(thread)).toBe(2);
        points.release('act');

        const all = [...fullRun('run-1', 'm1'), ...fullRun('run-2', 'm2')];
        expect((await running).steps).toEqual(fullRun('run-1', 'm1'));
        expect((await second).steps).toEqual(all);
        expect((await third).steps).toEqual([...all, ...fullRun('run-3', 'm3')]);
        expect(order).toEqual(['run-1', 'run-2', 'run-3']);
      });

      it('interrupt: the old run is refused at its next write and its signal aborts; the new run continues from its last checkpoint', async () => {
        const thread = `interrupt-${durability}`;
        let signalled = false;
        const points = new PausePoints();
        const { running } = await busyThread(thread, durability, {
          hold: async (signal) => {
            void aborted(signal).then(() => (signalled = true));
            await points.reach('act');
          },
        });
        const scope = fx.saver.scopeFor(thread);
        const oldFence = (await fx.gate.getScope(scope))?.fence ?? 0;

        const second = await start(thread, 'run-2', 'm2', durability, 'interrupt');
        // The old run renews every third of its ttl: its first renewal after the takeover fails.
        await expect.poll(() => signalled, { timeout: TTL_MS }).toBe(true);
        points.release('act');
        const stopped = await running.catch((error: unknown) => error);
        expect(isStaleWriteOwnerError(stopped)).toBe(true);
        expect(stopped).toMatchObject({ code: 'stale_fence', threadId: thread });

        const kept = durability === 'exit' ? [] : ['m1', 'plan by run-1'];
        expect(second.steps).toEqual([...kept, ...fullRun('run-2', 'm2')]);
        expect(await steps(thread)).toEqual(second.steps);
        const [takeover] = await audit(scope, 'takeover');
        expect(takeover).toMatchObject({
          fence: null,
          holder: runHolder('run-2'),
          currentFence: oldFence + 1,
        });
      });

      it('rollback: the tip returns to where the interrupted run started, its records leave the thread, audited', async () => {
        const thread = `rollback-${durability}`;
        const first = await start(thread, 'run-0', 'm0', durability, 'reject');
        expect(first.steps).toEqual(fullRun('run-0', 'm0'));
        const scope = fx.saver.scopeFor(thread);
        const historyBefore = await names(scope);
        const { running, points } = await busyThread(thread, durability, {});

        const second = await start(thread, 'run-2', 'm2', durability, 'rollback');
        points.release('act');
        await expect(running).rejects.toMatchObject({ code: 'stale_fence' });

        expect(second.steps).toEqual([...fullRun('run-0', 'm0'), ...fullRun('run-2', 'm2')]);
        const history = [];
        for await (const tuple of fx.saver.list({ configurable: { thread_id: thread } })) {
          history.push(JSON.stringify(tuple.checkpoint.channel_values));
        }
        expect(history.join()).not.toContain('run-1');
        expect(history.join()).not.toContain('m1');
        // Every checkpoint, blob and write left is run 0's or run 2's.
        const left = (await names(scope)).filter((name) => !historyBefore.includes(name));
        const runTwo = await writtenBy(scope, 'run-2');
        expect(left.filter((name) => !runTwo.has(name))).toEqual([]);
        if (durability !== 'exit') {
          const takeover = (await audit(scope, 'takeover')).find((e) =>
            e.holder?.startsWith('run-2/'),
          );
          const deletes = (await audit(scope, 'commit')).filter(
            (entry) => entry.records?.some((record) => record.deleted) === true,
          );
          expect(deletes.length).toBeGreaterThan(0);
          expect(deletes.map((entry) => entry.fence)).toEqual(
            deletes.map(() => takeover?.currentFence),
          );
        }
      });

      it("rollback: the undone run's pending intents are cancelled, its delivered ones reported", async () => {
        const thread = `rollback-effects-${durability}`;
        const scope = fx.saver.scopeFor(thread);
        const effects = [
          { key: 'notify', target: 'crm' },
          { key: 'bill', target: 'billing' },
        ];
        const { running, points } = await busyThread(thread, durability, { effects });
        // Under exit a run commits its effects with its last checkpoint: this one never got there.
        const committed = durability === 'exit' ? 0 : 2;
        await expect
          .poll(async () => (await fx.gate.listIntents({ scope })).items.length)
          .toBe(committed);
        const [billing] = await fx.gate.claimIntents({
          dispatcher: 'billing-dispatcher',
          ttlMs: 60_000,
          limit: 1,
          targets: ['billing'],
        });
        if (billing !== undefined) {
          await fx.gate.completeIntent(billing.effectKey, {
            claimFence: billing.claimFence,
            outcome: 'delivered',
            providerRef: 'invoice-1',
          });
        }

        const reports: RollbackReport[] = [];
        await runThread(buildGraph(fx.saver, 'run-2'), {
          gate: fx.gate,
          threadId: thread,
          input: { steps: ['m2'] },
          config: { durability },
          multitaskStrategy: 'rollback',
          holder: 'run-2',
          ttlMs: TTL_MS,
          onRollback: (report) => reports.push(report),
        });
        points.release('act');
        await expect(running).rejects.toMatchObject({ code: 'stale_fence' });

        expect(reports).toHaveLength(1);
        const [report] = reports;
        const intents = (await fx.gate.listIntents({ scope })).items;
        const notify = intents.find((intent) => intent.target === 'crm');
        expect(report?.cancelled).toEqual(notify === undefined ? [] : [notify.effectKey]);
        expect(report?.delivered.map((intent) => intent.providerRef)).toEqual(
          billing === undefined ? [] : ['invoice-1'],
        );
        expect(report?.inFlight).toEqual([]);
        expect(notify?.status ?? 'none').toBe(durability === 'exit' ? 'none' : 'cancelled');
        // Nothing is left for a dispatcher to deliver of the undone run.
        expect(await fx.gate.claimIntents({ dispatcher: 'd', ttlMs: 60_000, limit: 10 })).toEqual(
          [],
        );
      });
    });
  }

  it('refuses an unknown strategy, a bad pollMs or threadId and a graph without a FencedCheckpointSaver, changing nothing', async () => {
    const graph = buildGraph(fx.saver, 'run-x');
    await expect(
      runThread(graph, {
        gate: fx.gate,
        threadId: 't',
        input: { steps: [] },
        multitaskStrategy: 'queue' as MultitaskStrategy,
      }),
    ).rejects.toMatchObject({ code: 'invalid_request', details: { field: 'multitaskStrategy' } });
    await expect(
      runThread(graph, { gate: fx.gate, threadId: 't', input: { steps: [] }, pollMs: Number.NaN }),
    ).rejects.toMatchObject({ code: 'invalid_request', details: { field: 'pollMs' } });
    await expect(
      runThread(graph, { gate: fx.gate, threadId: '', input: { steps: [] } }),
    ).rejects.toMatchObject({ code: 'invalid_request', details: { field: 'threadId' } });
    await expect(
      runThread(
        { invoke: () => Promise.resolve(1) },
        { gate: fx.gate, threadId: 't', input: null },
      ),
    ).rejects.toMatchObject({ code: 'invalid_request', details: { field: 'graph.checkpointer' } });
    expect(await fx.gate.getScope(fx.saver.scopeFor('t'))).toBeNull();
  });

  async function audit(scope: string, kind: AuditKind): Promise<AuditEntry[]> {
    return (await fx.gate.audit({ scope, kind, limit: 1000 })).items;
  }

  async function tickets(thread: string): Promise<number> {
    const page = await fx.gate.listScopes({
      prefix: `multitask/${fx.saver.scopeFor(thread)}/ticket/`,
    });
    return page.items.filter((scope) => scope.holder !== null).length;
  }

  async function names(scope: string): Promise<string[]> {
    return (await fx.gate.listRecords(scope)).filter((r) => r.exists).map((r) => r.name);
  }

  /** Record names the commits of the fence of `holder`'s run wrote. */
  async function writtenBy(scope: string, holder: string): Promise<Set<string>> {
    const grants = [...(await audit(scope, 'takeover')), ...(await audit(scope, 'acquire'))];
    const fences = new Set(
      grants.filter((e) => e.holder?.startsWith(`${holder}/`)).map((e) => e.currentFence),
    );
    const commits = (await audit(scope, 'commit')).filter(
      (e) => e.outcome === 'committed' && fences.has(e.fence),
    );
    return new Set(commits.flatMap((e) => (e.records ?? []).map((r) => r.name)));
  }
});
