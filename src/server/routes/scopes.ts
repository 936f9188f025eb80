/** Scope reads and the operator's authority transitions (takeover, cancel, delete). */
import {
  requireName,
  validateListScopes,
  validateReason,
  validateTakeover,
} from '../../core/validate.js';
import { workerTakeoverReason } from '../../core/take-over-right.js';
import { FencegateError } from '../../errors.js';
import { authorizeTakeover } from '../auth.js';
import { ok, route, routeFile } from '../route.js';
import {
  CancelResultSchema,
  DeleteScopeResultSchema,
  GrantSchema,
  ScopePageSchema,
  ScopeSchema,
} from '../schemas/answers.js';
import { countedLeaseOperation } from './leases.js';

export function explainScopeParams(value: unknown): void {
  requireName((value as { scope?: unknown } | null)?.scope, 'scope');
}

export const scopeRoutes = routeFile((s, limits) => [
  route({
    name: 'getScope',
    tag: 'scopes',
    summary: "A scope's fence, holder, lease and policy",
    params: s.ScopeParams,
    explain: { params: explainScopeParams },
    responses: { 200: { description: 'the scope', schema: ScopeSchema } },
    errors: ['scope_not_found'],
    handler: async ({ params }, ctx) => {
      const scope = await ctx.tenantApi().getScope(params.scope);
      if (scope === null) {
        throw new FencegateError('scope_not_found', `scope ${params.scope} does not exist`, {
          scope: params.scope,
        });
      }
      return ok(scope);
    },
  }),
  route({
    name: 'listScopes',
    tag: 'scopes',
    summary: 'Scopes of the tenant, ordered by name',
    querystring: s.ListScopesQuery,
    explain: { querystring: (value) => validateListScopes(value, limits) },
    responses: { 200: { description: 'a page of scopes', schema: ScopePageSchema } },
    handler: async ({ query }, ctx) => ok(await ctx.tenantApi().listScopes(query)),
  }),
  route({
    name: 'takeover',
    tag: 'scopes',
    summary:
      'Grant authority regardless of the live lease (fence+1). Operators, and worker tokens whose mayTakeOver covers the scope; only an operator re-creates a deleted scope',
    params: s.ScopeParams,
    body: s.TakeoverBody,
    explain: { params: explainScopeParams, body: (value) => validateTakeover(value, limits) },
    responses: { 200: { description: 'the new grant', schema: GrantSchema } },
    errors: ['policy_mismatch', 'scope_deleted'],
    handler: ({ params, body }, ctx) => {
      const workerToken = authorizeTakeover(ctx.principal, params.scope);
      const request =
        workerToken === null
          ? body
          : { ...body, reason: workerTakeoverReason(workerToken, body.reason) };
      return countedLeaseOperation(ctx, 'takeover', () =>
        ctx.tenantApi().takeover(params.scope, request),
      );
    },
  }),
  route({
    name: 'cancel',
    tag: 'scopes',
    summary: 'Revoke authority (fence+1, no holder) and cancel the pending intents of the scope',
    params: s.ScopeParams,
    body: s.ReasonBody,
    bodyOptional: true,
    explain: { params: explainScopeParams, body: (value) => validateReason(value) },
    responses: { 200: { description: 'cancelled', schema: CancelResultSchema } },
    errors: ['scope_not_found', 'scope_deleted'],
    handler: ({ params, body }, ctx) =>
      countedLeaseOperation(ctx, 'cancel', () => ctx.tenantApi().cancel(params.scope, body)),
  }),
  route({
    name: 'deleteScope',
    tag: 'scopes',
    summary: 'Delete a scope (fence+1, every record tombstoned); an optional body gives a reason',
    params: s.ScopeParams,
    body: s.ReasonBody,
    bodyOptional: true,
    explain: { params: explainScopeParams, body: (value) => validateReason(value) },
    responses: { 200: { description: 'deleted', schema: DeleteScopeResultSchema } },
    errors: ['scope_not_found', 'scope_deleted'],
    handler: ({ params, body }, ctx) =>
      countedLeaseOperation(ctx, 'delete', () => ctx.tenantApi().deleteScope(params.scope, body)),
  }),
]);
