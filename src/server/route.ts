/**
 * A route spec names its entry in the route table (src/route-table.ts), which gives its method,
 * path, who may call it and its retry class, and adds its schemas, its documented answers and a
 * handler. The server registers the same list it turns into the OpenAPI document, so a new
 * endpoint is one table entry plus its route spec in a route file (a new file is one line in
 * routes/index.ts).
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { Limits } from '../core/limits.js';
import type { ErrorCode } from '../errors.js';
import type { Fencegate } from '../gate.js';
import {
  ROUTE_TABLE,
  type HttpMethod,
  type RetryClass,
  type RouteAuth,
  type RouteEntry,
  type RouteName,
} from '../route-table.js';
import type { Store } from '../store/store.js';
import type { Principal } from './auth.js';
import type { ServerMetrics } from './metrics.js';
import type { RequestSchemas } from './schemas/requests.js';

export type { HttpMethod, RouteAuth };

export interface RouteAnswer {
  status?: number;
  body: unknown;
  /** Defaults to application/json. */
  contentType?: string;
}

export interface RouteContext {
  principal: Principal | null;
  /** The library facade bound to the caller's tenant; throws for routes without a tenant. */
  tenantApi(): Fencegate;
  store: Store;
  limits: Limits;
  metrics: ServerMetrics;
  /** Request id, as logged. */
  requestId: string;
  /** Logs a fault answered inside a body (an item of a batch), as the error handler logs one. */
  logUnexpected(error: unknown): void;
  /** The OpenAPI document of this server's routes. */
  openapi(): Record<string, unknown>;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

export interface ResponseDoc {
  description: string;
  schema?: TSchema;
  contentType?: string;
}

/** What a route file says of a route besides its table entry. */
export interface RouteSpec<
  N extends RouteName,
  P extends TSchema,
  Q extends TSchema,
  B extends TSchema,
> {
  /** Its entry in the route table: method, path, auth and retry class come from there. */
  name: N;
  summary: string;
  tag: string;
  params?: P;
  querystring?: Q;
  body?: B;
  /** A missing body is read as `{}`. */
  bodyOptional?: boolean;
  /**
   * The shared core validator for each part. It runs when the schema refuses a part, so the
   * message a caller sees is the one the library gives for the same input.
   */
  explain?: Partial<Record<'params' | 'querystring' | 'body', (value: unknown) => void>>;
  responses: Record<number, ResponseDoc>;
  /** Catalog codes this route answers besides invalid_request and the auth codes. */
  errors?: ErrorCode[];
  handler(
    input: RouteInput<Static<P>, Static<Q>, Static<B>>,
    ctx: RouteContext,
  ): Promise<RouteAnswer>;
}

/** A route as the server registers it, with its types erased. */
export interface AnyRoute extends Omit<
  RouteSpec<RouteName, TSchema, TSchema, TSchema>,
  'name' | 'handler'
> {
  /** Its table entry; null for a test-only route, which the OpenAPI document leaves out. */
  name: RouteName | null;
  method: HttpMethod;
  /** Fastify path syntax (`/v1/scopes/:scope`). */
  url: string;
  auth: RouteAuth;
  /** An operator route that a worker token with a take-over right may call too (auth.ts). */
  takeOverRight: boolean;
  /** How a client may retry it; null for a test-only route. */
  retry: RetryClass | null;
  handler(input: RouteInput<unknown, unknown, unknown>, ctx: RouteContext): Promise<RouteAnswer>;
}

/** A route of the route table, by its name. */
export interface NamedRoute<N extends RouteName> extends AnyRoute {
  name: N;
  retry: RetryClass;
}

export function route<
  N extends RouteName,
  P extends TSchema = TSchema,
  Q extends TSchema = TSchema,
  B extends TSchema = TSchema,
>(spec: RouteSpec<N, P, Q, B>): NamedRoute<N> {
  const entry: RouteEntry = ROUTE_TABLE[spec.name];
  return {
    ...spec,
    name: spec.name,
    method: entry.method,
    url: entry.path,
    auth: entry.auth,
    takeOverRight: entry.takeOverRight === true,
    retry: entry.retry,
  };
}

/**
 * A route that only test servers register. It has no table entry, so no client calls it and the
 * OpenAPI document leaves it out.
 */
export function testOnlyRoute<
  P extends TSchema = TSchema,
  Q extends TSchema = TSchema,
  B extends TSchema = TSchema,
>(
  spec: Omit<RouteSpec<RouteName, P, Q, B>, 'name'> & {
    method: HttpMethod;
    url: string;
    auth: RouteAuth;
  },
): AnyRoute {
  return {
    ...spec,
    name: null,
    takeOverRight: false,
    retry: null,
  };
}

/** A route file: the routes of one resource, given the server's request schemas. */
export type RouteFile = (schemas: RequestSchemas, limits: Limits) => AnyRoute[];

/**
 * Declares a route file of table routes. It keeps the file's exact type, so routes/index.ts can
 * check at compile time that every table entry is served.
 */
export function routeFile<
  F extends (schemas: RequestSchemas, limits: Limits) => NamedRoute<RouteName>[],
>(file: F): F {
  return file;
}

export function ok(body: unknown, status = 200): RouteAnswer {
  return { status, body };
}
