/**
 * The library Dispatcher with FencegateClient as its DispatchApi: claims and completions travel
 * over HTTP to a real server, deliveries go to a real HTTP receiver on 127.0.0.1. The store clock
 * is manual, so a retry's backoff passes only when the test moves it.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Dispatcher, webhookEffector } from '../../src/dispatch/index.js';
import { startHarness, type OpsHarness } from './harness.js';

interface Received {
  key: string | undefined;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** Answers each POST with the next status of `statuses` (200 once they run out). */
async function startReceiver(statuses: number[] = []): Promise<{
  url: string;
  received: Received[];
  close(): Promise<void>;
}> {
  const received: Received[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const key = request.headers['idempotency-key'];
      received.push({
        key: typeof key === 'string' ? key : undefined,
        headers: request.headers,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown,
      });
      const status = statuses.shift() ?? 200;
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(status === 200 ? { id: `rcpt-${received.length}` } : {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let harness: OpsHarness | undefined;
let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
afterEach(async () => {
  await receiver?.close();
  await harness?.close();
  receiver = undefined;
  harness = undefined;
});

describe('Dispatcher over FencegateClient', () => {
  it('claims, delivers with the Idempotency-Key and records outcomes through the HTTP API', async () => {
    const h = (harness = await startHarness());
    const r = (receiver = await startReceiver([503]));
    const worker = h.client('worker');
    const grant = await worker.acquire({ scope: 'wf-1/memory', holder: 'w1', ttlMs: 60_000 });
    await worker.commit({
      scope: 'wf-1/memory',
      fence: grant.fence,
      operationId: 'op-1',
      intents: [
        { effectKey: 'notify-1', target: 'crm-webhook', payload: { n: 1 } },
        { effectKey: 'notify-2', target: 'crm-webhook', payload: { n: 2 } },
      ],
    });
    const dispatcher = new Dispatcher({
      api: worker,
      dispatcherId: 'http-dispatcher',
      effectors: {
        'crm-webhook': webhookEffector({
          type: 'webhook',
          url: r.url,
          timeoutMs: 5_000,
          headers: { 'x-api-key': 'k' },
        }),
      },
      claimTtlMs: 30_000,
      // One at a time, so the receiver's first answer (503) goes to notify-1.
      batchSize: 1,
      backoff: { initialMs: 1_000, maxMs: 1_000, jitter: 0 },
    });

    const first = await dispatcher.runOnce();
    expect(first).toMatchObject({ claimed: 1, outcomes: { retry: 1 }, staleCompletions: 0 });
    expect(await worker.getIntent('notify-1')).toMatchObject({
      status: 'pending',
      claimedBy: null,
      lastError: expect.stringContaining('503') as unknown,
      nextAttemptAt: h.clock.now() + 1_000,
    });
    expect(await dispatcher.runOnce()).toMatchObject({ claimed: 1, outcomes: { delivered: 1 } });
    expect(await dispatcher.runOnce()).toMatchObject({ claimed: 0 });
    h.clock.advance(1_000);
    expect(await dispatcher.runOnce()).toMatchObject({ claimed: 1, outcomes: { delivered: 1 } });

    expect(r.received.map((request) => [request.key, request.body])).toEqual([
      ['notify-1', { n: 1 }],
      ['notify-2', { n: 2 }],
      ['notify-1', { n: 1 }],
    ]);
    expect(r.received[0]?.headers['x-api-key']).toBe('k');
    expect(await worker.getIntent('notify-1')).toMatchObject({
      status: 'delivered',
      attempts: 2,
      providerRef: 'rcpt-3',
    });
    expect(await worker.getIntent('notify-2')).toMatchObject({
      status: 'delivered',
      providerRef: 'rcpt-2',
    });
    expect(dispatcher.stats.outcomes).toMatchObject({ delivered: 2, retry: 1 });
    expect(await h.client('operator').verify()).toMatchObject({ ok: true, violations: [] });
  });
});
