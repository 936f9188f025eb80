/**
 * LangGraph.js by policy version: runThread with a graph per version runs the graph of the
 * thread's version, and a rollback while a v8 run is inside a node refuses that run's next
 * checkpoint; a FencedCheckpointSaver that names a policy acquires and commits under it, and is
 * refused a thread of another version before anything is written.
 */
import { describe, expect, it } from 'vitest';
import { isFencegateError } from '../../src/errors.js';
import {
  FencedCheckpointSaver,
  isStaleWriteOwnerError,
  runThread,
} from '../../src/integrations/langgraph/index.js';
import { PausePoints } from '../../src/testing/index.js';
import { buildGraph, fullRun } from './langgraph-double-texting-graph.js';
import { useThreadFixture } from './langgraph-thread-fixture.js';

describe('LangGraph.js by policy version', () => {
  const fx = useThreadFixture();

  async function registerVersions(): Promise<void> {
    await fx.gate.registerPolicy({ version: 'v7' });
    await fx.gate.registerPolicy({ version: 'v8' });
  }

  async function steps(thread: string): Promise<string[]> {
    const tuple = await fx.saver.getTuple({ configurable: { thread_id: thread } });
    return (tuple?.checkpoint.channel_values as { steps?: string[] } | undefined)?.steps ?? [];
  }

  /** Pins a thread's scope to `version`, as a run of that version would. */
  async function pin(thread: string, version: string): Promise<void> {
    const scope = fx.saver.scopeFor(thread);
    const grant = await fx.gate.acquire({
      scope,
      holder: 'seed',
      ttlMs: 60_000,
      policyVersion: version,
    });
    await fx.gate.release({ scope, holder: 'seed', fence: grant.fence });
  }

  it('runThread with graphs by version runs the graph of the thread version', async () => {
    await registerVersions();
    await pin('t-v8', 'v8');
    const graphs = { v7: buildGraph(fx.saver, 'v7'), v8: buildGraph(fx.saver, 'v8') };
    const run = (threadId: string) =>
      runThread({ graphs, gate: fx.gate, threadId, input: { steps: ['m'] } });

    await run('t-v8');
    await run('t-new');
    expect(await steps('t-v8')).toEqual(fullRun('v8', 'm'));
    // A thread new to the store takes the first version given.
    expect(await steps('t-new')).toEqual(fullRun('v7', 'm'));
    expect((await fx.gate.getScope(fx.saver.scopeFor('t-new')))?.policyVersion).toBe('v7');

    const mismatch = await runThread({
      graphs: { v7: graphs.v7 },
      gate: fx.gate,
      threadId: 't-v8',
      input: { steps: ['again'] },
    }).catch((error: unknown) => error);
    expect(mismatch).toMatchObject({
      code: 'policy_mismatch',
      details: { currentPolicyVersion: 'v8' },
    });
    expect(await steps('t-v8')).toEqual(fullRun('v8', 'm'));
    const refused = await runThread({
      graphs: {},
      gate: fx.gate,
      threadId: 't-v8',
      input: { steps: ['x'] },
    }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'invalid_request', details: { field: 'graphs' } });
  });

  it('a rollback while a v8 run is in a node refuses its next checkpoint', async () => {
    await registerVersions();
    const threads = Array.from({ length: 8 }, (_, i) => `t-${i}`);
    for (const thread of threads) await pin(thread, 'v7');
    await fx.gate.rollouts.start({
      rolloutId: 'v8-ramp',
      fromPolicy: 'v7',
      toPolicy: 'v8',
      prefix: fx.saver.scopeFor(''),
      steps: [50, 100],
    });
    const scopes = await fx.gate.listScopes({ prefix: fx.saver.scopeFor('') });
    const moved = scopes.items.find((scope) => scope.policyVersion === 'v8');
    expect(moved).toBeDefined();
    const thread = threads.find((t) => fx.saver.scopeFor(t) === moved!.scope)!;
    const points = new PausePoints();
    const v8 = buildGraph(fx.saver, 'v8', { hold: () => points.reach('act') });
    const running = runThread({
      graphs: { v8 },
      gate: fx.gate,
      threadId: thread,
      input: { steps: ['m'] },
      config: { durability: 'sync' },
    }).catch((error: unknown) => error);
    await points.waitUntilReached('act', running);
    await fx.gate.rollouts.rollback({ rolloutId: 'v8-ramp' });
    points.release('act');

    const refusal = await running;
    expect(isStaleWriteOwnerError(refusal)).toBe(true);
    expect(refusal).toMatchObject({ code: 'stale_fence' });
    expect(await steps(thread)).not.toContain('act by v8');
    // The v8-only run is now refused the thread; a run that has v7 continues it under v7.
    const again = runThread({ graphs: { v8 }, gate: fx.gate, threadId: thread, input: null });
    await expect(again).rejects.toMatchObject({ code: 'policy_mismatch' });
    const report = await fx.gate.rollouts.report('v8-ramp');
    expect(report?.rollback).toMatchObject({ staleAccepted: 0 });
  });

  it('a saver naming a policy acquires and commits under it, and is refused another', async () => {
    await registerVersions();
    const v8Saver = new FencedCheckpointSaver({ gate: fx.gate, policyVersion: 'v8' });
    const v7Saver = new FencedCheckpointSaver({ gate: fx.gate, policyVersion: 'v7' });
    try {
      expect(v8Saver.policyVersion).toBe('v8');
      await runThread(buildGraph(v8Saver, 'v8'), {
        gate: fx.gate,
        threadId: 'pinned',
        input: { steps: ['m'] },
      });
      const scope = v8Saver.scopeFor('pinned');
      expect((await fx.gate.getScope(scope))?.policyVersion).toBe('v8');
      const commits = await fx.gate.audit({ scope, kind: 'commit' });
      expect(new Set(commits.items.map((entry) => entry.policyVersion))).toEqual(new Set(['v8']));

      // A v7 saver's own lease: the graph's first write is refused, nothing stored.
      const before = await fx.gate.listRecords(scope);
      const config = { configurable: { thread_id: 'pinned' } };
      const refusal = await buildGraph(v7Saver, 'v7')
        .invoke({ steps: ['v7'] }, config)
        .catch((error: unknown) => error);
      expect(isFencegateError(refusal) && refusal.code).toBe('policy_mismatch');
      expect(refusal).toMatchObject({ details: { currentPolicyVersion: 'v8' } });
      expect(await fx.gate.listRecords(scope)).toEqual(before);
    } finally {
      await v8Saver.close();
      await v7Saver.close();
    }
  });
});
