/**
 * One HTTP exchange with the server, and what failed when it did not complete. A request that was
 * never sent (connection refused) is always safe to retry; one that was sent and then lost is not,
 * unless the operation is a read or carries an operationId.
 */
import { FencegateError, isErrorCode } from '../errors.js';

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
}

/** Connection errors that prove the request never reached the server. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export async function exchange(
  url: string,
  init: { method: string; token: string; body?: unknown; timeoutMs: number },
): Promise<Reply> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${init.token}`,
    accept: 'application/json',
  };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      method: init.method,
      headers,
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      signal: AbortSignal.timeout(init.timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    throw classify(error, init.timeoutMs);
  }
  return { status: response.status, body: parseBody(text, response.status) };
}

function classify(error: unknown, timeoutMs: number): TransportError {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return new TransportError('lost', `no answer within ${timeoutMs} ms`, { cause: error });
  }
  const cause =
    error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  const reason = code ?? (error instanceof Error ? error.message : String(error));
  if (code !== undefined && NOT_SENT_CODES.has(code)) {
    return new TransportError('not_sent', `could not connect (${reason})`, { cause: error });
  }
  return new TransportError('lost', `the connection failed (${reason})`, { cause: error });
}

function parseBody(text: string, status: number): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { nonJson: true, status };
  }
}

/** Rebuilds the catalog error of an error answer; an answer that is not ours is described as such. */
export function errorFromReply(reply: Reply): FencegateError {
  const error = wireError(reply);
  if (error !== undefined) return error;
  // Not a fencegate answer (a proxy in between, or a crash): say what came back.
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
