/** The tenant's audit log and its verification, for operators. */
import { validateAuditQuery } from '../../core/validate-audit.js';
import { ok, route, routeFile } from '../route.js';
import { AuditPageSchema, VerifyReportSchema } from '../schemas/answers.js';

export const auditRoutes = routeFile((s, limits) => [
  route({
    name: 'audit',
    tag: 'audit',
    summary: "The tenant's audit entries in seq order",
    querystring: s.AuditQuery,
    explain: { querystring: (value) => validateAuditQuery(value, limits) },
    responses: { 200: { description: 'a page of entries', schema: AuditPageSchema } },
    handler: async ({ query }, ctx) => ok(await ctx.tenantApi().audit(query)),
  }),
  route({
    name: 'verify',
    tag: 'audit',
    summary:
      "Replay the tenant's audit log and report every broken fencing, lease, revision or delivery invariant",
    responses: {
      200: {
        description: 'the verification; ok is false when a violation was found',
        schema: VerifyReportSchema,
      },
    },
    handler: async (_input, ctx) => ok(await ctx.tenantApi().verify()),
  }),
]);
