/**
 * A client request named by its route-table entry: the path is the table's with each `:param`
 * filled, checked and percent-encoded, and how it may be resent follows the entry's retry class.
 */
import { requireName } from '../core/validate.js';
import { FencegateError } from '../errors.js';
import {
  ROUTE_TABLE,
  routePath,
  type HttpMethod,
  type RetryClass,
  type RouteName,
  type RouteParams,
} from '../route-table.js';

/**
 * How a request may be retried after its reply was lost: a read, or a write that is idempotent
 * by construction, is sent again; any other write is not, since it may have taken effect.
 */
export type ResendKind = 'read' | 'idempotent' | 'write';

/** The path values a route needs: none for a path without `:param`, else one each. */
type PathValues<N extends RouteName> = [keyof RouteParams<N>] extends [never]
  ? { params?: undefined }
  : { params: RouteParams<N> };

export type RouteRequest<N extends RouteName> = PathValues<N> & {
  /** Query parameters; undefined values are left out. */
  query?: object;
  body?: unknown;
  /** For `idempotent-when-timed`: whether every job event carries its own `at`. */
  timed?: boolean;
};

export interface ResolvedRequest {
  method: HttpMethod;
  /** The path and query string, percent-encoded. */
  path: string;
  kind: ResendKind;
  body: unknown;
}

/** The request of route `name`, checked at compile time against the table's path values. */
export function routeRequest<N extends RouteName>(
  name: N,
  request: RouteRequest<N>,
): ResolvedRequest {
  const entry = ROUTE_TABLE[name];
  const params = (request.params ?? {}) as RouteParams<N>;
  return {
    method: entry.method,
    path: `${routePath(name, params, segment)}${queryString(request.query ?? {})}`,
    kind: resendKind(entry.retry, request.timed === true),
    body: request.body,
  };
}

/**
 * The resend rule of a retry class. A commit has its own (the client reads its stored outcome
 * first); sent as a plain request it is never resent, like a lease operation.
 */
export function resendKind(retry: RetryClass, timed: boolean): ResendKind {
  switch (retry) {
    case 'read':
      return 'read';
    case 'idempotent':
      return 'idempotent';
    case 'idempotent-when-timed':
      return timed ? 'idempotent' : 'write';
    case 'commit':
    case 'lease':
    case 'none':
      return 'write';
  }
}

/**
 * A name as a path segment. It is checked first with the shared validator (same code and message
 * as the library): an empty or malformed name would otherwise address another route. The names
 * `.` and `..` are refused here: every URL parser (fetch, curl) resolves them as dot segments,
 * even percent-encoded, so no request can carry them in a path.
 */
export function segment(name: string, field: string): string {
  requireName(name, field);
  if (name === '.' || name === '..') {
    throw new FencegateError(
      'invalid_request',
      `${field} "${name}" cannot be addressed in a URL path`,
      {
        field,
      },
    );
  }
  return encodeURIComponent(name);
}

function queryString(query: object): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.set(key, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}
