/** Liveness, readiness, metrics and the OpenAPI document: public, for probes and scrapers. */
import { FencegateError, isFencegateError } from '../../errors.js';
import { ok, route, routeFile } from '../route.js';
import { HealthSchema } from '../schemas/answers.js';

export const healthRoutes = routeFile(() => [
  route({
    name: 'healthz',
    tag: 'operations',
    summary: 'The process is alive',
    responses: { 200: { description: 'alive', schema: HealthSchema } },
    handler: () => Promise.resolve(ok({ ok: true })),
  }),
  route({
    name: 'readyz',
    tag: 'operations',
    summary: 'The store is reachable',
    responses: { 200: { description: 'ready', schema: HealthSchema } },
    errors: ['store_unavailable'],
    handler: async (_input, ctx) => {
      try {
        await ctx.store.ping();
      } catch (error) {
        if (isFencegateError(error)) throw error;
        throw new FencegateError(
          'store_unavailable',
          'the store cannot be reached',
          {},
          { cause: error },
        );
      }
      return ok({ ok: true });
    },
  }),
  route({
    name: 'metrics',
    tag: 'operations',
    summary: 'Prometheus metrics',
    responses: { 200: { description: 'Prometheus text format', contentType: 'text/plain' } },
    handler: async (_input, ctx) => ({
      body: await ctx.metrics.render(),
      contentType: ctx.metrics.contentType,
    }),
  }),
  route({
    name: 'openapi',
    tag: 'operations',
    summary: 'This OpenAPI 3.1 document',
    responses: { 200: { description: 'the OpenAPI document' } },
    handler: (_input, ctx) => Promise.resolve(ok(ctx.openapi())),
  }),
]);
