/**
 * An HTTP proxy between the client and a real server that loses traffic on purpose: a request
 * dropped before it reaches the server, or a reply dropped after the server answered (with
 * `drop-reply-then-down`, the proxy then stops listening, as a server that went away). The
 * connection is destroyed, exactly as a network failure looks to the client. It can also refuse a
 * request itself, `429` with a `Retry-After` header and no body, as a proxy or API gateway with a
 * rate limit of its own does. It notes when each request arrived, so a test can check that a
 * client came back no earlier than it was told.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A fault; `{ retryAfter }` answers 429 with that Retry-After, made when the answer goes out. */
export type ProxyFault =
  'drop-request' | 'drop-reply' | 'drop-reply-then-down' | { retryAfter: () => string };

interface Rule {
  method: string;
  path: string;
  fault: ProxyFault;
  times: number;
}

export interface Arrival {
  method: string;
  path: string;
  /** Date.now() when the request arrived. */
  at: number;
  /** The Retry-After it was refused with, or null when it was not refused. */
  retryAfter: string | null;
}

export class FaultProxy {
  readonly #upstream: string;
  readonly #rules: Rule[] = [];
  #server: Server | undefined;
  /** `METHOD path fault` for every request that went through, in order. */
  readonly log: string[] = [];
  readonly arrivals: Arrival[] = [];

  constructor(upstream: string) {
    this.#upstream = upstream;
  }

  /** Applies `fault` to the next `times` requests matching method and path prefix. */
  inject(method: string, path: string, fault: ProxyFault, times = 1): void {
    this.#rules.push({ method, path, fault, times });
  }

  /** Answers the next `times` requests of `method` to a path starting with `path` 429. */
  refuse(method: string, path: string, retryAfter: () => string, times = 1): void {
    this.inject(method, path, { retryAfter }, times);
  }

  /** The arrivals at paths starting with `path`. */
  at(path: string): Arrival[] {
    return this.arrivals.filter((arrival) => arrival.path.startsWith(path));
  }

  async start(): Promise<string> {
    const server = createServer((request, response) => {
      // The server behind it gone: the client sees a dropped connection, not a hung one.
      this.#handle(request, response).catch(() => request.socket.destroy());
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

  #take(method: string, path: string): ProxyFault | null {
    const rule = this.#rules.find(
      (r) => r.times > 0 && r.method === method && path.startsWith(r.path),
    );
    if (rule === undefined) return null;
    rule.times -= 1;
    return rule.fault;
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const at = Date.now();
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const method = request.method ?? 'GET';
    const path = request.url ?? '/';
    const fault = this.#take(method, path);
    if (typeof fault === 'object' && fault !== null) {
      const retryAfter = fault.retryAfter();
      this.log.push(`${method} ${path} 429`);
      this.arrivals.push({ method, path, at, retryAfter });
      response.writeHead(429, { 'retry-after': retryAfter, 'content-length': '0' });
      response.end();
      return;
    }
    this.log.push(`${method} ${path} ${fault ?? 'pass'}`);
    this.arrivals.push({ method, path, at, retryAfter: null });
    if (fault === 'drop-request') {
      request.socket.destroy();
      return;
    }
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
    if (fault === 'drop-reply' || fault === 'drop-reply-then-down') {
      if (fault === 'drop-reply-then-down') this.#server?.close();
      request.socket.destroy();
      return;
    }
    response.writeHead(upstream.status, {
      'content-type': upstream.headers.get('content-type') ?? 'application/json',
    });
    response.end(body);
  }
}
