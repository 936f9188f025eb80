/**
 * FencedCheckpointSaver.claimWriteOwnership on a real StateGraph and over HTTP: a claim takes the
 * thread from a live run of another replica, the superseded run's next write rejects with
 * StaleWriteOwnerError (the store's catalog code, the marker, nothing stored) and the claiming
 * replica continues from the last checkpoint the old run committed. Over HTTP the takeover needs a
 * worker token whose take-over right covers the thread. `holder` defaults to an id unique to each
 * saver, so two replicas never share a fence unless given the same holder.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FencegateClient } from '../../src/client/index.js';
import { FencegateError, isFencegateError } from '../../src/errors.js';
import { Fencegate } from '../../src/gate.js';
import {
  FencedCheckpointSaver,
  STALE_WRITE_OWNER_CODES,
  StaleWriteOwnerError,
  isStaleWriteOwnerError,
} from '../../src/integrations/langgraph/index.js';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import { PausePoints } from '../../src/testing/index.js';
import { buildGraph, verifiedGateEachTest } from './langgraph-fixture.js';
import { memoryGate } from '../helpers/memory-store.js';

const config = (threadId: string) => ({ configurable: { thread_id: threadId, checkpoint_ns: '' } });

describe('claimWriteOwnership in process', () => {
  const gateOfTest = verifiedGateEachTest();
  let gate: Fencegate;
  beforeEach(() => {
    gate = gateOfTest();
  });

  for (const durability of ['sync', 'async'] as const) {
    it(`takes a thread from a live run of another replica, which is refused and stores nothing (durability ${durability})`, async () => {
      const points = new PausePoints();
      const replicaA = new FencedCheckpointSaver({ gate });
      const replicaB = new FencedCheckpointSaver({ gate });
      const thread = `double-text-${durability}`;
      const ownerA = await replicaA.claimWriteOwnership(thread);
      const oldRun = buildGraph(ownerA, 'run-1', points).invoke(
        { steps: ['input'] },
        { ...config(thread), durability },
      );
      await points.waitUntilReached('run-1:act', oldRun);
      await expect
        .poll(async () => (await replicaB.getTuple(config(thread)))?.checkpoint.channel_values)
        .toMatchObject({ steps: ['input', 'plan by run-1'] });
      const before = (await gate.listRecords(replicaA.scopeFor(thread))).length;

      const ownerB = await replicaB.claimWriteOwnership(thread);
      expect(ownerB.fence).toBe(ownerA.fence + 1);
      points.release('run-1:act');
      const refusal: unknown = await oldRun.then(
        () => 'the superseded run finished',
        (error: unknown) => error,
      );
      expect(refusal).toBeInstanceOf(StaleWriteOwnerError);
      expect(isStaleWriteOwnerError(refusal)).toBe(true);
      expect(isFencegateError(refusal)).toBe(true);
      expect(refusal).toMatchObject({
        code: 'stale_fence',
        isStaleWriteOwnerError: true,
        threadId: thread,
        details: { currentFence: ownerB.fence },
      });
      expect((refusal as Error).message).toMatch(/no longer owns thread .*nothing was stored/);
      expect((await gate.listRecords(replicaA.scopeFor(thread))).length).toBe(before);

      const resumed = await buildGraph(ownerB, 'run-2').invoke(null, {
        ...config(thread),
        durability,
      });
      expect(resumed.steps).toEqual(['input', 'plan by run-1', 'act by run-2', 'report by run-2']);
      await replicaA.close();
      await replicaB.close();
    });
  }

  it('refuses a released owner (authority_revoked) and a deleted thread (scope_deleted) the same way, every time', async () => {
    const saver = new FencedCheckpointSaver({ gate });
    const released = await saver.claimWriteOwnership('t-released');
    await buildGraph(released, 'run-1').invoke({ steps: [] }, config('t-released'));
    await released.release();
    for (let attempt = 0; attempt < 2; attempt++) {
      await expect(
        buildGraph(released, 'run-1').invoke({ steps: [] }, config('t-released')),
      ).rejects.toMatchObject({ code: 'authority_revoked', isStaleWriteOwnerError: true });
    }
    // The saver itself forgets the released claim: its next run acquires the thread again.
    const rerun = await buildGraph(saver, 'run-2').invoke({ steps: [] }, config('t-released'));
    expect(rerun.steps).toContain('report by run-2');

    const deleted = await saver.claimWriteOwnership('t-deleted');
    await buildGraph(deleted, 'run-1').invoke({ steps: [] }, config('t-deleted'));
    await saver.deleteThread('t-deleted');
    await expect(
      buildGraph(deleted, 'run-1').invoke({ steps: [] }, config('t-deleted')),
    ).rejects.toMatchObject({ code: 'scope_deleted', isStaleWriteOwnerError: true });
    // A claim takes a deleted thread back, as a takeover re-creates its scope.
    const again = await saver.claimWriteOwnership('t-deleted');
    const result = await buildGraph(again, 'run-2').invoke({ steps: [] }, config('t-deleted'));
    expect(result.steps).toEqual(['plan by run-2', 'act by run-2', 'report by run-2']);
    await saver.close();
  });

  it('wraps exactly the refusals the error catalog lists for StaleWriteOwnerError', () => {
    expect([...STALE_WRITE_OWNER_CODES].sort()).toEqual([
      'authority_revoked',
      'lease_expired',
      'not_holder',
      'scope_deleted',
      'stale_fence',
    ]);
  });

  it("marks this saver's earlier claim of the thread lost, and refuses a write for another thread", async () => {
    const saver = new FencedCheckpointSaver({ gate });
    const first = await saver.claimWriteOwnership('t-1');
    const second = await saver.claimWriteOwnership('t-1');
    expect(second.fence).toBe(first.fence + 1);
    expect(first.signal.aborted).toBe(true);
    expect(second.signal.aborted).toBe(false);
    await expect(buildGraph(first, 'other').invoke({ steps: [] }, config('t-2'))).rejects.toThrow(
      /owns thread t-1, not "t-2"/,
    );
    await saver.close();
  });

  it('supersedes a live claim of a replica configured with the same holder', async () => {
    const replicaA = new FencedCheckpointSaver({ gate, holder: 'replica' });
    const replicaB = new FencedCheckpointSaver({ gate, holder: 'replica' });
    const ownerA = await replicaA.claimWriteOwnership('same-holder');

    const ownerB = await replicaB.claimWriteOwnership('same-holder');

    expect(ownerB.fence).toBe(ownerA.fence + 1);
    const refusal: unknown = await buildGraph(ownerA, 'a')
      .invoke({ steps: ['from a'] }, config('same-holder'))
      .catch((error: unknown) => error);
    expect(isStaleWriteOwnerError(refusal)).toBe(true);
    const written = await buildGraph(ownerB, 'b').invoke({ steps: [] }, config('same-holder'));
    expect(written.steps).toEqual(['plan by b', 'act by b', 'report by b']);
    for (const saver of [replicaA, replicaB]) await saver.close();
  });

  it('gives each saver its own holder by default, so replicas never share a fence by accident', async () => {
    const one = new FencedCheckpointSaver({ gate });
    const two = new FencedCheckpointSaver({ gate });
    expect(one.holder).toMatch(/^langgraph-saver-/);
    expect(two.holder).not.toBe(one.holder);
    await buildGraph(one, 'one').invoke({ steps: [] }, config('shared'));
    // Its lease is live: another replica's run is refused instead of writing under the same fence.
    await expect(
      buildGraph(two, 'two').invoke({ steps: [] }, config('shared')),
    ).rejects.toMatchObject({
      code: 'lease_held',
    });

    // Replicas configured with the same holder share one fence: the second's run writes too.
    const twin = new FencedCheckpointSaver({ gate, holder: one.holder });
    const shared = await buildGraph(twin, 'twin').invoke({ steps: [] }, config('shared'));
    expect(shared.steps).toContain('report by twin');
    for (const saver of [one, two, twin]) await saver.close();
  });
});

describe('claimWriteOwnership over HTTP', () => {
  let app: FastifyInstance;
  let gate: Fencegate;
  let url: string;

  beforeEach(async () => {
    gate = await memoryGate();
    app = await buildServer({ store: gate.store });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });

  afterEach(async () => {
    await app.close();
    expect((await gate.verify()).violations).toEqual([]);
    await gate.close();
  });

  async function workerSaver(mayTakeOver?: string[]): Promise<FencedCheckpointSaver> {
    const { token } = await issueToken(gate.store, {
      tenant: gate.tenant,
      role: 'worker',
      mayTakeOver,
    });
    return new FencedCheckpointSaver({ gate: new FencegateClient({ url, token }) });
  }

  it('takes a live thread with a worker token whose right covers it; without it the claim is forbidden', async () => {
    const running = await workerSaver();
    await buildGraph(running, 'run-1').invoke({ steps: [] }, config('t-http'));

    const plain = await workerSaver();
    const elsewhere = await workerSaver(['orders/']);
    for (const saver of [plain, elsewhere]) {
      const refusal: unknown = await saver.claimWriteOwnership('t-http').catch((e: unknown) => e);
      expect(refusal).toBeInstanceOf(FencegateError);
      expect(refusal).toMatchObject({ code: 'forbidden' });
      expect((refusal as Error).message).toMatch(/mayTakeOver/);
    }
    // A free thread needs no right: the claim acquires it.
    await expect(plain.claimWriteOwnership('t-free')).resolves.toMatchObject({ fence: 1 });

    const rightful = await workerSaver(['langgraph/']);
    const owner = await rightful.claimWriteOwnership('t-http');
    const resumed = await buildGraph(owner, 'run-2').invoke({ steps: ['again'] }, config('t-http'));
    expect(resumed.steps).toContain('report by run-2');
    await expect(
      buildGraph(running, 'run-1').invoke({ steps: ['late'] }, config('t-http')),
    ).rejects.toMatchObject({ code: 'stale_fence', isStaleWriteOwnerError: true });

    const [takeover] = (await gate.audit({ kind: 'takeover' })).items;
    expect(takeover?.reason).toMatch(/^taken over by worker token tok_/);
    for (const saver of [running, plain, elsewhere, rightful]) await saver.close();
  });
});
