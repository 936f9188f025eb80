/**
 * runThread over HTTP with worker tokens: `reject` and `enqueue` need nothing more, `interrupt`
 * needs the take-over right for the thread's prefix; without it the run is refused `forbidden`
 * and the running run goes on untouched.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FencegateClient } from '../../src/client/index.js';
import { Fencegate } from '../../src/gate.js';
import {
  FencedCheckpointSaver,
  isThreadBusyError,
  runThread,
  type MultitaskStrategy,
} from '../../src/integrations/langgraph/index.js';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import { PausePoints } from '../../src/testing/index.js';
import { buildGraph, fullRun } from './langgraph-double-texting-graph.js';
import { memoryGate } from '../helpers/memory-store.js';

describe('runThread over HTTP with worker tokens', () => {
  let gate: Fencegate;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let worker: FencegateClient;
  let mayTakeOver: FencegateClient;

  beforeEach(async () => {
    gate = await memoryGate();
    app = await buildServer({ store: gate.store });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
    const token = async (prefixes?: string[]) =>
      (
        await issueToken(gate.store, {
          tenant: gate.tenant,
          role: 'worker',
          ...(prefixes === undefined ? {} : { mayTakeOver: prefixes }),
        })
      ).token;
    worker = new FencegateClient({ url, token: await token() });
    mayTakeOver = new FencegateClient({ url, token: await token(['langgraph/']) });
  });

  afterEach(async () => {
    expect((await gate.verify()).violations).toEqual([]);
    await worker.close();
    await mayTakeOver.close();
    await app.close();
    await gate.close();
  });

  /** A first run, held inside `act`, and a second run through `client` with `strategy`. */
  async function secondRun(client: FencegateClient, strategy: MultitaskStrategy) {
    const saver = new FencedCheckpointSaver({ gate: worker, holder: 'reader' });
    const points = new PausePoints();
    const first = runThread(buildGraph(saver, 'run-1', { hold: () => points.reach('act') }), {
      gate: worker,
      threadId: strategy,
      input: { steps: ['m1'] },
      config: { durability: 'sync' },
    });
    first.catch(() => undefined);
    await points.waitUntilReached('act', first);
    const second = runThread(
      buildGraph(new FencedCheckpointSaver({ gate: client, holder: 'run-2-saver' }), 'run-2'),
      {
        gate: client,
        threadId: strategy,
        input: { steps: ['m2'] },
        config: { durability: 'sync' },
        multitaskStrategy: strategy,
        pollMs: 20,
      },
    );
    second.catch(() => undefined);
    return { first, second, points, saver };
  }

  it('reject: ThreadBusyError with a plain worker token', async () => {
    const { first, second, points, saver } = await secondRun(worker, 'reject');
    expect(isThreadBusyError(await second.catch((error: unknown) => error))).toBe(true);
    points.release('act');
    expect((await first).steps).toEqual(fullRun('run-1', 'm1'));
    await saver.close();
  });

  it('enqueue: waits its turn with a plain worker token', async () => {
    const { first, second, points, saver } = await secondRun(worker, 'enqueue');
    points.release('act');
    await first;
    expect((await second).steps).toEqual([...fullRun('run-1', 'm1'), ...fullRun('run-2', 'm2')]);
    await saver.close();
  });

  it('interrupt: refused forbidden without the take-over right, nothing changed', async () => {
    const { first, second, points, saver } = await secondRun(worker, 'interrupt');
    await expect(second).rejects.toMatchObject({ code: 'forbidden' });
    points.release('act');
    expect((await first).steps).toEqual(fullRun('run-1', 'm1'));
    await saver.close();
  });

  it('interrupt: takes the thread over with a worker token whose take-over right covers it', async () => {
    const { first, second, points, saver } = await secondRun(mayTakeOver, 'interrupt');
    expect((await second).steps).toEqual(['m1', 'plan by run-1', ...fullRun('run-2', 'm2')]);
    points.release('act');
    await expect(first).rejects.toMatchObject({ code: 'stale_fence' });
    await saver.close();
  });
});
