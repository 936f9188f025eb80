/**
 * A route is plain data: method, path, who may call it, its schemas, its documented answers and a
 * handler. The server registers the same list it turns into the OpenAPI document, so a new
 * endpoint is one route file plus one line in routes/index.ts.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { Limits } from '../core/limits.js';
import type { ErrorCode } from '../errors.js';
import type { Fencegate } from '../gate.js';
import type { Store } from '../store/store.js';
import type { Principal } from './auth.js';
import type { ServerMetrics } from './metrics.js';
import type { RequestSchemas } from './schemas/requests.js';

/** public: no token; worker: any tenant token; operator: an operator token; admin: the admin token. */
export type RouteAuth = 'public' | 'worker' | 'operator' | 'admin';

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

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

export interface RouteSpec<P extends TSchema, Q extends TSchema, B extends TSchema> {
  method: HttpMethod;
  /** Fastify path syntax (`/v1/scopes/:scope`). */
  url: string;
  auth: RouteAuth;
  /** An operator route that a worker token with a take-over right may call too (auth.ts). */
  takeOverRight?: boolean;
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
  /** Left out of the OpenAPI document (test-only routes). */
  hidden?: boolean;
  handler(
    input: RouteInput<Static<P>, Static<Q>, Static<B>>,
    ctx: RouteContext,
  ): Promise<RouteAnswer>;
}

/** A route with its types erased, as stored in route lists. */
export interface AnyRoute extends Omit<RouteSpec<TSchema, TSchema, TSchema>, 'handler'> {
  handler(input: RouteInput<unknown, unknown, unknown>, ctx: RouteContext): Promise<RouteAnswer>;
}

export function route<
  P extends TSchema = TSchema,
  Q extends TSchema = TSchema,
  B extends TSchema = TSchema,
>(spec: RouteSpec<P, Q, B>): AnyRoute {
  return spec;
}

/** A route file: the routes of one resource, given the server's request schemas. */
export type RouteFile = (schemas: RequestSchemas, limits: Limits) => AnyRoute[];

export function ok(body: unknown, status = 200): RouteAnswer {
  return { status, body };
}
