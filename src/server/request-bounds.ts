/**
 * How long a request may take to arrive, and what a client asking `Expect: 100-continue` is told.
 * Without a bound on the time a request may take, a body sent slowly, or stalled short of its
 * declared length, holds its connection and what has arrived of it for as long as the client
 * likes: each request must arrive whole within `requestTimeoutMs`, or it is answered 408 and its
 * connection is closed. A body declared over the limit is refused before the client sends it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { bodyTooLarge, wireBody } from './error-handler.js';

/** The longest a request, from its first byte to the end of its body, may take to arrive. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/**
 * The server options that enforce the request timeout. Node bounds a body's arrival only when
 * the timeout is given as the HTTP server is made, not when set on it later as Fastify does, so it
 * goes to both. Node checks for requests past it every `connectionsCheckingInterval`; its default
 * (30 s) would let a short bound run twice over.
 */
export function requestTimeoutOptions(requestTimeoutMs: number): {
  requestTimeout: number;
  http: { requestTimeout: number; connectionsCheckingInterval: number };
} {
  return {
    requestTimeout: requestTimeoutMs,
    http: {
      requestTimeout: requestTimeoutMs,
      connectionsCheckingInterval: Math.max(1, Math.min(1000, requestTimeoutMs)),
    },
  };
}

/**
 * Answers `Expect: 100-continue` with 413 at once when the declared Content-Length is over the
 * limit, so the client never uploads a body that would be refused; any other request is told to
 * continue and handled as usual.
 */
export function refuseOversizedBeforeContinue(app: FastifyInstance, maxBodyBytes: number): void {
  const server = app.server;
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBodyBytes) {
      const body = JSON.stringify(wireBody(bodyTooLarge(maxBodyBytes)));
      response.writeHead(413, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        // The body was never sent: the connection cannot carry another request.
        connection: 'close',
      });
      response.end(body);
      return;
    }
    response.writeContinue();
    server.emit('request', request, response);
  });
}
