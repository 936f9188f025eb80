/**
 * Failure paths on the in-memory reference store (the conformance suite proves each store's
 * claims) and a real receiver: a receiver that is down, a target that always refuses,
 * unknown outcomes without and with a provider lookup, a dispatcher that died holding a claim. The
 * store's clock is a ManualClock: backoff passes when the test says so.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  Dispatcher,
  DispatcherStats,
  effectorsFromTargets,
  parseTargets,
  type Effector,
  type DispatcherOptions,
  type LookupResult,
} from '../../src/dispatch/index.js';
import type { Fencegate } from '../../src/gate.js';
import { commitIntents, openGate, type TestGate } from './helpers.js';
import { Receiver, type ReceiverAnswer, type ReceivedRequest } from './receiver.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(
  respond?: (r: ReceivedRequest) => ReceiverAnswer,
): Promise<TestGate & { receiver: Receiver }> {
  const opened = await openGate();
  cleanups.push(() => opened.gate.close());
  const receiver = await Receiver.start(respond === undefined ? {} : { respond });
  cleanups.push(() => receiver.close());
  return { ...opened, receiver };
}

function webhook(url: string, timeoutMs = 2000): Record<string, Effector> {
  return effectorsFromTargets(
    parseTargets({ targets: { crm: { type: 'webhook', url, timeoutMs } } }),
  );
}

function dispatcher(
  gate: Fencegate,
  effectors: Record<string, Effector>,
  extra: Partial<DispatcherOptions> = {},
): Dispatcher {
  return new Dispatcher({
    api: gate,
    dispatcherId: 'dispatcher-1',
    effectors,
    claimTtlMs: 30_000,
    backoff: { initialMs: 1000, maxMs: 4000, jitter: 0 },
    ...extra,
  });
}

describe('retryable failures', () => {
  it('retries a receiver that refuses connections with growing backoff, then delivers', async () => {
    const { gate, clock, receiver } = await setup();
    const port = receiver.port;
    const url = receiver.url();
    await receiver.close();
    await commitIntents(gate, 'wf-down', [
      { effectKey: 'down-1', target: 'crm', payload: { a: 1 } },
    ]);
    const d = dispatcher(gate, webhook(url));

    const delays: number[] = [];
    for (let round = 1; round <= 4; round++) {
      expect(await d.runOnce()).toMatchObject({ claimed: 1, outcomes: { retry: 1 } });
      const intent = await gate.getIntent('down-1');
      expect(intent).toMatchObject({ status: 'pending', attempts: round });
      expect(intent?.lastError).toBe('network error (ECONNREFUSED)');
      delays.push((intent?.nextAttemptAt ?? 0) - clock.now());
      // Not due a millisecond early.
      clock.advance(delays.at(-1)! - 1);
      expect((await d.runOnce()).claimed).toBe(0);
      clock.advance(1);
    }
    expect(delays).toEqual([1000, 2000, 4000, 4000]);

    const back = await Receiver.start({ port });
    cleanups.push(() => back.close());
    expect(await d.runOnce()).toMatchObject({ claimed: 1, outcomes: { delivered: 1 } });
    expect(await gate.getIntent('down-1')).toMatchObject({
      status: 'delivered',
      attempts: 5,
      lastError: null,
    });
    expect(back.requests.map((r) => r.key)).toEqual(['down-1']);
  });

  it('retries 503, 429 (honouring Retry-After), 409 and 408 and keeps the same key', async () => {
    const answers: ReceiverAnswer[] = [
      503,
      { status: 429, headers: { 'retry-after': '3' } },
      409,
      408,
      200,
    ];
    const { gate, clock, receiver } = await setup((r) => answers[r.n - 1] ?? 200);
    await commitIntents(gate, 'wf-retry', [{ effectKey: 'retry-1', target: 'crm', payload: {} }]);
    const d = dispatcher(gate, webhook(receiver.url()), {
      backoff: { initialMs: 100, jitter: 0 },
    });

    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      expect((await d.runOnce()).outcomes.retry).toBe(1);
      const intent = await gate.getIntent('retry-1');
      waits.push((intent?.nextAttemptAt ?? 0) - clock.now());
      clock.advance(waits.at(-1)!);
    }
    // 100, then Retry-After 3 s over the 200 ms backoff, then 400, 800.
    expect(waits).toEqual([100, 3000, 400, 800]);
    expect((await d.runOnce()).outcomes.delivered).toBe(1);
    expect(receiver.requests.map((r) => r.key)).toEqual(Array(5).fill('retry-1'));
    expect(receiver.effects.size).toBe(1);
  });

  it('gives up after maxAttempts when configured', async () => {
    const { gate, clock, receiver } = await setup(() => 500);
    await commitIntents(gate, 'wf-max', [{ effectKey: 'max-1', target: 'crm', payload: {} }]);
    const d = dispatcher(gate, webhook(receiver.url()), { maxAttempts: 2 });
    expect((await d.runOnce()).outcomes.retry).toBe(1);
    clock.advance(1000);
    expect((await d.runOnce()).outcomes.failed).toBe(1);
    const intent = await gate.getIntent('max-1');
    expect(intent).toMatchObject({ status: 'failed', attempts: 2 });
    expect(intent?.lastError).toBe('gave up after 2 attempts: HTTP 500 Internal Server Error');
  });
});

describe('final failures', () => {
  it('a target that answers 400 ends failed with the last error, and is not claimed again', async () => {
    const { gate, clock, receiver } = await setup(() => 400);
    await commitIntents(gate, 'wf-400', [{ effectKey: 'bad-1', target: 'crm', payload: {} }]);
    const d = dispatcher(gate, webhook(receiver.url()));

    expect(await d.runOnce()).toMatchObject({ claimed: 1, outcomes: { failed: 1 } });
    expect(await gate.getIntent('bad-1')).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: 'HTTP 400 Bad Request',
    });
    clock.advance(3_600_000);
    expect((await d.runOnce()).claimed).toBe(0);
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.effects.size).toBe(0);
  });
});

describe('unknown outcomes', () => {
  it('without a lookup: redelivers up to maxUnknownRedeliveries under one key, then needs_attention', async () => {
    const { gate, store, clock, receiver } = await setup(() => 'hold');
    await commitIntents(gate, 'wf-unknown', [{ effectKey: 'unk-1', target: 'crm', payload: {} }]);
    const stats = new DispatcherStats();
    const d = dispatcher(gate, webhook(receiver.url(), 100), {
      maxUnknownRedeliveries: 2,
      metrics: stats,
    });

    for (let delivery = 1; delivery <= 3; delivery++) {
      expect((await d.runOnce()).outcomes.unknown).toBe(1);
      const intent = await gate.getIntent('unk-1');
      expect(intent).toMatchObject({ status: 'unknown', unknownOutcomes: delivery });
      clock.advance((intent?.nextAttemptAt ?? 0) - clock.now());
    }
    expect(await d.runOnce()).toMatchObject({ claimed: 1, outcomes: { needs_attention: 1 } });

    const intent = await gate.getIntent('unk-1');
    expect(intent).toMatchObject({ status: 'needs_attention', unknownOutcomes: 3, attempts: 4 });
    expect(intent?.lastError).toMatch(
      /no verdict after 3 unknown outcomes; the target has no lookup/,
    );
    // The original delivery and two redeliveries, all under the intent's key.
    expect(receiver.requests.map((r) => r.key)).toEqual(['unk-1', 'unk-1', 'unk-1']);
    expect(receiver.effects.size).toBe(1);
    expect(await store.countIntents('default')).toEqual({ needs_attention: 1 });
    expect(stats.outcomes).toMatchObject({ unknown: 3, needs_attention: 1 });
    expect(d.stats.outcomes.needs_attention).toBe(1);
    clock.advance(3_600_000);
    expect((await d.runOnce()).claimed).toBe(0);
  });

  describe('with a lookup', () => {
    /** A provider in memory: applies per key, and may lose its answers. */
    function provider(options: {
      loseAnswers: number;
      lookup: (applied: boolean) => LookupResult;
    }) {
      const applied = new Map<string, number>();
      const calls: string[] = [];
      let lost = 0;
      const effector: Effector = {
        deliver(_intent, { effectKey }) {
          calls.push(`deliver ${effectKey}`);
          applied.set(effectKey, (applied.get(effectKey) ?? 0) + 1);
          if (lost < options.loseAnswers) {
            lost += 1;
            return Promise.resolve({ status: 'unknown', error: 'timed out' });
          }
          return Promise.resolve({ status: 'delivered', providerRef: `ref-${effectKey}` });
        },
        lookup(effectKey) {
          calls.push(`lookup ${effectKey}`);
          return Promise.resolve(options.lookup(applied.has(effectKey)));
        },
      };
      return { effector, calls, applied };
    }

    it('delivered: completes without a second delivery', async () => {
      const { gate, clock } = await openGate();
      cleanups.push(() => gate.close());
      const p = provider({
        loseAnswers: 1,
        lookup: (applied) =>
          applied ? { status: 'delivered', providerRef: 'looked-up' } : { status: 'not_found' },
      });
      await commitIntents(gate, 'wf-lk1', [{ effectKey: 'lk-1', target: 'crm', payload: {} }]);
      const d = dispatcher(gate, { crm: p.effector });
      expect((await d.runOnce()).outcomes.unknown).toBe(1);
      clock.advance(1000);
      expect((await d.runOnce()).outcomes.reconciled).toBe(1);
      expect(p.calls).toEqual(['deliver lk-1', 'lookup lk-1']);
      expect(await gate.getIntent('lk-1')).toMatchObject({
        status: 'delivered',
        providerRef: 'looked-up',
      });
      expect(d.stats.lookups).toBe(1);
    });

    it('not_found: redelivers under the same key', async () => {
      const { gate, clock } = await openGate();
      cleanups.push(() => gate.close());
      const p = provider({ loseAnswers: 1, lookup: () => ({ status: 'not_found' }) });
      await commitIntents(gate, 'wf-lk2', [{ effectKey: 'lk-2', target: 'crm', payload: {} }]);
      const d = dispatcher(gate, { crm: p.effector });
      await d.runOnce();
      clock.advance(1000);
      expect((await d.runOnce()).outcomes.delivered).toBe(1);
      expect(p.calls).toEqual(['deliver lk-2', 'lookup lk-2', 'deliver lk-2']);
      expect(await gate.getIntent('lk-2')).toMatchObject({
        status: 'delivered',
        providerRef: 'ref-lk-2',
      });
    });

    it('unknown: keeps the intent unknown, and needs_attention once the budget is spent', async () => {
      const { gate, clock } = await openGate();
      cleanups.push(() => gate.close());
      const p = provider({
        loseAnswers: 1,
        lookup: () => ({ status: 'unknown', error: 'lookup down' }),
      });
      await commitIntents(gate, 'wf-lk3', [{ effectKey: 'lk-3', target: 'crm', payload: {} }]);
      const d = dispatcher(gate, { crm: p.effector }, { maxUnknownRedeliveries: 1 });
      await d.runOnce();
      clock.advance(1000);
      expect((await d.runOnce()).outcomes.unknown).toBe(1);
      expect(await gate.getIntent('lk-3')).toMatchObject({
        status: 'unknown',
        unknownOutcomes: 2,
        lastError: 'lookup: lookup down',
      });
      clock.advance(2000);
      expect((await d.runOnce()).outcomes.needs_attention).toBe(1);
      expect(p.calls).toEqual(['deliver lk-3', 'lookup lk-3', 'lookup lk-3']);
    });

    it('asks the provider first when a dispatcher died holding the claim', async () => {
      const { gate, clock } = await openGate();
      cleanups.push(() => gate.close());
      const p = provider({
        loseAnswers: 0,
        lookup: (applied) => (applied ? { status: 'delivered' } : { status: 'not_found' }),
      });
      await commitIntents(gate, 'wf-lk4', [{ effectKey: 'lk-4', target: 'crm', payload: {} }]);
      // A dispatcher claims, delivers, and dies before recording the outcome.
      const [claimed] = await gate.claimIntents({ dispatcher: 'crashed', ttlMs: 5000, limit: 1 });
      await p.effector.deliver(claimed!, {
        effectKey: claimed!.effectKey,
        signal: new AbortController().signal,
      });
      clock.advance(5000);
      expect((await dispatcher(gate, { crm: p.effector }).runOnce()).outcomes.reconciled).toBe(1);
      expect(p.applied.get('lk-4')).toBe(1);
      expect(await gate.getIntent('lk-4')).toMatchObject({ status: 'delivered', attempts: 2 });
    });
  });

  it('an effector that throws or answers nonsense is an unknown outcome', async () => {
    const { gate } = await openGate();
    cleanups.push(() => gate.close());
    await commitIntents(gate, 'wf-throw', [
      { effectKey: 'throw-1', target: 'throws', payload: {} },
      { effectKey: 'junk-1', target: 'junk', payload: {} },
    ]);
    const d = dispatcher(gate, {
      throws: { deliver: () => Promise.reject(new Error('boom')) },
      junk: { deliver: () => Promise.resolve({ status: 'maybe' } as never) },
    });
    expect((await d.runOnce()).outcomes.unknown).toBe(2);
    expect(await gate.getIntent('throw-1')).toMatchObject({
      status: 'unknown',
      lastError: 'the effector threw: boom',
    });
    expect((await gate.getIntent('junk-1'))?.status).toBe('unknown');
  });
});
