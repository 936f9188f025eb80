/** Policy versions: registered once, immutable, named by cutovers. Operator endpoints. */
import { validatePolicy } from '../../core/validate-ops.js';
import { ok, route, type RouteContext, routeFile } from '../route.js';
import { PolicyListSchema, PolicySchema } from '../schemas/answers.js';

/** Who registered a policy: the calling token's id (never the token, which is secret). */
function registeredBy(ctx: RouteContext): string | null {
  return ctx.principal?.kind === 'tenant' ? ctx.principal.tokenId : null;
}

export const policyRoutes = routeFile((s) => [
  route({
    name: 'registerPolicy',
    tag: 'policies',
    summary: 'Register an immutable policy version; the same version and digest again is a no-op',
    body: s.PolicyBody,
    explain: { body: (value) => validatePolicy(value) },
    responses: {
      201: { description: 'registered', schema: PolicySchema },
      200: { description: 'already registered with the same digest', schema: PolicySchema },
    },
    errors: ['policy_conflict'],
    handler: async ({ body }, ctx) => {
      const { policy, created } = await ctx.tenantApi().registerPolicy(body, registeredBy(ctx));
      return ok(policy, created ? 201 : 200);
    },
  }),
  route({
    name: 'listPolicies',
    tag: 'policies',
    summary: "The tenant's registered policy versions, oldest first",
    responses: { 200: { description: 'the policies', schema: PolicyListSchema } },
    handler: async (_input, ctx) => ok({ items: await ctx.tenantApi().listPolicies() }),
  }),
]);
