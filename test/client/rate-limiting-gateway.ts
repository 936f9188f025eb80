/**
 * An HTTP gateway in front of a real server that answers chosen requests `429 Too Many Requests`
 * with a `Retry-After` header and no body, as a proxy or API gateway with a rate limit of its own
 * does, and passes every other request through. It notes when each request arrived, so a test can
 * check that a client came back no earlier than it was told.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Refusal {
  method: string;
  path: string;
  /** The Retry-After value, made when the answer goes out (an HTTP date depends on the time). */
  retryAfter: () => string;
  times: number;
}

export interface Arrival {
  method: string;
  path: string;
  /** Date.now() when the request arrived. */
  at: number;
  /** The Retry-After it was answered with, or null when it was passed through. */
  retryAfter: string | null;
}

export class RateLimitingGateway {
  readonly #upstream: string;
  readonly #refusals: Refusal[] = [];
  #server: Server | undefined;
  readonly arrivals: Arrival[] = [];

  constructor(upstream: string) {
    this.#upstream = upstream;
  }

  /** Answers the next `times` requests of `method` to a path starting with `path` 429. */
  refuse(method: string, path: string, retryAfter: () => string, times = 1): void {
    this.#refusals.push({ method, path, retryAfter, times });
  }

  /** The arrivals at paths starting with `path`. */
  at(path: string): Arrival[] {
    return this.arrivals.filter((arrival) => arrival.path.startsWith(path));
  }

  async start(): Promise<string> {
    const server = createServer((request, response) => {
      void this.#handle(request, response);
    });
    this.#server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const at = Date.now();
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const method = request.method ?? 'GET';
    const path = request.url ?? '/';
    const refusal = this.#refusals.find(
      (r) => r.times > 0 && r.method === method && path.startsWith(r.path),
    );
    if (refusal !== undefined) {
      refusal.times -= 1;
      const retryAfter = refusal.retryAfter();
      this.arrivals.push({ method, path, at, retryAfter });
      response.writeHead(429, { 'retry-after': retryAfter, 'content-length': '0' });
      response.end();
      return;
    }
    this.arrivals.push({ method, path, at, retryAfter: null });
    const headers: Record<string, string> = {};
    for (const name of ['authorization', 'content-type', 'accept']) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const upstream = await fetch(`${this.#upstream}${path}`, {
      method,
      headers,
      ...(chunks.length === 0 ? {} : { body: Buffer.concat(chunks) }),
    });
    const body = Buffer.from(await upstream.arrayBuffer());
    response.writeHead(upstream.status, {
      'content-type': upstream.headers.get('content-type') ?? 'application/json',
    });
    response.end(body);
  }
}
