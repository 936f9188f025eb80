/** Policy cutovers and their drain-and-reconcile reports. Operator endpoints. */
import { requireName } from '../../core/validate.js';
import { validateListCutovers } from '../../core/validate.js';
import { validateCutover } from '../../core/validate-ops.js';
import { FencegateError } from '../../errors.js';
import { ok, route, routeFile } from '../route.js';
import { CutoverPageSchema, CutoverReportSchema, CutoverResultSchema } from '../schemas/answers.js';

export const cutoverRoutes = routeFile((s, limits) => [
  route({
    name: 'cutover',
    tag: 'cutovers',
    summary:
      'Move scopes to a registered policy and a controller (fence+1 each); idempotent and resumable by cutoverId',
    body: s.CutoverBody,
    explain: { body: (value) => validateCutover(value, limits) },
    responses: {
      200: {
        description: 'the cutover, with the fence each scope got',
        schema: CutoverResultSchema,
      },
    },
    // invalid_request also answers a policy that is not registered.
    errors: ['operation_id_conflict'],
    handler: async ({ body }, ctx) => ok(await ctx.tenantApi().cutover(body)),
  }),
  route({
    name: 'listCutovers',
    tag: 'cutovers',
    summary: 'Cutovers of the tenant, newest first, with how many scopes each has moved',
    querystring: s.ListCutoversQuery,
    explain: { querystring: (value) => validateListCutovers(value, limits) },
    responses: { 200: { description: 'a page of cutovers', schema: CutoverPageSchema } },
    handler: async ({ query }, ctx) => ok(await ctx.tenantApi().listCutovers(query)),
  }),
  route({
    name: 'cutoverReport',
    tag: 'cutovers',
    summary:
      'The drain-and-reconcile report: old jobs by state, stale attempts by outcome, staleAccepted (must be 0)',
    params: s.CutoverParams,
    explain: {
      params: (value) =>
        requireName((value as { cutoverId?: unknown } | null)?.cutoverId, 'cutoverId'),
    },
    responses: { 200: { description: 'the report', schema: CutoverReportSchema } },
    errors: ['not_found'],
    handler: async ({ params }, ctx) => {
      const report = await ctx.tenantApi().cutoverReport(params.cutoverId);
      if (report === null) {
        throw new FencegateError('not_found', `no cutover with cutoverId ${params.cutoverId}`, {
          cutoverId: params.cutoverId,
        });
      }
      return ok(report);
    },
  }),
]);
