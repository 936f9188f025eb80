/**
 * The Fastify application: routes from routes/index.ts, validated by their TypeBox schemas and the
 * shared core validators, authenticated per request, answered with the one error body. The store
 * is the caller's: closing the server does not close it (startServer does).
 */
import { randomUUID } from 'node:crypto';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type onRequestHookHandler,
  type onSendHookHandler,
  type preHandlerHookHandler,
} from 'fastify';
import type { Registry } from 'prom-client';
import { DEFAULT_LIMITS, type Limits } from '../core/limits.js';
import { FencegateError, isFencegateError } from '../errors.js';
import { Fencegate } from '../gate.js';
import type { Store } from '../store/store.js';
import type { ManualClock } from '../testing/manual-clock.js';
import { Authenticator, authorize, type Principal } from './auth.js';
import { toWireError } from './error-handler.js';
import { createLogger } from './logger.js';
import { ServerMetrics } from './metrics.js';
import { useExactJsonParser } from './json-body.js';
import { refuseEncodedBodies } from './content-encoding.js';
import { DEFAULT_BODY_DRAIN, drainBodiesBeforeAnswers, type BodyDrainBound } from './drain-body.js';
import {
  DEFAULT_REQUEST_TIMEOUT_MS,
  refuseOversizedBeforeContinue,
  requestTimeoutOptions,
} from './request-bounds.js';
import { StoreGauges, type StoreGaugesOptions } from './store-gauges.js';
import { retryAfterSeconds, TenantRateLimiter, type TenantRateLimit } from './tenant-rate-limit.js';
import { buildOpenApiDocument } from './openapi.js';
import { unmatchedRoute } from './unmatched-route.js';
import type { AnyRoute, RouteAuth, RouteContext, RouteFile } from './route.js';
import { ROUTE_FILES } from './routes/index.js';
import { testClockRoutes } from './routes/test-clock.js';
import { requestSchemas } from './schemas/requests.js';
import { dashboardRoutes } from './ui/routes.js';
import { createValidatorCompiler } from './validation.js';
import { DEFAULT_TOKEN_CACHE_TTL_MS, TokenCache } from './token-cache.js';
import { packageVersion } from './version.js';
import type { SourceAccess } from '../rollout/metric-sources.js';

export interface ServerLimits extends Limits {
  /** The largest request body, in bytes (HTTP-API.md: 1 MiB). */
  maxBodyBytes: number;
}

export const DEFAULT_SERVER_LIMITS: ServerLimits = { ...DEFAULT_LIMITS, maxBodyBytes: 1024 * 1024 };

export interface ServerOptions {
  store: Store;
  /** The admin token (FENCEGATE_ADMIN_TOKEN); admin tokens kept in the store work as well. */
  adminToken?: string;
  /** true: JSON logs to stdout at info; a pino logger: use it; false or absent: no logs. */
  logger?: boolean | FastifyBaseLogger;
  limits?: Partial<ServerLimits>;
  /** Test servers only: registers POST /v1/test/clock to move this clock. */
  testClock?: ManualClock;
  /** Also export the process metrics of prom-client (CPU, memory, event loop). */
  processMetrics?: boolean;
  /**
   * The Prometheus registry GET /metrics renders; a fresh one when absent. Pass one to add other
   * metrics to the same scrape (the dispatcher's, in `fencegate serve --dispatch`).
   */
  registry?: Registry;
  /**
   * How long a looked-up token is trusted before the store is read again (0: never). A token
   * deleted through this server stops working at once; one deleted elsewhere, within this bound.
   */
  tokenCacheTtlMs?: number;
  /**
   * Label the rollout gauges of /metrics with `tenant` and `rollout` id. /metrics needs no token,
   * so by default they carry a pseudonym instead (docs/http.md, Operations).
   */
  metricsRolloutNames?: boolean;
  /** How often the store's gauges (intents, audit violations) are refreshed in the background. */
  storeGauges?: StoreGaugesOptions;
  /** Behind a TLS-terminating proxy: its X-Forwarded-Proto decides the dashboard cookie's Secure. */
  trustProxy?: boolean;
  /** How much of a body still arriving is read before its early answer goes out (drain-body.ts). */
  bodyDrain?: Partial<BodyDrainBound>;
  /**
   * How long a request may take to arrive whole, headers and body, in milliseconds
   * (request-bounds.ts); past it the request is answered 408 and its connection closed.
   */
  requestTimeoutMs?: number;
  /** The metric sources a rollout's gate may name, and by which tenants (rollout/driver-config.ts). */
  metricSources?: readonly string[] | SourceAccess;
  /** Each tenant's rate (`--tenant-rate`): past it, requests are answered 429 rate_limited. */
  tenantRateLimit?: TenantRateLimit;
}

export async function buildServer(options: ServerOptions): Promise<FastifyInstance> {
  const limits: ServerLimits = { ...DEFAULT_SERVER_LIMITS, ...options.limits };
  const { store } = options;
  const gate = await Fencegate.open({
    store,
    limits,
    ...(options.metricSources === undefined ? {} : { metricSources: options.metricSources }),
  });
  // Refreshed in the background from the verifier's checkpoint; a scrape only reads them.
  const storeGauges = new StoreGauges(store, {
    onError: (error) => {
      // The gauges keep their last values; /readyz reports the store's outage.
      app.log.warn(
        { code: isFencegateError(error) ? error.code : 'internal_error' },
        'refreshing the store gauges failed; retrying',
      );
    },
    ...options.storeGauges,
  });
  const metrics = new ServerMetrics({
    defaultMetrics: options.processMetrics === true,
    commitQueue: () => store.commitQueueDepths?.() ?? null,
    ...(options.registry === undefined ? {} : { registry: options.registry }),
    storeGauges,
    rolloutNames: options.metricsRolloutNames === true,
  });
  const schemas = requestSchemas(limits);
  const files: RouteFile[] = [...ROUTE_FILES];
  if (options.testClock !== undefined) files.push(testClockRoutes(options.testClock));
  const routes = files.flatMap((file) => file(schemas, limits));
  const routeByKey = new Map(routes.map((spec) => [`${spec.method} ${spec.url}`, spec]));
  const findRoute = (method: string, url: string | undefined) => routeByKey.get(`${method} ${url}`);
  let openapi: Record<string, unknown> | undefined;
  const openapiDocument = () => (openapi ??= buildOpenApiDocument(routes, packageVersion()));

  const app = Fastify({
    ...loggerOptions(options.logger),
    bodyLimit: limits.maxBodyBytes,
    ...requestTimeoutOptions(options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
    // Scope names are up to 256 characters, and URL-encoding can triple them.
    routerOptions: { maxParamLength: 4096 },
    exposeHeadRoutes: false,
    // Draining is ours: see the onRequest hook.
    return503OnClosing: false,
    genReqId: () => randomUUID(),
    // One line per request, written in onResponse: method, route, status and time, never a body.
    logController: new LogController({ disableRequestLogging: true }),
    frameworkErrors: (error, request, reply) => {
      const wire = toWireError(error, request.id, limits.maxBodyBytes);
      void (reply as FastifyReply).code(wire.status).type('application/json').send(wire.body);
    },
  }) as unknown as FastifyInstance;

  app.removeContentTypeParser('text/plain');
  useExactJsonParser(app);
  drainBodiesBeforeAnswers(app, { ...DEFAULT_BODY_DRAIN, ...options.bodyDrain });
  refuseOversizedBeforeContinue(app, limits.maxBodyBytes);
  app.setValidatorCompiler(createValidatorCompiler(findRoute));

  const tokens = new TokenCache(store, options.tokenCacheTtlMs ?? DEFAULT_TOKEN_CACHE_TTL_MS);
  const authenticator = new Authenticator(tokens, options.adminToken);
  app.decorateRequest('principal', null);
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // Before the store closes: a refresh in progress reads from it.
  app.addHook('onClose', async () => storeGauges.stop());
  app.addHook('onReady', (done) => {
    storeGauges.start();
    done();
  });

  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    if (closing) {
      void reply.header('connection', 'close');
      done(
        new FencegateError('store_unavailable', 'the server is shutting down; nothing was changed'),
      );
      return;
    }
    done();
  });
  refuseEncodedBodies(app);

  /**
   * Each route's check of the caller, after the draining check above. A callback rather than an
   * async hook: with the token's lookup remembered, the request goes on without a promise.
   */
  const authenticateFor =
    (required: RouteAuth, takeOverRight: boolean): onRequestHookHandler =>
    (request, _reply, done) => {
      const admit = (principal: Principal): void => {
        authorize(required, principal, takeOverRight);
        request.principal = principal;
      };
      const principal = authenticator.authenticate(request.headers.authorization);
      if (principal instanceof Promise) {
        principal.then(admit).then(
          () => done(),
          (error: unknown) => done(error as Error),
        );
        return;
      }
      admit(principal);
      done();
    };

  const limiter =
    options.tenantRateLimit === undefined ? null : new TenantRateLimiter(options.tenantRateLimit);
  /**
   * A tenant's request past its rate is answered 429 before any store work; a batch costs its
   * commits. After validation, so the batch's size is known and a malformed body is 400 as ever.
   */
  const limitRate: preHandlerHookHandler = (request, reply, done) => {
    const principal = request.principal;
    if (limiter === null || principal?.kind !== 'tenant') {
      done();
      return;
    }
    const commits = (request.body as { commits?: unknown[] } | null)?.commits;
    try {
      limiter.take(principal.tenant, Array.isArray(commits) ? commits.length : 1);
    } catch (error) {
      const retryAfterMs = (error as FencegateError).details.retryAfterMs as number;
      void reply.header('retry-after', retryAfterSeconds(retryAfterMs));
      metrics.rateLimited(request.routeOptions.url ?? 'unmatched');
      done(error as Error);
      return;
    }
    done();
  };

  // While draining, each answer closes its connection, so keep-alive clients do not hold the
  // shutdown open.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close');
    done(null, payload);
  });

  // Admin endpoints only manage tokens: once one has changed something, no cached lookup may
  // outlive it. Before the answer is sent, so the caller never sees a revoked token still work.
  const forgetTokens: onSendHookHandler = (request, reply, payload, done) => {
    if (request.method !== 'GET' && reply.statusCode < 400) tokens.invalidate();
    done(null, payload);
  };

  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    request.log.info(
      {
        method: request.method,
        route,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request',
    );
    done();
  });

  app.setErrorHandler((error, request, reply) => {
    const wire = toWireError(error, request.id, limits.maxBodyBytes);
    if (wire.unexpected) request.log.error({ err: error }, 'unexpected error');
    else if (wire.status >= 500)
      request.log.warn({ code: wire.body.error.code }, wire.body.error.message);
    return reply.code(wire.status).type('application/json').send(wire.body);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const { error, allow } = unmatchedRoute(routes, request.method, path);
    if (allow !== undefined) void reply.header('allow', allow);
    return reply.code(error.httpStatus).type('application/json').send({ error: error.toJSON() });
  });

  for (const spec of routes) {
    app.route({
      method: spec.method,
      url: spec.url,
      schema: {
        ...(spec.params === undefined ? {} : { params: spec.params }),
        ...(spec.querystring === undefined ? {} : { querystring: spec.querystring }),
        ...(spec.body === undefined ? {} : { body: spec.body }),
      },
      ...(spec.auth === 'public'
        ? {}
        : { onRequest: authenticateFor(spec.auth, spec.takeOverRight === true) }),
      ...(spec.auth === 'admin' ? { onSend: forgetTokens } : {}),
      ...(spec.auth === 'public' || spec.auth === 'admin' ? {} : { preHandler: limitRate }),
      // A missing body may stand for `{}`; a JSON null is a body of the wrong type.
      ...(spec.bodyOptional === true
        ? {
            preValidation: (
              request: FastifyRequest,
              _reply: FastifyReply,
              done: (error?: Error) => void,
            ) => {
              done(
                request.body === null
                  ? new FencegateError('invalid_request', 'body must be a JSON object', {
                      field: 'body',
                    })
                  : undefined,
              );
            },
          }
        : {}),
      handler: async (request, reply) => {
        const ctx = routeContext(request, request.principal);
        const answer = await spec.handler(
          { params: request.params, query: request.query, body: request.body },
          ctx,
        );
        void reply.code(answer.status ?? 200).type(answer.contentType ?? 'application/json');
        return answer.body;
      },
    });
  }

  await app.register(
    dashboardRoutes({
      store,
      gate,
      verifier: storeGauges.verifier,
      adminToken: options.adminToken,
      trustProxy: options.trustProxy === true,
      ...(limiter === null
        ? {}
        : {
            limitRate: (tenant: string) => {
              try {
                limiter.take(tenant, 1);
              } catch (error) {
                metrics.rateLimited('/ui');
                throw error;
              }
            },
          }),
    }),
  );

  function routeContext(request: FastifyRequest, principal: Principal | null): RouteContext {
    return {
      principal,
      tenantApi: () => {
        if (principal?.kind !== 'tenant') throw new Error('this route has no tenant');
        // The tenant principal is the caller core binds grants to and names in the audit.
        return gate.forTenant(principal.tenant, principal);
      },
      store,
      limits,
      metrics,
      requestId: request.id,
      logUnexpected: (error) => request.log.error({ err: error }, 'unexpected error'),
      openapi: openapiDocument,
    };
  }

  return app;
}

function loggerOptions(logger: ServerOptions['logger']): {
  logger?: boolean;
  loggerInstance?: FastifyBaseLogger;
} {
  if (logger === undefined || logger === false) return { logger: false };
  return { loggerInstance: logger === true ? createLogger() : logger };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling, set by the route's authentication; null on public routes. */
    principal: Principal | null;
  }
}

export type { AnyRoute };
