/**
 * Every failure becomes the one error body of HTTP-API.md: {"error": {code, message, details}}.
 * Catalog errors keep their code and status; Fastify's own request errors (parsing, size, media
 * type, routing) are mapped to catalog codes; anything else, and every internal_error, is a 500
 * that names the request id (in its details, as the x-request-id header) and nothing of the
 * internals.
 */
import type { FastifyError } from 'fastify';
import { ERROR_CATALOG, FencegateError, isFencegateError, type ErrorCode } from '../errors.js';

export interface WireError {
  status: number;
  body: { error: { code: ErrorCode; message: string; details: Record<string, unknown> } };
  /** True for a server fault that must be logged with its stack. */
  unexpected: boolean;
}

export function wireBody(error: FencegateError): WireError['body'] {
  return { error: { code: error.code, message: error.message, details: error.details } };
}

export function toWireError(error: unknown, requestId: string, maxBodyBytes: number): WireError {
  if (isFencegateError(error) && error.code === 'internal_error') {
    // A store's own fault: answered with the request id the log has it under, like any other.
    const internal = new FencegateError(error.code, error.message, {
      ...error.details,
      requestId,
    });
    return { status: 500, body: wireBody(internal), unexpected: true };
  }
  if (isFencegateError(error)) {
    return {
      status: ERROR_CATALOG[error.code].httpStatus,
      body: wireBody(error),
      unexpected: false,
    };
  }
  const known = fastifyRequestError(error, maxBodyBytes);
  if (known !== undefined)
    return { status: known.httpStatus, body: wireBody(known), unexpected: false };
  const internal = new FencegateError(
    'internal_error',
    `an unexpected error occurred; the server log has it under request id ${requestId}`,
    { requestId },
  );
  return { status: 500, body: wireBody(internal), unexpected: true };
}

/** A body over the limit, read in part or only declared. */
export function bodyTooLarge(maxBodyBytes: number): FencegateError {
  return new FencegateError('payload_too_large', `the body is over ${maxBodyBytes} bytes`, {
    limit: maxBodyBytes,
  });
}

function fastifyRequestError(error: unknown, maxBodyBytes: number): FencegateError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, statusCode } = error as Partial<FastifyError>;
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return bodyTooLarge(maxBodyBytes);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new FencegateError(
        'unsupported_media_type',
        'the body must be JSON sent with Content-Type: application/json',
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new FencegateError('invalid_request', 'the body is empty; send a JSON object', {
        field: 'body',
      });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new FencegateError(
        'invalid_request',
        'the body has a key named __proto__, or constructor with prototype: such keys are refused',
        { field: 'body' },
      );
    case 'FST_ERR_BAD_URL':
      return new FencegateError('invalid_request', 'the path is not validly percent-encoded', {
        field: 'path',
      });
    default:
      break;
  }
  // Any other client error Fastify raises before our code runs (bad Content-Length, …).
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    if (statusCode === 413)
      return new FencegateError('payload_too_large', 'the request is too large');
    if (statusCode === 415) {
      return new FencegateError(
        'unsupported_media_type',
        'the body must be sent as application/json',
      );
    }
    if (statusCode === 404) return new FencegateError('not_found', 'no such route');
    return new FencegateError('invalid_request', 'the request is malformed');
  }
  return undefined;
}
