/**
 * ACCEPTANCE A6 and A7 down to the delivery, on the in-memory reference store (the conformance
 * suite runs A6 and A7 on each store) and a real HTTP receiver. The store's clock is a
 * ManualClock; the test decides every order.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import {
  Dispatcher,
  effectorsFromTargets,
  parseTargets,
  type DispatcherOptions,
} from '../../src/dispatch/index.js';
import { Fencegate } from '../../src/gate.js';
import { faultyStore } from '../../src/testing/faulty-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { CommitRequest } from '../../src/types.js';
import { memoryStore } from '../helpers/memory-store.js';
import { commitIntents, openGate, pausingEffector } from './helpers.js';
import { Receiver } from './receiver.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startReceiver(): Promise<Receiver> {
  const receiver = await Receiver.start();
  cleanups.push(() => receiver.close());
  return receiver;
}

function webhook(receiver: Receiver, timeoutMs = 2000): DispatcherOptions['effectors'] {
  return effectorsFromTargets(
    parseTargets({ targets: { crm: { type: 'webhook', url: receiver.url(), timeoutMs } } }),
  );
}

function dispatcher(
  gate: Fencegate,
  id: string,
  effectors: DispatcherOptions['effectors'],
): Dispatcher {
  return new Dispatcher({
    api: gate,
    dispatcherId: id,
    effectors,
    claimTtlMs: 30_000,
    backoff: { initialMs: 1000, jitter: 0 },
  });
}

describe('A6: a lost commit reply, a retried commit, an unknown delivery, a reconciliation', () => {
  it('stores one intent and applies its effect once, every delivery under the same key', async () => {
    const clock = new ManualClock();
    const inner = memoryStore(clock);
    // The store commits, then the connection drops before the answer reaches the worker.
    const store = faultyStore(inner, { rules: [{ method: 'commit', fault: 'lose-reply' }] });
    const gate = await Fencegate.open({ store });
    cleanups.push(() => gate.close());
    // The receiver applies the first delivery but withholds its answer past the webhook timeout.
    const receiver = await Receiver.start({ respond: (r) => (r.n === 1 ? 'hold' : 200) });
    cleanups.push(() => receiver.close());

    const scope = 'wf-1/memory';
    const effectKey = 'notify-wf-1';
    const grant = await gate.acquire({ scope, holder: 'worker-a', ttlMs: 60_000 });
    const request: CommitRequest = {
      scope,
      fence: grant.fence,
      operationId: 'compact-wf-1',
      writes: [{ name: 'summary', expectRevision: 0, value: { facts: ['a'] } }],
      intents: [{ effectKey, target: 'crm', payload: { workflow: 'wf-1', event: 'compacted' } }],
    };
    await expect(gate.commit(request)).rejects.toMatchObject({ code: 'outcome_unknown' });
    const retried = await gate.commit(request);
    expect(retried).toMatchObject({
      outcome: 'committed',
      replayed: true,
      intents: [{ effectKey, status: 'pending' }],
    });
    expect((await gate.listIntents({ scope })).items.map((i) => i.effectKey)).toEqual([effectKey]);

    // The worker's replacement cannot mint a second effect for the same logical effect.
    const replacementGrant = await gate.takeover(scope, { holder: 'worker-b', ttlMs: 60_000 });
    const again = await gate.commit({
      ...request,
      fence: replacementGrant.fence,
      operationId: 'compact-wf-1-b',
      writes: [],
    });
    expect(again).toMatchObject({ outcome: 'rejected', error: { code: 'duplicate_effect' } });

    // First delivery: no answer within 500 ms -> unknown, never failed.
    const effectors = webhook(receiver, 500);
    const first = await dispatcher(gate, 'dispatcher-1', effectors).runOnce();
    expect(first).toMatchObject({ claimed: 1, outcomes: { unknown: 1 } });
    const unknown = await gate.getIntent(effectKey);
    expect(unknown).toMatchObject({ status: 'unknown', unknownOutcomes: 1, attempts: 1 });
    expect(unknown?.nextAttemptAt).toBe(clock.now() + 1000);
    expect(receiver.effects.size).toBe(1);

    // Not due before its backoff; then a replacement dispatcher reconciles by redelivering.
    const replacement = dispatcher(gate, 'dispatcher-2', effectors);
    expect((await replacement.runOnce()).claimed).toBe(0);
    clock.advance(1000);
    const second = await replacement.runOnce();
    expect(second).toMatchObject({ claimed: 1, outcomes: { delivered: 1 } });

    const delivered = await gate.getIntent(effectKey);
    expect(delivered).toMatchObject({
      status: 'delivered',
      attempts: 2,
      unknownOutcomes: 1,
      providerRef: 'rcpt-1',
    });
    expect(receiver.requests.map((r) => r.key)).toEqual([effectKey, effectKey]);
    expect([...receiver.effects.keys()]).toEqual([effectKey]);

    const audit = await gate.audit({ kind: 'intent' });
    expect(audit.items.map((e) => [e.outcome, e.holder])).toEqual([
      ['pending', null],
      ['claimed', 'dispatcher-1'],
      ['unknown', 'dispatcher-1'],
      ['claimed', 'dispatcher-2'],
      ['delivered', 'dispatcher-2'],
    ]);
    expect((await verifyStore(inner)).ok).toBe(true);
  });
});

describe('A7: cancel races with a commit that carries an intent', () => {
  it('commit, then cancel before any claim: the intent is cancelled and never delivered', async () => {
    const { gate } = await openGate();
    cleanups.push(() => gate.close());
    const receiver = await startReceiver();
    await commitIntents(gate, 'wf-7a', [{ effectKey: 'a7-a', target: 'crm', payload: { x: 1 } }]);

    expect(await gate.cancel('wf-7a', { reason: 'operator stop' })).toMatchObject({
      cancelledIntents: 1,
    });
    const summary = await dispatcher(gate, 'dispatcher-1', webhook(receiver)).runOnce();

    expect(summary.claimed).toBe(0);
    expect(await gate.getIntent('a7-a')).toMatchObject({ status: 'cancelled', attempts: 0 });
    expect(receiver.requests).toEqual([]);
  });

  it('commit, claim, then cancel: the claimed intent is still delivered', async () => {
    const { gate } = await openGate();
    cleanups.push(() => gate.close());
    const receiver = await startReceiver();
    await commitIntents(gate, 'wf-7b', [{ effectKey: 'a7-b', target: 'crm', payload: { x: 2 } }]);
    const pause = pausingEffector(webhook(receiver).crm!);
    const d = dispatcher(gate, 'dispatcher-1', { crm: pause.effector });

    const round = d.runOnce();
    await pause.paused(1);
    // Cancel moves only pending intents; this one is claimed.
    expect(await gate.cancel('wf-7b')).toMatchObject({ cancelledIntents: 0 });
    expect(await gate.getIntent('a7-b')).toMatchObject({ status: 'claimed' });
    pause.release();

    expect(await round).toMatchObject({ claimed: 1, outcomes: { delivered: 1 } });
    expect(await gate.getIntent('a7-b')).toMatchObject({ status: 'delivered' });
    expect(receiver.requests.map((r) => r.key)).toEqual(['a7-b']);
  });

  it('cancel first: the commit is rejected, no intent exists, nothing is delivered', async () => {
    const { gate } = await openGate();
    cleanups.push(() => gate.close());
    const receiver = await startReceiver();
    const grant = await gate.acquire({ scope: 'wf-7c', holder: 'worker', ttlMs: 60_000 });

    const cancelled = await gate.cancel('wf-7c');
    expect(cancelled.fence).toBe(grant.fence + 1);
    const result = await gate.commit({
      scope: 'wf-7c',
      fence: grant.fence,
      operationId: 'op-7c',
      intents: [{ effectKey: 'a7-c', target: 'crm', payload: { x: 3 } }],
    });
    expect(result).toMatchObject({ outcome: 'rejected', error: { code: 'stale_fence' } });
    expect(await gate.getIntent('a7-c')).toBeNull();

    const summary = await dispatcher(gate, 'dispatcher-1', webhook(receiver)).runOnce();
    expect(summary.claimed).toBe(0);
    expect(receiver.requests).toEqual([]);
  });

  it('commit and cancel sent together: the order the store recorded decides', async () => {
    const { gate } = await openGate();
    cleanups.push(() => gate.close());
    const orders = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const scope = `wf-7r-${i}`;
      const effectKey = `a7-r-${i}`;
      const grant = await gate.acquire({ scope, holder: 'worker', ttlMs: 60_000 });
      const [result, cancelled] = await Promise.all([
        gate.commit({
          scope,
          fence: grant.fence,
          operationId: `op-7r-${i}`,
          intents: [{ effectKey, target: 'crm', payload: { i } }],
        }),
        gate.cancel(scope),
      ]);
      // The audit log is the store's order of the two.
      const audit = (await gate.audit({ scope })).items;
      const commitSeq = audit.find((e) => e.kind === 'commit')?.seq ?? 0;
      const cancelSeq = audit.find((e) => e.kind === 'cancel')?.seq ?? 0;
      const intent = await gate.getIntent(effectKey);
      if (commitSeq < cancelSeq) {
        orders.add('commit first');
        expect(result.outcome).toBe('committed');
        expect(cancelled).toMatchObject({ fence: grant.fence + 1, cancelledIntents: 1 });
        expect(intent).toMatchObject({ status: 'cancelled', attempts: 0 });
        expect(audit.map((e) => `${e.kind} ${e.outcome}`)).toEqual([
          'acquire granted',
          'commit committed',
          'intent pending',
          'cancel ok',
          'intent cancelled',
        ]);
      } else {
        orders.add('cancel first');
        expect(result).toMatchObject({ outcome: 'rejected', error: { code: 'stale_fence' } });
        expect(cancelled).toMatchObject({ fence: grant.fence + 1, cancelledIntents: 0 });
        expect(intent).toBeNull();
      }
    }
    expect(orders.size).toBeGreaterThan(0);
    expect((await verifyStore(gate.store)).ok).toBe(true);
  });
});
