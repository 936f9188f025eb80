/**
 * Dispatch without polling: with a poll interval of a minute, an intent committed while the
 * dispatcher sleeps is delivered within the test's timeout, because the commit wakes it; news
 * arriving during a round start the next round at once. Deliveries reuse connections.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { faultyStore } from '../../src/testing/faulty-store.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import { webhookEffector } from '../../src/dispatch/webhook-effector.js';
import { WakeUp } from '../../src/dispatch/wake.js';
import { memoryGate, memoryStore } from '../helpers/memory-store.js';
import { MINUTE, observedSleep, sleepyDispatcher } from './sleepy-dispatcher.js';
import { Receiver } from './receiver.js';

describe('the dispatcher wakes on committed intents', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setUp() {
    const base = await memoryGate();
    cleanups.push(() => base.close());
    const worker = base.forTenant('acme');
    const receiver = await Receiver.start();
    cleanups.push(() => receiver.close());
    const naps = observedSleep();
    const dispatcher = sleepyDispatcher(base.forTenant('acme'), receiver.url(), naps, 'waker');
    cleanups.push(() => dispatcher.stop());
    const grant = await worker.acquire({ scope: 'orders/1', holder: 'w', ttlMs: MINUTE });
    let n = 0;
    const commitIntents = async (count: number) => {
      const result = await worker.commit({
        scope: 'orders/1',
        fence: grant.fence,
        operationId: `op-${++n}`,
        intents: Array.from({ length: count }, (_, i) => ({
          effectKey: `effect-${n}-${i}`,
          target: 'hook',
          payload: { n, i },
        })),
      });
      expect(result.outcome).toBe('committed');
    };
    return { dispatcher, receiver, naps, commitIntents, worker };
  }

  it('delivers an intent committed while it sleeps a one-minute poll interval: the commit claims it for the dispatcher, which never wakes to claim', async () => {
    const { dispatcher, receiver, naps, commitIntents, worker } = await setUp();
    const asleep = naps.nextNap();
    dispatcher.start();
    await asleep;
    expect(naps.naps).toEqual([MINUTE]);
    await commitIntents(1);
    await receiver.waitForRequests(1);
    expect(receiver.requests[0]?.key).toBe('effect-1-0');
    expect((await waitForStatus(dispatcher, 1)).outcomes.delivered).toBe(1);
    // Still the first sleep: no claim was needed.
    expect(naps.naps).toEqual([MINUTE]);
    const { items } = await worker.audit({ kind: 'intent' });
    expect(items.map(({ outcome, reason, holder }) => ({ outcome, reason, holder }))).toEqual([
      { outcome: 'pending', reason: null, holder: null },
      { outcome: 'claimed', reason: 'at_commit', holder: 'waker' },
      { outcome: 'delivered', reason: null, holder: 'waker' },
    ]);
  }, 10_000);

  it('wakes, without a poll, for the intents of a commit beyond its room', async () => {
    const { dispatcher, receiver, naps, commitIntents } = await setUp();
    const asleep = naps.nextNap();
    dispatcher.start();
    await asleep;
    // Room for 16 (the batch): the first commit claims 16 for it, the second (sent at once)
    // finds no room and announces its 4.
    const backAsleep = naps.nextNap();
    await Promise.all([commitIntents(16), commitIntents(4)]);
    await receiver.waitForRequests(20);
    expect((await waitForStatus(dispatcher, 20)).outcomes.delivered).toBe(20);
    await backAsleep;
    expect(naps.naps).toEqual([MINUTE, MINUTE]);
  }, 10_000);

  it('stop() waits for intents a commit in flight is claiming for it, and delivers them', async () => {
    const { dispatcher, receiver, naps, commitIntents, worker } = await setUp();
    const asleep = naps.nextNap();
    dispatcher.start();
    await asleep;
    // The commit holds the dispatcher's room as it is sent; stop() comes before its answer.
    const committed = commitIntents(2);
    await dispatcher.stop();
    await committed;
    expect(receiver.requests.map((request) => request.key).sort()).toEqual([
      'effect-1-0',
      'effect-1-1',
    ]);
    expect(await worker.getIntent('effect-1-0')).toMatchObject({
      status: 'delivered',
      claimedBy: null,
    });
    // Stopped: the next commit claims nothing; its intent waits for a claim.
    await commitIntents(1);
    expect(await worker.getIntent('effect-2-0')).toMatchObject({ status: 'pending' });
  }, 10_000);

  it('ignores commits without intents and commits of other tenants', async () => {
    const { dispatcher, receiver, naps, worker } = await setUp();
    const asleep = naps.nextNap();
    dispatcher.start();
    await asleep;
    const grant = await worker.acquire({ scope: 'orders/2', holder: 'w', ttlMs: MINUTE });
    await worker.commit({
      scope: 'orders/2',
      fence: grant.fence,
      operationId: 'no-intents',
      writes: [{ name: 'a', expectRevision: 0, value: 1 }],
    });
    await commitIntent(worker.forTenant('other'), 's', 'other-tenant');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(naps.naps).toEqual([MINUTE]);
    expect(receiver.requests).toEqual([]);
  });

  it('tries a claim that failed again after its backoff, not after its poll interval', async () => {
    const store = faultyStore(memoryStore());
    const gate = await Fencegate.open({ store });
    cleanups.push(() => gate.close());
    const worker = gate.forTenant('acme');
    const receiver = await Receiver.start();
    cleanups.push(() => receiver.close());
    // An intent is due when the dispatcher starts; its first claim finds the store unreachable.
    await commitIntent(worker, 'orders/1', 'due');
    store.inject({ method: 'claimIntents', fault: 'fail-before' });
    const naps = observedSleep();
    const dispatcher = new Dispatcher({
      api: worker,
      dispatcherId: 'after-failure',
      effectors: {
        hook: webhookEffector({
          type: 'webhook',
          url: receiver.url(),
          timeoutMs: 5000,
          headers: {},
        }),
      },
      pollIntervalMs: MINUTE,
      backoff: { initialMs: 800, maxMs: 1_000, jitter: 0 },
      sleep: naps.sleep,
    });
    cleanups.push(() => dispatcher.stop());
    dispatcher.start();
    await receiver.waitForRequests(1);
    expect(receiver.requests[0]?.key).toBe('due');
    // The wait after the failure was the first backoff; the poll's came after the claim that took it.
    expect(naps.naps[0]).toBe(800);
    expect(store.calls.filter((call) => call.method === 'claimIntents').length).toBeGreaterThan(1);
  }, 10_000);

  it('waits at least the shorter of its poll interval and 500 ms between failed claims, even with no backoff', async () => {
    const store = faultyStore(memoryStore());
    const gate = await Fencegate.open({ store });
    cleanups.push(() => gate.close());
    store.inject({ method: 'claimIntents', fault: 'fail-before', times: Infinity });
    const dispatcher = new Dispatcher({
      api: gate.forTenant('acme'),
      dispatcherId: 'no-backoff',
      // Never called: no claim succeeds.
      effectors: {
        hook: webhookEffector({
          type: 'webhook',
          url: 'http://127.0.0.1:9/hook',
          timeoutMs: 1000,
          headers: {},
        }),
      },
      pollIntervalMs: MINUTE,
      backoff: { initialMs: 0, maxMs: 0, jitter: 0 },
    });
    cleanups.push(() => dispatcher.stop());
    dispatcher.start();
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    await dispatcher.stop();
    // At 0, 500 and 1,000 ms (fewer on a loaded machine): at most three claims, not one per turn
    // of the event loop (hundreds). The test above shows the claim is tried again.
    const claims = store.calls.filter((call) => call.method === 'claimIntents').length;
    expect(claims).toBeGreaterThanOrEqual(1);
    expect(claims).toBeLessThanOrEqual(3);
  });

  it('news during a round start the next round without sleeping', async () => {
    const wake = new WakeUp();
    let slept = 0;
    const sleep = (ms: number) => {
      slept += ms;
      return Promise.resolve();
    };
    wake.roundStarts();
    wake.notify();
    await wake.sleep(MINUTE, new AbortController().signal, sleep);
    expect(slept).toBe(0);
    wake.roundStarts();
    await wake.sleep(5, new AbortController().signal, sleep);
    expect(slept).toBe(5);
  });
});

describe('connections to receivers', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('are kept alive and reused across deliveries', async () => {
    let connections = 0;
    let requests = 0;
    server = createServer((req, res) => {
      requests += 1;
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const effector = webhookEffector({ type: 'webhook', url, timeoutMs: 5000, headers: {} });
    const controller = new AbortController();
    // Four at a time, 40 in all: as a dispatcher with a batch of 4 delivers them.
    for (let round = 0; round < 10; round++) {
      const results = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          effector.deliver(
            {
              effectKey: `k-${round}-${i}`,
              target: 'hook',
              payload: { round, i },
            } as Parameters<typeof effector.deliver>[0],
            { effectKey: `k-${round}-${i}`, signal: controller.signal },
          ),
        ),
      );
      expect(results.map((r) => r.status)).toEqual([
        'delivered',
        'delivered',
        'delivered',
        'delivered',
      ]);
    }
    expect(requests).toBe(40);
    // Without reuse, 40. A connection is returned to the pool just after its answer is read, so
    // a round may start before all four are back and open one more; never one per request.
    expect(connections).toBeLessThanOrEqual(12);
  });
});

/** Acquires `scope` and commits one intent for target `hook`, `key` its effect key and operation. */
async function commitIntent(
  gate: ReturnType<Fencegate['forTenant']>,
  scope: string,
  key: string,
): Promise<void> {
  const grant = await gate.acquire({ scope, holder: 'w', ttlMs: MINUTE });
  const result = await gate.commit({
    scope,
    fence: grant.fence,
    operationId: key,
    intents: [{ effectKey: key, target: 'hook', payload: 1 }],
  });
  expect(result.outcome).toBe('committed');
}

async function waitForStatus(dispatcher: Dispatcher, delivered: number) {
  while (dispatcher.stats.outcomes.delivered < delivered) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return dispatcher.stats;
}
