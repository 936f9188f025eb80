/**
 * The client's one HTTP exchange (src/client/transport.ts) against peers that misbehave at the
 * socket: an answer without end, a server that never accepts the connection, and the idle
 * connections the client keeps. What it must say: `not_sent` only when nothing can have reached
 * the server, `lost` otherwise, and never take the process down.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { exchange, TransportError } from '../../src/client/transport.js';
import { IDLE_CONNECTION_MS } from '../../src/keep-alive-agents.js';

const servers: Server[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) child.kill();
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function failureOf(promise: Promise<unknown>): Promise<TransportError> {
  const error = await promise.then(
    () => new Error('expected the exchange to fail'),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TransportError);
  return error as TransportError;
}

/**
 * A port whose listener never accepts and whose backlog is full, so a new connection's SYN is
 * dropped and its connect never completes. Node accepts every connection it is offered, so the
 * listener is a Python process.
 */
async function portThatNeverConnects(): Promise<number> {
  const script = [
    'import socket, sys, time',
    's = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)',
    'port = s.getsockname()[1]',
    'fill = []',
    'for _ in range(4):',
    '    c = socket.socket(); c.setblocking(False); c.connect_ex(("127.0.0.1", port)); fill.append(c)',
    'time.sleep(0.3)',
    'print(port, flush=True)',
    'time.sleep(60)',
  ].join('\n');
  const child = spawn('python3', ['-c', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const line = await new Promise<string>((resolve, reject) => {
    child.on('error', reject);
    child.stdout.once('data', (data: Buffer) => resolve(data.toString().trim()));
  });
  return Number(line);
}

describe("the client's HTTP exchange", () => {
  it('drops an answer longer than its bound as lost, and the process goes on', async () => {
    const url = await listen(
      createServer((request, response) => {
        request.resume();
        response.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        // An answer without end: written as fast as it is read.
        const more = (): void => {
          while (response.write(chunk));
        };
        response.on('drain', more);
        more();
      }),
    );
    const error = await failureOf(
      exchange(`${url}/v1/scopes`, {
        method: 'GET',
        token: 't',
        timeoutMs: 10_000,
        maxAnswerBytes: 1024 * 1024,
      }),
    );
    expect(error.failure).toBe('lost');
    expect(error.message).toBe('the answer passed 1048576 bytes; it was dropped');
  });

  it('answers not_sent when the connection never completes before the timeout', async () => {
    const port = await portThatNeverConnects();
    const started = Date.now();
    const error = await failureOf(
      exchange(`http://127.0.0.1:${port}/v1/commit`, {
        method: 'POST',
        token: 't',
        body: { scope: 's' },
        timeoutMs: 500,
      }),
    );
    expect(error.failure).toBe('not_sent');
    expect(error.message).toBe('could not connect within 500 ms; nothing was sent');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('answers lost when the server took the request and never answered', async () => {
    const url = await listen(createServer(() => undefined));
    const error = await failureOf(
      exchange(`${url}/v1/commit`, { method: 'POST', token: 't', body: {}, timeoutMs: 300 }),
    );
    expect(error.failure).toBe('lost');
    expect(error.message).toBe('no answer within 300 ms');
  });

  it('closes an idle connection itself well before the server would', async () => {
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.end('{"ok":true}'));
    });
    // Fastify's default; a connection reused just as the server closes it would be lost.
    server.keepAliveTimeout = 72_000;
    const url = await listen(server);
    const closed = new Promise<number>((resolve) => {
      server.once('connection', (socket: Socket) => {
        socket.once('close', () => resolve(Date.now()));
      });
    });
    const reply = await exchange(`${url}/healthz`, { method: 'GET', token: 't', timeoutMs: 5_000 });
    expect(reply).toEqual({ status: 200, body: { ok: true } });
    const answeredAt = Date.now();
    const idle = (await closed) - answeredAt;
    expect(idle).toBeGreaterThanOrEqual(IDLE_CONNECTION_MS - 100);
    expect(idle).toBeLessThan(IDLE_CONNECTION_MS + 5_000);
  }, 20_000);
});
