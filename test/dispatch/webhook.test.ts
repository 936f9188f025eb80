/** The webhook effector against a real HTTP receiver: what it sends and how it reads answers. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { webhookEffector, type DeliveryResult } from '../../src/dispatch/index.js';
import type { Intent } from '../../src/types.js';
import { Receiver, type ReceiverAnswer } from './receiver.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function intent(
  effectKey: string,
  payload: unknown = { order: 42, note: 'secret-payload' },
): Intent {
  return {
    effectKey,
    scope: 'wf-1/memory',
    target: 'crm',
    payload,
    status: 'claimed',
    attempts: 1,
    fence: 1,
    operationId: 'op-1',
    claimFence: 1,
    providerRef: null,
    lastError: null,
    createdAt: 0,
    updatedAt: 0,
    unknownOutcomes: 0,
    claimedBy: 'd',
    claimExpiresAt: 1,
    nextAttemptAt: null,
  };
}

async function deliverOnce(
  answer: ReceiverAnswer,
  options: { timeoutMs?: number; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<{ result: DeliveryResult; receiver: Receiver }> {
  const receiver = await Receiver.start({ respond: () => answer });
  cleanups.push(() => receiver.close());
  const effector = webhookEffector({
    type: 'webhook',
    url: receiver.url('/hook?x=1'),
    timeoutMs: options.timeoutMs ?? 2000,
    headers: options.headers ?? {},
  });
  const result = await effector.deliver(intent('key-1'), {
    effectKey: 'key-1',
    signal: options.signal ?? new AbortController().signal,
  });
  return { result, receiver };
}

describe('webhook effector', () => {
  it('POSTs the payload as JSON with Idempotency-Key and the configured headers', async () => {
    const { result, receiver } = await deliverOnce(200, {
      headers: { 'x-api-key': 'k-123', Authorization: 'Bearer t' },
    });
    expect(result).toEqual({ status: 'delivered', providerRef: 'rcpt-1' });
    const [request] = receiver.requests;
    expect(request?.path).toBe('/hook?x=1');
    expect(request?.body).toEqual({ order: 42, note: 'secret-payload' });
    expect(request?.headers).toMatchObject({
      'idempotency-key': 'key-1',
      'content-type': 'application/json',
      'x-api-key': 'k-123',
      authorization: 'Bearer t',
    });
  });

  it.each<[string, ReceiverAnswer, DeliveryResult]>([
    [
      '201 with providerRef',
      { status: 201, body: { providerRef: 'pr-9', id: 'x' } },
      { status: 'delivered', providerRef: 'pr-9' },
    ],
    [
      '200 with a numeric id',
      { status: 200, body: { id: 77 } },
      { status: 'delivered', providerRef: '77' },
    ],
    ['204 without a body', { status: 204, body: '' }, { status: 'delivered' }],
    ['200 with a non-JSON body', { status: 200, body: 'ok' }, { status: 'delivered' }],
    ['400', 400, { status: 'failed', retryable: false, error: 'HTTP 400 Bad Request' }],
    ['404', 404, { status: 'failed', retryable: false, error: 'HTTP 404 Not Found' }],
    ['422', 422, { status: 'failed', retryable: false, error: 'HTTP 422 Unprocessable Entity' }],
    ['408', 408, { status: 'failed', retryable: true, error: 'HTTP 408 Request Timeout' }],
    ['409', 409, { status: 'failed', retryable: true, error: 'HTTP 409 Conflict' }],
    [
      '429 with Retry-After',
      { status: 429, headers: { 'retry-after': '7' } },
      {
        status: 'failed',
        retryable: true,
        error: 'HTTP 429 Too Many Requests',
        retryAfterMs: 7000,
      },
    ],
    ['500', 500, { status: 'failed', retryable: true, error: 'HTTP 500 Internal Server Error' }],
    ['503', 503, { status: 'failed', retryable: true, error: 'HTTP 503 Service Unavailable' }],
  ])('%s', async (_label, answer, expected) => {
    const { result } = await deliverOnce(answer);
    expect(result).toEqual(expected);
  });

  it('does not follow a redirect: only the configured URL is called', async () => {
    const { result, receiver } = await deliverOnce({
      status: 307,
      headers: { location: '/elsewhere' },
    });
    expect(result).toMatchObject({ status: 'failed', retryable: false });
    expect((result as { error: string }).error).toMatch(/^HTTP 307.*redirects are not followed$/);
    expect(receiver.requests.map((r) => r.path)).toEqual(['/hook?x=1']);
  });

  it('an answer slower than timeoutMs is unknown, never failed', async () => {
    const { result, receiver } = await deliverOnce('hold', { timeoutMs: 100 });
    expect(result).toEqual({ status: 'unknown', error: 'no answer within 100 ms' });
    // The receiver applied it: only the provider knows, which is why this is not "failed".
    expect(receiver.effects.size).toBe(1);
  });

  it('gives up with unknown when the claim is about to lapse', async () => {
    const controller = new AbortController();
    const receiver = await Receiver.start({
      respond: () => {
        controller.abort();
        return 'hold';
      },
    });
    cleanups.push(() => receiver.close());
    const effector = webhookEffector({
      type: 'webhook',
      url: receiver.url(),
      timeoutMs: 10_000,
      headers: {},
    });
    const result = await effector.deliver(intent('key-2'), {
      effectKey: 'key-2',
      signal: controller.signal,
    });
    expect(result).toEqual({ status: 'unknown', error: 'abandoned: the claim was about to lapse' });
  });

  it('a refused connection is a retryable failure naming the error code only', async () => {
    const receiver = await Receiver.start();
    const url = receiver.url();
    await receiver.close();
    const effector = webhookEffector({
      type: 'webhook',
      url,
      timeoutMs: 1000,
      headers: { 'x-api-key': 'k-secret' },
    });
    const result = await effector.deliver(intent('key-3'), {
      effectKey: 'key-3',
      signal: new AbortController().signal,
    });
    expect(result).toEqual({
      status: 'failed',
      retryable: true,
      error: 'network error (ECONNREFUSED)',
    });
  });

  it('the Idempotency-Key is always the effect key passed in', async () => {
    const receiver = await Receiver.start();
    cleanups.push(() => receiver.close());
    const effector = webhookEffector({
      type: 'webhook',
      url: receiver.url(),
      timeoutMs: 1000,
      headers: {},
    });
    for (const key of ['a', 'b', 'a']) {
      await effector.deliver(intent(key), { effectKey: key, signal: new AbortController().signal });
    }
    expect(receiver.requests.map((r) => r.key)).toEqual(['a', 'b', 'a']);
    expect([...receiver.effects.keys()]).toEqual(['a', 'b']);
  });

  it('a connection closed after the request was sent is unknown, never failed', async () => {
    // The receiver reads the whole request (it may have acted on it), then drops the socket.
    const bodies: string[] = [];
    const server: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        res.socket?.destroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    const effector = webhookEffector({
      type: 'webhook',
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
      timeoutMs: 2000,
      headers: {},
    });
    const result = await effector.deliver(intent('key-4'), {
      effectKey: 'key-4',
      signal: new AbortController().signal,
    });
    expect(bodies).toEqual([JSON.stringify({ order: 42, note: 'secret-payload' })]);
    expect(result.status).toBe('unknown');
    expect((result as { error: string }).error).toMatch(/^connection lost after sending \(/);
  });
});
