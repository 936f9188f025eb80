/**
 * A real HTTP receiver on 127.0.0.1 for dispatch tests: it applies an effect once per
 * Idempotency-Key (a repeated key is answered like the first time, without applying it again) and
 * records every request. `respond` decides each answer: a status, or 'hold' (apply the effect, then
 * never answer: the client times out and cannot know it happened).
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  path: string;
  key: string | null;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** 1 for the first request with this key, 2 for the second, … */
  n: number;
}

export type ReceiverAnswer =
  number | 'hold' | { status: number; body?: unknown; headers?: Record<string, string> };

export interface AppliedEffect {
  id: string;
  body: unknown;
}

export interface ReceiverOptions {
  port?: number;
  respond?: (request: ReceivedRequest) => ReceiverAnswer;
}

export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  /** Applied effects by Idempotency-Key: each key at most once, by construction. */
  readonly effects = new Map<string, AppliedEffect>();
  respond: (request: ReceivedRequest) => ReceiverAnswer;
  readonly #server: Server;
  readonly #held = new Set<ServerResponse>();
  readonly #waiters: (() => void)[] = [];

  private constructor(server: Server, respond: (request: ReceivedRequest) => ReceiverAnswer) {
    this.#server = server;
    this.respond = respond;
  }

  static async start(options: ReceiverOptions = {}): Promise<Receiver> {
    const server = createServer();
    const receiver = new Receiver(server, options.respond ?? (() => 200));
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => receiver.handle(req.url ?? '/', req.headers, Buffer.concat(chunks), res));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    return receiver;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  requestsFor(key: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.key === key);
  }

  /** Resolves once `count` requests have arrived. */
  async waitForRequests(count: number): Promise<void> {
    while (this.requests.length < count) {
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  async close(): Promise<void> {
    for (const res of this.#held) res.destroy();
    this.#held.clear();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  private handle(
    path: string,
    headers: IncomingHttpHeaders,
    raw: Buffer,
    res: ServerResponse,
  ): void {
    const keyHeader = headers['idempotency-key'];
    const key = typeof keyHeader === 'string' ? keyHeader : null;
    let body: unknown = null;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      body = raw.toString('utf8');
    }
    const n = key === null ? 1 : this.requestsFor(key).length + 1;
    const request: ReceivedRequest = { path, key, headers, body, n };
    this.requests.push(request);
    for (const wake of this.#waiters.splice(0)) wake();

    const answer = this.respond(request);
    const status = typeof answer === 'number' ? answer : answer === 'hold' ? 200 : answer.status;
    let effect: AppliedEffect | undefined;
    if (key !== null && status >= 200 && status < 300) {
      effect = this.effects.get(key);
      if (effect === undefined) {
        effect = { id: `rcpt-${this.effects.size + 1}`, body };
        this.effects.set(key, effect);
      }
    }
    if (answer === 'hold') {
      // Applied, but the answer never comes: the client gives up and cannot tell.
      this.#held.add(res);
      res.on('close', () => this.#held.delete(res));
      return;
    }
    const extraHeaders = typeof answer === 'object' ? (answer.headers ?? {}) : {};
    const answerBody =
      typeof answer === 'object' && answer.body !== undefined
        ? answer.body
        : effect === undefined
          ? { error: `status ${status}` }
          : { id: effect.id };
    res.writeHead(status, { 'content-type': 'application/json', ...extraHeaders });
    res.end(JSON.stringify(answerBody));
  }
}
