/**
 * The Dispatcher's own behaviour: the start/stop loop, stale completions, store errors around
 * claims and completions, logs, metrics, options, and the targets-file entry point; on the
 * in-memory reference store: the conformance suite proves claims and completions on each store.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  Dispatcher,
  PromDispatcherMetrics,
  abortableSleep,
  effectorsFromTargets,
  parseTargets,
  startDispatcherFromTargets,
  type DispatcherLogger,
  type DispatcherOptions,
  type Effector,
} from '../../src/dispatch/index.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { Fencegate } from '../../src/gate.js';
import { faultyStore } from '../../src/testing/faulty-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { tempDir } from '../helpers/temp-dir.js';
import { memoryStore } from '../helpers/memory-store.js';
import { commitIntents, openGate, pausingEffector, statusOf, waitFor } from './helpers.js';
import { Receiver, type ReceivedRequest, type ReceiverAnswer } from './receiver.js';

const dir = tempDir();
afterAll(() => dir.cleanup());
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function receiverFor(respond?: (r: ReceivedRequest) => ReceiverAnswer): Promise<Receiver> {
  const receiver = await Receiver.start(respond === undefined ? {} : { respond });
  cleanups.push(() => receiver.close());
  return receiver;
}

async function gateOn(): Promise<{ gate: Fencegate; clock: ManualClock }> {
  const opened = await openGate();
  cleanups.push(() => opened.gate.close());
  return opened;
}

async function faultyGate() {
  const clock = new ManualClock();
  const store = faultyStore(memoryStore(clock));
  const gate = await Fencegate.open({ store });
  cleanups.push(() => gate.close());
  return { gate, store, clock };
}

function webhook(
  receiver: Receiver,
  headers: Record<string, string> = {},
  timeoutMs = 2000,
): Record<string, Effector> {
  return effectorsFromTargets(
    parseTargets({
      targets: { crm: { type: 'webhook', url: receiver.url(), timeoutMs, headers } },
    }),
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
    claimTtlMs: 10_000,
    pollIntervalMs: 5,
    backoff: { initialMs: 1000, jitter: 0 },
    ...extra,
  });
}

/** Lets every pending callback run; the paused effector guarantees nothing can finish meanwhile. */
async function drainEventLoop(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('claims cut short by the byte budget', () => {
  it('a claim that takes fewer intents than asked is followed by another claim, not by the poll interval', async () => {
    const store = memoryStore(new ManualClock());
    // A budget of one byte: every claim takes one intent, whatever its limit.
    const gate = await Fencegate.open({ store, limits: { ...DEFAULT_LIMITS, maxPageBytes: 1 } });
    cleanups.push(() => gate.close());
    const receiver = await receiverFor();
    const keys = ['cut-1', 'cut-2', 'cut-3'];
    await commitIntents(
      gate,
      'wf-cut',
      keys.map((effectKey) => ({ effectKey, target: 'crm', payload: { effectKey } })),
    );
    // An hour between polls: only claiming again right away delivers the rest in time.
    const d = dispatcher(gate, webhook(receiver), { pollIntervalMs: 3_600_000 });
    d.start();
    cleanups.push(() => d.stop());
    await waitFor(async () => {
      const statuses = await Promise.all(keys.map((key) => statusOf(gate, key)));
      return statuses.every((status) => status === 'delivered');
    }, 'every intent delivered');
    await d.stop();
  });
});

describe('start and stop', () => {
  it('delivers in the background and stops only after the in-flight delivery is recorded', async () => {
    const { gate } = await gateOn();
    const receiver = await receiverFor();
    const pause = pausingEffector(webhook(receiver).crm!);
    let claims = 0;
    const api = {
      claimIntents: (r: Parameters<Fencegate['claimIntents']>[0]) => {
        claims += 1;
        return gate.claimIntents(r);
      },
      completeIntent: gate.completeIntent.bind(gate),
    };
    const d = dispatcher(gate, { crm: pause.effector }, { api });
    d.start();
    d.start(); // a second start is a no-op
    expect(d.running).toBe(true);
    await commitIntents(gate, 'wf-loop', [{ effectKey: 'loop-1', target: 'crm', payload: {} }]);
    await pause.paused(1);

    let stopped = false;
    const stopping = d.stop().then(() => (stopped = true));
    await drainEventLoop();
    expect(stopped).toBe(false);
    expect(await statusOf(gate, 'loop-1')).toBe('claimed');

    pause.release();
    await stopping;
    expect(d.running).toBe(false);
    expect(await statusOf(gate, 'loop-1')).toBe('delivered');

    const claimsAtStop = claims;
    await commitIntents(gate, 'wf-loop-2', [{ effectKey: 'loop-2', target: 'crm', payload: {} }]);
    await drainEventLoop();
    expect(claims).toBe(claimsAtStop);
    expect(await statusOf(gate, 'loop-2')).toBe('pending');
    await d.stop(); // stopping twice is fine
  });

  it('keeps running through claim errors, backing off, and logs them', async () => {
    const { gate, store } = await faultyGate();
    store.inject({ method: 'claimIntents', fault: 'fail-before', times: 2 });
    const receiver = await receiverFor();
    const sleeps: number[] = [];
    const errors: Record<string, unknown>[] = [];
    const logger: DispatcherLogger = {
      info: () => undefined,
      warn: () => undefined,
      error: (fields) => errors.push(fields),
    };
    const d = dispatcher(gate, webhook(receiver), {
      logger,
      pollIntervalMs: 5,
      backoff: { initialMs: 200, jitter: 0 },
      sleep: (ms, signal) => {
        sleeps.push(ms);
        return abortableSleep(1, signal);
      },
    });
    await commitIntents(gate, 'wf-claim-err', [{ effectKey: 'ce-1', target: 'crm', payload: {} }]);
    d.start();
    await waitFor(async () => (await statusOf(gate, 'ce-1')) === 'delivered', 'delivery');
    await d.stop();
    expect(d.stats.errors.claim).toBe(2);
    expect(sleeps.slice(0, 2)).toEqual([200, 400]);
    expect(errors.slice(0, 2).map((e) => e.code)).toEqual([
      'store_unavailable',
      'store_unavailable',
    ]);
  });
});

describe('completions', () => {
  it('a completion after the claim lapsed and another dispatcher delivered is stale_claim, and dropped', async () => {
    const { gate, clock } = await gateOn();
    const receiver = await receiverFor();
    await commitIntents(gate, 'wf-stale', [{ effectKey: 'st-1', target: 'crm', payload: {} }]);
    const pause = pausingEffector(webhook(receiver).crm!);
    const registry = new Registry();
    const paused = dispatcher(
      gate,
      { crm: pause.effector },
      { dispatcherId: 'paused', metrics: new PromDispatcherMetrics(registry) },
    );
    const other = dispatcher(gate, webhook(receiver), { dispatcherId: 'other' });

    const pausedRound = paused.runOnce();
    await pause.paused(1);
    clock.advance(10_000);
    expect(await other.runOnce()).toMatchObject({ claimed: 1, outcomes: { delivered: 1 } });
    pause.release();
    const summary = await pausedRound;

    expect(summary).toMatchObject({
      claimed: 1,
      staleCompletions: 1,
      outcomes: { delivered: 0 },
    });
    expect(paused.stats.staleCompletions).toBe(1);
    expect(await gate.getIntent('st-1')).toMatchObject({ status: 'delivered', claimFence: 2 });
    // Both sent the same key; the receiver applied it once.
    expect(receiver.requests.map((r) => r.key)).toEqual(['st-1', 'st-1']);
    expect(receiver.effects.size).toBe(1);
    const rejected = (await gate.audit({ kind: 'intent', outcome: 'rejected' })).items;
    expect(rejected.map((e) => [e.reason, e.fence])).toEqual([['stale_claim', 1]]);
    expect(await registry.metrics()).toContain(
      'fencegate_dispatch_stale_completions_total{target="crm"} 1',
    );
  });

  it('retries a completion the store did not take, while the claim holds', async () => {
    const { gate, store } = await faultyGate();
    store.inject({ method: 'completeIntents', fault: 'fail-before', times: 1 });
    const receiver = await receiverFor();
    await commitIntents(gate, 'wf-ce', [{ effectKey: 'ce-2', target: 'crm', payload: {} }]);
    const d = dispatcher(gate, webhook(receiver), {
      sleep: (_ms, signal) => abortableSleep(1, signal),
    });
    expect(await d.runOnce()).toMatchObject({ outcomes: { delivered: 1 }, completionErrors: 0 });
    expect(await statusOf(gate, 'ce-2')).toBe('delivered');
  });

  it('a completion whose reply was lost is not counted as stale when its retry finds it recorded', async () => {
    const { gate, store } = await faultyGate();
    store.inject({ method: 'completeIntents', fault: 'lose-reply', times: 1 });
    const receiver = await receiverFor();
    await commitIntents(gate, 'wf-lost', [{ effectKey: 'lost-1', target: 'crm', payload: {} }]);
    const d = dispatcher(gate, webhook(receiver), {
      sleep: (_ms, signal) => abortableSleep(1, signal),
    });
    expect(await d.runOnce()).toMatchObject({ staleCompletions: 0, completionErrors: 1 });
    expect(await statusOf(gate, 'lost-1')).toBe('delivered');
    expect(d.stats.staleCompletions).toBe(0);
  });

  it('leaves an outcome it cannot record to the next claim, which redelivers under the same key', async () => {
    const { gate, store, clock } = await faultyGate();
    store.inject({ method: 'completeIntents', fault: 'fail-before', times: 3 });
    const receiver = await receiverFor();
    await commitIntents(gate, 'wf-ce3', [{ effectKey: 'ce-3', target: 'crm', payload: {} }]);
    const d = dispatcher(gate, webhook(receiver), {
      sleep: (_ms, signal) => abortableSleep(1, signal),
    });
    expect(await d.runOnce()).toMatchObject({ completionErrors: 1 });
    expect(d.stats.errors.complete).toBe(1);
    expect(await statusOf(gate, 'ce-3')).toBe('claimed');
    clock.advance(10_000);
    expect(await d.runOnce()).toMatchObject({ outcomes: { delivered: 1 } });
    expect(receiver.requests.map((r) => r.key)).toEqual(['ce-3', 'ce-3']);
    expect(receiver.effects.size).toBe(1);
  });
});

describe('logs and metrics', () => {
  it('logs keys, targets and outcomes, never payloads or header values', async () => {
    const { gate, clock } = await gateOn();
    const receiver = await receiverFor((r) =>
      r.key === 'ok-1' ? 200 : r.key === 'bad-1' ? 400 : 'hold',
    );
    const lines: string[] = [];
    const record = (level: string) => (fields: Record<string, unknown>, message: string) =>
      lines.push(JSON.stringify({ level, message, ...fields }));
    const logger: DispatcherLogger = {
      info: record('info'),
      warn: record('warn'),
      error: record('error'),
    };
    const payload = { card: 'payload-secret-4242' };
    await commitIntents(gate, 'wf-log', [
      { effectKey: 'ok-1', target: 'crm', payload },
      { effectKey: 'bad-1', target: 'crm', payload },
      { effectKey: 'slow-1', target: 'crm', payload },
    ]);
    const d = dispatcher(gate, webhook(receiver, { 'x-api-key': 'header-secret-77' }, 400), {
      logger,
      maxUnknownRedeliveries: 0,
    });
    await d.runOnce();
    clock.advance(1000);
    await d.runOnce();

    expect(receiver.requests.every((r) => r.headers['x-api-key'] === 'header-secret-77')).toBe(
      true,
    );
    const text = lines.join('\n');
    expect(text).not.toContain('payload-secret');
    expect(text).not.toContain('header-secret');
    expect(
      lines
        .map((l) => JSON.parse(l) as { effectKey: string; outcome: string })
        .map((l) => `${l.effectKey} ${l.outcome}`)
        .sort(),
    ).toEqual(['bad-1 failed', 'ok-1 delivered', 'slow-1 needs_attention', 'slow-1 unknown']);
  });

  it('reports outcomes and effector latency to prom-client', async () => {
    const { gate } = await gateOn();
    const receiver = await receiverFor((r) => (r.key === 'm-2' ? 400 : 200));
    const registry = new Registry();
    await commitIntents(gate, 'wf-metrics', [
      { effectKey: 'm-1', target: 'crm', payload: {} },
      { effectKey: 'm-2', target: 'crm', payload: {} },
    ]);
    const d = dispatcher(gate, webhook(receiver), { metrics: new PromDispatcherMetrics(registry) });
    await d.runOnce();
    const text = await registry.metrics();
    expect(text).toContain('fencegate_dispatch_outcomes_total{target="crm",outcome="delivered"} 1');
    expect(text).toContain('fencegate_dispatch_outcomes_total{target="crm",outcome="failed"} 1');
    expect(text).toContain(
      'fencegate_dispatch_effector_seconds_count{target="crm",call="deliver",answer="delivered"} 1',
    );
    expect(d.stats.deliveryLatenciesMs).toHaveLength(2);
  });
});

describe('options', () => {
  it.each<[string, Partial<DispatcherOptions>, string]>([
    ['no effectors', { effectors: {} }, 'a dispatcher needs 1 to 256 effectors'],
    [
      'a bad target name',
      { effectors: { 'a b': { deliver: () => Promise.resolve({ status: 'delivered' }) } } },
      'effector name "a b"',
    ],
    ['a bad dispatcher id', { dispatcherId: 'has space' }, 'dispatcherId must be'],
    [
      'a first backoff over 1 s',
      { backoff: { initialMs: 2000 } },
      'backoff.initialMs must be an integer from 0 to 1000',
    ],
    ['a cap under the first backoff', { backoff: { initialMs: 500, maxMs: 100 } }, 'backoff.maxMs'],
    ['jitter over 1', { backoff: { jitter: 2 } }, 'backoff.jitter'],
    ['a claim ttl under 100 ms', { claimTtlMs: 50 }, 'claimTtlMs must be an integer from 100'],
    ['a batch of 0', { batchSize: 0 }, 'batchSize'],
  ])('refuses %s', (_label, options, message) => {
    const base: DispatcherOptions = {
      api: {
        claimIntents: () => Promise.resolve([]),
        completeIntent: () => Promise.reject(new Error('unused')),
      },
      effectors: { crm: { deliver: () => Promise.resolve({ status: 'delivered' }) } },
    };
    expect(() => new Dispatcher({ ...base, ...options })).toThrow(message);
  });
});

describe('startDispatcherFromTargets', () => {
  it('runs a dispatcher for the targets of a file until stopped', async () => {
    const { gate } = await gateOn();
    const receiver = await receiverFor();
    const targetsFile = join(dir.path, 'serve-targets.json');
    writeFileSync(
      targetsFile,
      JSON.stringify({
        targets: { crm: { type: 'webhook', url: receiver.url(), timeoutMs: 1000 } },
      }),
    );
    const running = await startDispatcherFromTargets({
      api: gate,
      targetsFile,
      dispatcherId: 'serve-1',
      tuning: { pollIntervalMs: 5 },
    });
    expect(running.targets).toEqual(['crm']);
    await commitIntents(gate, 'wf-serve', [
      { effectKey: 'serve-1', target: 'crm', payload: { a: 1 } },
    ]);
    await waitFor(async () => (await statusOf(gate, 'serve-1')) === 'delivered', 'delivery');
    await running.stop();
    await running.stop();
    expect(running.dispatcher.running).toBe(false);
    expect(receiver.requests.map((r) => [r.key, r.body])).toEqual([['serve-1', { a: 1 }]]);
  });

  it('refuses a claim ttl that a slow target could outlast', async () => {
    const targetsFile = join(dir.path, 'slow-targets.json');
    writeFileSync(
      targetsFile,
      JSON.stringify({
        targets: { crm: { type: 'webhook', url: 'http://127.0.0.1:1/x', timeoutMs: 5000 } },
      }),
    );
    await expect(
      startDispatcherFromTargets({
        api: {
          claimIntents: () => Promise.resolve([]),
          completeIntent: () => Promise.reject(new Error('unused')),
        },
        targetsFile,
        tuning: { claimTtlMs: 3000 },
      }),
    ).rejects.toThrow('claimTtlMs (3000) must exceed the slowest target timeoutMs (5000)');
  });
});
