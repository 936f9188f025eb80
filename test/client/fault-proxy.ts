/**
 * An HTTP proxy between the client and a real server that loses traffic on purpose: a request
 * dropped before it reaches the server, or a reply dropped after the server answered (with
 * `drop-reply-then-down`, the proxy then stops listening, as a server that went away). The
 * connection is destroyed, exactly as a network failure looks to the client.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ProxyFault = 'drop-request' | 'drop-reply' | 'drop-reply-then-down';

interface Rule {
  method: string;
  path: string;
  fault: ProxyFault;
  times: number;
}

export class FaultProxy {
  readonly #upstream: string;
  readonly #rules: Rule[] = [];
  #server: Server | undefined;
  /** `METHOD path fault` for every request that went through, in order. */
  readonly log: string[] = [];

  constructor(upstream: string) {
    this.#upstream = upstream;
  }

  /** Applies `fault` to the next `times` requests matching method and path prefix. */
  inject(method: string, path: string, fault: ProxyFault, times = 1): void {
    this.#rules.push({ method, path, fault, times });
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

  #take(method: string, path: string): ProxyFault | null {
    const rule = this.#rules.find(
      (r) => r.times > 0 && r.method === method && path.startsWith(r.path),
    );
    if (rule === undefined) return null;
    rule.times -= 1;
    return rule.fault;
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const method = request.method ?? 'GET';
    const path = request.url ?? '/';
    const fault = this.#take(method, path);
    this.log.push(`${method} ${path} ${fault ?? 'pass'}`);
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
