/** Token management: the only thing the admin token may do. */
import { requireName, requireObject, requireTenant } from '../../core/validate.js';
import { FencegateError } from '../../errors.js';
import { ok, route, routeFile } from '../route.js';
import { TokenCreatedSchema, TokenDeletedSchema, TokenListSchema } from '../schemas/answers.js';
import {
  issueToken,
  summarizeToken,
  takeOverField,
  validateTokenRequest,
  type IssueTokenRequest,
} from '../tokens.js';

function explainTokenBody(value: unknown): void {
  requireObject(value, 'body', ['tenant', 'role', 'label', 'mayTakeOver']);
  validateTokenRequest(value as IssueTokenRequest);
}

export const adminTokenRoutes = routeFile((s) => [
  route({
    name: 'createToken',
    tag: 'admin',
    summary:
      'Create a token of one tenant and one role (a worker may get mayTakeOver: scope prefixes it may take over); the token is shown only in this answer',
    body: s.CreateTokenBody,
    explain: { body: explainTokenBody },
    responses: { 201: { description: 'the new token', schema: TokenCreatedSchema } },
    handler: async ({ body }, ctx) => {
      const { record, token } = await issueToken(ctx.store, body);
      const { id, tenant, role } = record;
      return ok({ id, token, tenant, role, ...takeOverField(record) }, 201);
    },
  }),
  route({
    name: 'listTokens',
    tag: 'admin',
    summary: 'List tokens (one tenant with ?tenant=): ids, never a token or its hash',
    querystring: s.ListTokensQuery,
    explain: {
      querystring: (value) => {
        requireObject(value, 'query', ['tenant']);
        const { tenant } = value as { tenant?: unknown };
        if (tenant !== undefined) requireTenant(tenant, 'tenant');
      },
    },
    responses: { 200: { description: 'the tokens, oldest first', schema: TokenListSchema } },
    handler: async ({ query }, ctx) => {
      const tokens = await ctx.store.listTokens(query.tenant);
      return ok({ items: tokens.map(summarizeToken) });
    },
  }),
  route({
    name: 'deleteToken',
    tag: 'admin',
    summary: 'Delete a token; it stops working at once',
    params: s.TokenParams,
    explain: { params: (value) => requireName((value as { id?: unknown }).id, 'id') },
    responses: { 200: { description: 'deleted', schema: TokenDeletedSchema } },
    errors: ['not_found'],
    handler: async ({ params }, ctx) => {
      if (!(await ctx.store.deleteToken(params.id))) {
        throw new FencegateError('not_found', `no token with id ${params.id}`, { id: params.id });
      }
      return ok({ deleted: true });
    },
  }),
]);
