/** The tenant's audit log, for operators. */
import { validateAuditQuery } from '../../core/validate-audit.js';
import { ok, route, type RouteFile } from '../route.js';
import { AuditPageSchema } from '../schemas/answers.js';

export const auditRoutes: RouteFile = (s, limits) => [
  route({
    method: 'GET',
    url: '/v1/audit',
    auth: 'operator',
    tag: 'audit',
    summary: "The tenant's audit entries in seq order",
    querystring: s.AuditQuery,
    explain: { querystring: (value) => validateAuditQuery(value, limits) },
    responses: { 200: { description: 'a page of entries', schema: AuditPageSchema } },
    handler: async ({ query }, ctx) => ok(await ctx.tenantApi().audit(query)),
  }),
];
