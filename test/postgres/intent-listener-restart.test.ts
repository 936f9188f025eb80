/**
 * The intent listener across a PostgreSQL restart. A dispatcher with a long poll is woken by
 * LISTEN/NOTIFY when another process commits intents; the cluster (a throwaway one of this test's
 * own) goes down for a few seconds, longer than one reconnect attempt, and comes back. The
 * listener must keep reconnecting, so a commit after the restart is delivered about as fast as one
 * before it, not at the next poll. Once with a library Dispatcher, once under
 * `fencegate serve --dispatch` (the built CLI: run `npm run build` first), committing from this
 * process so that only the listener can wake the served dispatcher.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { MINUTE, observedSleep, sleepyDispatcher } from '../dispatch/sleepy-dispatcher.js';
import { Receiver } from '../dispatch/receiver.js';
import { startServe } from '../e2e/cli-process.js';
import { tempDir } from '../helpers/temp-dir.js';
import { startThrowawayCluster, type ThrowawayCluster } from './pg-service.js';
import { commitToDelivered, listenerConnected } from './restart-timing.js';

/** Longer than a reconnect attempt's first pauses (250, 500, 1,000 ms…), so several fail. */
const DOWN_MS = 3_000;
/** The served dispatcher's poll: a delivery that waited for it is unmistakable. */
const SERVED_POLL_MS = 120_000;
/**
 * Commit→delivered allowed through a live listener: generous for a loaded machine, far below
 * either dispatcher's poll (a minute, two minutes).
 */
const LISTENER_BOUND_MS = 10_000;
/** How long the listener may take to listen again once the server is back. */
const RECONNECT_BOUND_MS = 30_000;
/** How long a delivered intent's outcome may take to be recorded (far below the polls). */
const RECORD_BOUND_MS = 20_000;

let cluster: ThrowawayCluster | Error;

beforeAll(async () => {
  cluster = await startThrowawayCluster();
}, 60_000);

afterAll(async () => {
  if (!(cluster instanceof Error)) await cluster.stop();
});

interface Figures {
  before: number;
  after: number;
}

/** Waits for the dispatcher to record the intent delivered; fails naming the state it is in. */
async function untilRecorded(
  gate: ReturnType<Fencegate['forTenant']>,
  effectKey: string,
): Promise<void> {
  const end = Date.now() + RECORD_BOUND_MS;
  let intent = await gate.getIntent(effectKey);
  while (intent?.status !== 'delivered' && Date.now() < end) {
    await delay(20);
    intent = await gate.getIntent(effectKey);
  }
  expect(intent, `the outcome of ${effectKey} as stored`).toMatchObject({ status: 'delivered' });
}

/**
 * Measures commit→delivered once the listener listens, restarts the cluster, gives the listener
 * time to listen again, and measures again: a listener that gave up leaves the commit to the poll.
 */
async function acrossRestart(
  restarted: ThrowawayCluster,
  gate: ReturnType<Fencegate['forTenant']>,
  receiver: Receiver,
): Promise<Figures> {
  expect(await listenerConnected(restarted.url, RECONNECT_BOUND_MS)).toBe(true);
  const before = await commitToDelivered(gate, receiver, 'before', LISTENER_BOUND_MS);
  // The delivery's outcome is recorded before the server stops: a completion caught by the
  // restart is recorded only after its claim lapses and the next poll claims it again, which is
  // not what this measures.
  await untilRecorded(gate, 'before');
  await restarted.restart(DOWN_MS);
  const back = await listenerConnected(restarted.url, RECONNECT_BOUND_MS);
  const after = await commitToDelivered(gate, receiver, 'after', LISTENER_BOUND_MS);
  expect(back).toBe(true);
  return { before, after };
}

function report(where: string, { before, after }: Figures): void {
  console.log(
    `${where}: commit→delivered ${before.toFixed(0)} ms before the restart, ${after.toFixed(0)} ms after`,
  );
}

describe('the PostgreSQL intent listener', () => {
  it('keeps reconnecting through a restart under a library Dispatcher: commit→delivered stays fast', async (ctx) => {
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
      const figures = await acrossRestart(cluster, gate, receiver);
      report(`library Dispatcher, poll ${MINUTE} ms`, figures);
      expect(receiver.requests.map((request) => request.key)).toEqual(['before', 'after']);
    } finally {
      await dispatcher.stop();
      await receiver.close();
      await committing.close();
      await dispatching.close();
    }
  }, 120_000);

  it('keeps reconnecting through a restart under `fencegate serve --dispatch`: commit→delivered stays fast', async (ctx) => {
    if (cluster instanceof Error) return ctx.skip();
    const schema = 'served_restart';
    const dir = tempDir('fencegate-served-restart-');
    const receiver = await Receiver.start();
    const targets = join(dir.path, 'targets.json');
    writeFileSync(
      targets,
      JSON.stringify({
        targets: { hook: { type: 'webhook', url: receiver.url(), tenants: ['acme'] } },
      }),
    );
    const server = await startServe(
      [
        ...['--port', '0', '--store', `${cluster.url}?schema=${schema}`],
        ...['--dispatch', '--targets', targets, '--dispatch-tenant', 'acme'],
        ...['--dispatch-poll-ms', String(SERVED_POLL_MS)],
      ],
      { FENCEGATE_ADMIN_TOKEN: 'admin-token-served-restart-0123' },
    );
    // Another process's commits: only a NOTIFY reaches the served dispatcher before its poll.
    const committing = await PostgresStore.open({ url: cluster.url, schema });
    const gate = (await Fencegate.open({ store: committing })).forTenant('acme');
    try {
      // What the server logged (warnings and errors: a failed claim, the listener's reconnects)
      // goes with a failure, which would otherwise not say why an intent waited.
      const figures = await acrossRestart(cluster, gate, receiver).catch((error: unknown) => {
        const { stdout, stderr } = server.output();
        // The end of the log: what came just before the failure.
        const log = `${stdout}${stderr}`.slice(-20_000);
        throw new Error(
          `${String(error)}\nthe server printed (its last 20,000 characters):\n${log}`,
        );
      });
      report(`fencegate serve --dispatch, poll ${SERVED_POLL_MS} ms`, figures);
      expect(receiver.requests.map((request) => request.key)).toEqual(['before', 'after']);
      // Both are recorded as delivered by the served dispatcher (its outcome follows the answer).
      for (const key of ['before', 'after']) await untilRecorded(gate, key);
    } finally {
      expect(await server.stop('SIGTERM')).toBe(0);
      await committing.close();
      await receiver.close();
      dir.cleanup();
    }
  }, 120_000);
});
