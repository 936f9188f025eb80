/**
 * One HTTP exchange with the server, and what failed when it did not complete. A request that was
 * never sent (connection refused) is always safe to retry; one that was sent and then lost is not,
 * unless the operation is a read or carries an operationId.
 *
 * The exchange is node:http/https with keep-alive agents, not fetch: on Node 20 fetch's Request,
 * Headers, Response and web streams cost about five times node:http's CPU per request, and a
 * client's CPU runs beside the server's on the same machine (BENCHMARKS.md).
 */
import type { IncomingMessage } from 'node:http';
import { FencegateError, isErrorCode } from '../errors.js';
import { keepAliveRequest } from '../keep-alive-agents.js';

export type TransportFailure = 'not_sent' | 'lost';

export class TransportError extends Error {
  override readonly name = 'TransportError';
  constructor(
    readonly failure: TransportFailure,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface Reply {
  status: number;
  body: unknown;
  /** The answer's Retry-After header, when it has one: how a 429 from anyone says when to come back. */
  retryAfter?: string;
}

/** Connection errors that prove the request never reached the server. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/**
 * Node's codes for a server certificate the client does not trust. Verification is part of the
 * TLS handshake, which ends before the request is written: nothing was sent.
 */
const TLS_VERIFY_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REJECTED',
  'CERT_REVOKED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'HOSTNAME_MISMATCH',
  'INVALID_CA',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
]);

/**
 * The longest answer read: far above any the server sends (a page's byte budget is 1 MiB by
 * default), so that a peer streaming without end cannot fill the client's memory.
 */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

export function exchange(
  url: string,
  init: {
    method: string;
    token: string;
    body?: unknown;
    /** The body as JSON text already (a batch built from its items' texts); wins over `body`. */
    bodyText?: string;
    timeoutMs: number;
    /** The longest answer read (MAX_ANSWER_BYTES); a longer one is dropped and the request lost. */
    maxAnswerBytes?: number;
  },
): Promise<Reply> {
  const text = init.bodyText ?? (init.body === undefined ? undefined : JSON.stringify(init.body));
  const headers: Record<string, string> = {
    authorization: `Bearer ${init.token}`,
    accept: 'application/json',
  };
  if (text !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(text));
  }
  const target = new URL(url);
  const maxAnswerBytes = init.maxAnswerBytes ?? MAX_ANSWER_BYTES;
  return new Promise<Reply>((resolve, reject) => {
    let settled = false;
    /**
     * Whether the request may have reached the server: a socket reused from the pool, or a new
     * one once connected (over TLS, once the handshake is done). node:http writes nothing before.
     */
    let connected = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
    };
    const fail = (error: unknown): void => settle(() => reject(classify(error, connected)));
    const drop = (error: TransportError): void => {
      settle(() => reject(error));
      sent.destroy();
    };
    // A redirect is answered as it is (node:http never follows one): following it would send the
    // token to whatever origin it names, and take another URL's answer for this request's.
    const onAnswer = (answer: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      let size = 0;
      answer.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= maxAnswerBytes) chunks.push(chunk);
        else {
          chunks.length = 0;
          drop(
            new TransportError('lost', `the answer passed ${maxAnswerBytes} bytes; it was dropped`),
          );
        }
      });
      answer.on('error', fail);
      answer.on('end', () => {
        const status = answer.statusCode ?? 0;
        const body = parseBody(Buffer.concat(chunks), status);
        const retryAfter = answer.headers['retry-after'];
        settle(() =>
          resolve(retryAfter === undefined ? { status, body } : { status, body, retryAfter }),
        );
      });
    };
    const options = { method: init.method, headers };
    const sent = keepAliveRequest(target, options, onAnswer);
    sent.on('socket', (socket) => {
      if (sent.reusedSocket || !socket.connecting) connected = true;
      else
        socket.once(target.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
          connected = true;
        });
    });
    // One bound for the whole exchange, the answer's last byte included: an answer that trickles
    // in ends here too. Before a connection, nothing was sent.
    const timer = setTimeout(() => {
      drop(
        connected
          ? new TransportError('lost', `no answer within ${init.timeoutMs} ms`)
          : new TransportError(
              'not_sent',
              `could not connect within ${init.timeoutMs} ms; nothing was sent`,
            ),
      );
    }, init.timeoutMs);
    sent.on('error', fail);
    sent.end(text);
  });
}

function errorCode(error: unknown): string | undefined {
  const own = (error as { code?: unknown } | null)?.code;
  if (typeof own === 'string') return own;
  const cause =
    error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

/** `connected`: whether the request may have reached the server (see exchange). */
function classify(error: unknown, connected: boolean): TransportError {
  const code = errorCode(error);
  const reason = code ?? (error instanceof Error ? error.message : String(error));
  if (code !== undefined && TLS_VERIFY_CODES.has(code)) {
    return new TransportError(
      'not_sent',
      `the server's TLS certificate was not accepted (${code}); nothing was sent`,
      { cause: error },
    );
  }
  if (!connected && code !== undefined && NOT_SENT_CODES.has(code)) {
    return new TransportError('not_sent', `could not connect (${reason})`, { cause: error });
  }
  return new TransportError('lost', `the connection failed (${reason})`, { cause: error });
}

function parseBody(bytes: Buffer, status: number): unknown {
  if (bytes.length === 0) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return { nonJson: true, status };
  }
}

/** Rebuilds the catalog error of an error answer; an answer that is not ours is described as such. */
export function errorFromReply(reply: Reply): FencegateError {
  const error = wireError(reply);
  if (error !== undefined) return error;
  // Not a fencegate answer (a proxy in between, or a crash): say what came back.
  if (reply.status === 429) {
    // Too Many Requests refuses the request before it is served, whoever answers it.
    return new FencegateError(
      'rate_limited',
      'the server answered HTTP 429 Too Many Requests without a fencegate error body (a proxy or gateway in between limits the rate); nothing was changed: send it again later',
      { status: reply.status },
    );
  }
  if (isRedirectStatus(reply.status)) {
    return new FencegateError(
      'internal_error',
      `the server answered HTTP ${reply.status}, a redirect; API calls never follow redirects: give the client the fencegate server's own URL`,
      { status: reply.status },
    );
  }
  return new FencegateError(
    'internal_error',
    `the server answered HTTP ${reply.status} without a fencegate error body`,
    {
      status: reply.status,
    },
  );
}

function wireError(reply: Reply): FencegateError | undefined {
  const error = (
    reply.body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined
  )?.error;
  if (error === undefined || !isErrorCode(error.code)) return undefined;
  const details =
    typeof error.details === 'object' && error.details !== null
      ? (error.details as Record<string, unknown>)
      : {};
  const message = typeof error.message === 'string' ? error.message : error.code;
  return new FencegateError(error.code, message, details);
}

/**
 * An answer that says nothing about what a write did: not fencegate's error, and either a redirect
 * (never followed) or a gateway error (a proxy may have passed the request on before it failed).
 */
export function leavesOutcomeUnknown(reply: Reply): boolean {
  return (
    wireError(reply) === undefined &&
    (isRedirectStatus(reply.status) || isUnavailableStatus(reply.status))
  );
}

/** What a write's answer says happened, for an unknown-outcome error. */
export function describeAnswer(reply: Reply): string {
  return isRedirectStatus(reply.status)
    ? `was answered HTTP ${reply.status}, a redirect, which API calls never follow`
    : `was answered HTTP ${reply.status} without a fencegate error body (a proxy or gateway)`;
}

export function isRedirectStatus(status: number): boolean {
  return status >= 300 && status < 400;
}

/** The server said store_unavailable: by the catalog, nothing changed, so any request may be resent. */
export function nothingChanged(reply: Reply): boolean {
  return wireError(reply)?.code === 'store_unavailable';
}

/** A gateway or availability answer: worth another try for a read. */
export function isUnavailableStatus(status: number): boolean {
  return status === 502 || status === 503 || status === 504;
}

export function isSuccess(reply: Reply): boolean {
  return reply.status >= 200 && reply.status < 300;
}

/** The error of a request that never reached the server, after its attempts. */
export function unreachable(url: string, error: TransportError): FencegateError {
  return new FencegateError(
    'store_unavailable',
    `could not reach fencegate at ${url}: ${error.message}`,
    {},
    { cause: error },
  );
}
