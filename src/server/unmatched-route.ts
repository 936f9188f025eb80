/**
 * The answer to a request no route takes, from the route table: a path that a route of another
 * method takes is `405 method_not_allowed` naming the methods (and the Allow header); a path that
 * would match once a `/` inside a scope or record name is encoded as `%2F` says so; anything
 * else is `404 not_found`.
 */
import { FencegateError } from '../errors.js';

interface RoutePattern {
  method: string;
  /** Fastify path syntax (`/v1/scopes/:scope`). */
  url: string;
}

export interface UnmatchedAnswer {
  error: FencegateError;
  /** The Allow header of a 405. */
  allow?: string;
}

const SHOWN_PATH_LENGTH = 200;

export function unmatchedRoute(
  routes: readonly RoutePattern[],
  method: string,
  path: string,
): UnmatchedAnswer {
  const shown = path.length > SHOWN_PATH_LENGTH ? `${path.slice(0, SHOWN_PATH_LENGTH)}…` : path;
  const methods = [
    ...new Set(routes.filter((r) => patternOf(r.url, '[^/]+').test(path)).map((r) => r.method)),
  ];
  if (methods.length > 0) {
    const allow = methods.sort().join(', ');
    return {
      allow,
      error: new FencegateError(
        'method_not_allowed',
        `${method} ${shown} is not a route; use ${methods.join(' or ')}`,
        { allow: methods },
      ),
    };
  }
  const encoded = encodedSlashes(routes, method, path);
  const hint =
    encoded === null
      ? ''
      : `; encode a / in a scope or record name as %2F: ${method} ${encoded.length > SHOWN_PATH_LENGTH ? `${encoded.slice(0, SHOWN_PATH_LENGTH)}…` : encoded}`;
  return { error: new FencegateError('not_found', `no route ${method} ${shown}${hint}`) };
}

/** The path with `/` encoded inside the parameters of a route of `method` it then matches. */
function encodedSlashes(
  routes: readonly RoutePattern[],
  method: string,
  path: string,
): string | null {
  // The route with the most fixed text first: /v1/scopes/:scope/records/:name before /v1/scopes/:scope.
  const candidates = routes
    .filter((r) => r.method === method)
    .sort((a, b) => fixedLength(b.url) - fixedLength(a.url));
  for (const route of candidates) {
    const names = [...route.url.matchAll(/:(\w+)/g)].map((match) => match[1]!);
    if (names.length === 0) continue;
    const match = patternOf(route.url, '(.+?)').exec(path);
    if (match === null) continue;
    const values = match.slice(1);
    if (!values.some((value) => value.includes('/'))) continue;
    let index = 0;
    return route.url.replace(/:\w+/g, () => values[index++]!.replaceAll('/', '%2F'));
  }
  return null;
}

function fixedLength(url: string): number {
  return url.replace(/:\w+/g, '').length;
}

function patternOf(url: string, parameter: string): RegExp {
  const parts = url
    .split(/(:\w+)/)
    .map((part) =>
      part.startsWith(':') ? parameter : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    );
  return new RegExp(`^${parts.join('')}$`);
}
