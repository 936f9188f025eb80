/**
 * The intent listener across a PostgreSQL restart. A dispatcher polls once a minute and is woken
 * by LISTEN/NOTIFY; the cluster (a throwaway one of this test's own) goes down for a few seconds,
 * longer than one reconnect attempt, and comes back. The listener must keep reconnecting, so a
 * commit after the restart is delivered as fast as one before it, not at the next poll.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { MINUTE, observedSleep, sleepyDispatcher } from '../dispatch/sleepy-dispatcher.js';
import { Receiver } from '../dispatch/receiver.js';
import { startThrowawayCluster, type ThrowawayCluster } from './pg-service.js';

let cluster: ThrowawayCluster | Error;

beforeAll(async () => {
  cluster = await startThrowawayCluster();
}, 60_000);

afterAll(async () => {
  if (!(cluster instanceof Error)) await cluster.stop();
});

/** Commits one intent and resolves with the ms until the receiver got it. */
async function commitToDelivered(
  gate: ReturnType<Fencegate['forTenant']>,
  receiver: Receiver,
  key: string,
): Promise<number> {
  const grant = await gate.acquire({ scope: `s-${key}`, holder: 'w', ttlMs: MINUTE });
  const count = receiver.requests.length;
  const started = performance.now();
  const result = await gate.commit({
    scope: `s-${key}`,
    fence: grant.fence,
    operationId: `op-${key}`,
    intents: [{ effectKey: key, target: 'hook', payload: { key } }],
  });
  expect(result.outcome).toBe('committed');
  await receiver.waitForRequests(count + 1);
  return performance.now() - started;
}

/** Retries `work` while the restarted server still refuses (the pool reconnects on its own). */
async function once<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

describe('the PostgreSQL intent listener', () => {
  it('keeps reconnecting through a restart: commit→delivered stays fast', async (ctx) => {
    if (cluster instanceof Error) return ctx.skip();
    const url = cluster.url;
    const committing = await PostgresStore.open({ url, schema: 'restart_test' });
    const dispatching = await PostgresStore.open({ url, schema: 'restart_test' });
    const receiver = await Receiver.start();
    const naps = observedSleep();
    const dispatcher = sleepyDispatcher(
      (await Fencegate.open({ store: dispatching })).forTenant('acme'),
      receiver.url(),
      naps,
      'pg-restart',
    );
    const gate = (await Fencegate.open({ store: committing })).forTenant('acme');
    try {
      const asleep = naps.nextNap();
      dispatcher.start();
      await asleep;
      // LISTEN is set up asynchronously: the first delivery may be the poll's; measure the second.
      await commitToDelivered(gate, receiver, 'warm-up').catch(() => undefined);
      const before = await commitToDelivered(gate, receiver, 'before');

      await cluster.restart(3_000);
      // The listener's first attempt came while the server was down; give it time for more.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const after = await once(() => commitToDelivered(gate, receiver, 'after'));

      console.log(
        `commit→delivered: ${before.toFixed(0)} ms before the restart, ${after.toFixed(0)} ms after`,
      );
      expect(before).toBeLessThan(5_000);
      // The poll is a minute away: only a live listener delivers within this.
      expect(after).toBeLessThan(10_000);
    } finally {
      await dispatcher.stop();
      await receiver.close();
      await committing.close();
      await dispatching.close();
    }
  }, 120_000);
});
