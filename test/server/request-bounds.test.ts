/**
 * A request must arrive whole within the server's request timeout: a body trickled or stalled
 * short of its declared length is answered 408 and its connection closed at that bound. A client
 * that asks `Expect: 100-continue` for a body declared over the limit is answered 413 before it
 * sends the body; one whose body fits is told to continue.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listeningServer, type ListeningServer } from './listening-server.js';

/** A short bound, so the test reaches it quickly. */
const REQUEST_TIMEOUT_MS = 400;

let server: ListeningServer;
let port: number;
let token: string;

beforeAll(async () => {
  server = await listeningServer({ requestTimeoutMs: REQUEST_TIMEOUT_MS });
  ({ port, token } = server);
});

afterAll(async () => {
  await server?.close();
});

interface Exchange {
  socket: Socket;
  /** Everything read off the socket so far. */
  read: () => string;
  /** Resolves with the milliseconds from the connection to its close. */
  closed: Promise<number>;
  /** Resolves once what has been read contains `text`. */
  readUntil: (text: string) => Promise<string>;
}

function open(): Exchange {
  const socket = connect(port, '127.0.0.1');
  const started = Date.now();
  let received = '';
  const waiting: Array<() => void> = [];
  socket.setEncoding('utf8').on('data', (data: string) => {
    received += data;
    for (const wake of waiting.splice(0)) wake();
  });
  socket.on('error', () => undefined);
  const closed = new Promise<number>((resolve) =>
    socket.on('close', () => resolve(Date.now() - started)),
  );
  const readUntil = async (text: string): Promise<string> => {
    while (!received.includes(text)) {
      await Promise.race([new Promise<void>((wake) => waiting.push(wake)), closed]);
      if (socket.destroyed && !received.includes(text)) return received;
    }
    return received;
  };
  return { socket, read: () => received, closed, readUntil };
}

function head(path: string, length: number, extra = ''): string {
  return (
    `POST ${path} HTTP/1.1\r\nhost: fencegate\r\nauthorization: Bearer ${token}\r\n` +
    `content-type: application/json\r\ncontent-length: ${length}\r\n${extra}\r\n`
  );
}

describe('a request that does not arrive within the request timeout', () => {
  it('trickled a byte at a time is answered 408 and closed at the bound', async () => {
    const exchange = open();
    exchange.socket.write(head('/ui/sign-in', 200));
    const trickle = setInterval(() => {
      if (!exchange.socket.destroyed) exchange.socket.write(' ');
    }, 50);
    const closedAfter = await exchange.closed;
    clearInterval(trickle);
    expect(exchange.read().split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
    expect(closedAfter).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(closedAfter).toBeLessThan(REQUEST_TIMEOUT_MS * 4);
  });

  it('stalled short of its declared length is answered 408 and closed at the bound', async () => {
    const exchange = open();
    exchange.socket.write(head('/v1/commit', 100_000) + '{"operationId":');
    const closedAfter = await exchange.closed;
    expect(exchange.read().split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
    expect(closedAfter).toBeLessThan(REQUEST_TIMEOUT_MS * 4);
  });

  it('leaves a request that arrives in time alone', async () => {
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
  });
});

describe('Expect: 100-continue', () => {
  it('for a body declared over the limit is answered 413 at once, not 100 Continue', async () => {
    const exchange = open();
    exchange.socket.write(head('/v1/commit', 3 * 1024 * 1024, 'expect: 100-continue\r\n'));
    const answer = await exchange.readUntil('}}');
    await exchange.closed;
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
    expect(answer).not.toContain('100 Continue');
    expect(JSON.parse(answer.split('\r\n\r\n')[1] ?? '')).toMatchObject({
      error: { code: 'payload_too_large', details: { limit: 1024 * 1024 } },
    });
  });

  it('for a body that fits is told to continue, and the request is handled', async () => {
    const exchange = open();
    const body = '{}';
    exchange.socket.write(head('/v1/commit', body.length, 'expect: 100-continue\r\n'));
    expect(await exchange.readUntil('\r\n\r\n')).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    exchange.socket.write(body);
    const answer = await exchange.readUntil('}}');
    exchange.socket.destroy();
    expect(answer).toContain('HTTP/1.1 400 Bad Request');
    expect(answer).toContain('"code":"invalid_request"');
  });
});
