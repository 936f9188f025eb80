/** Intent reads. Claim and complete join this file when the dispatcher API lands. */
import { requireName, validateListIntents } from '../../core/validate.js';
import { FencegateError } from '../../errors.js';
import { ok, route, type RouteFile } from '../route.js';
import { IntentPageSchema, IntentSchema } from '../schemas/answers.js';

export const intentRoutes: RouteFile = (s, limits) => [
  route({
    method: 'GET',
    url: '/v1/intents',
    auth: 'worker',
    tag: 'intents',
    summary: 'Intents of the tenant, filtered by scope and status',
    querystring: s.ListIntentsQuery,
    explain: { querystring: (value) => validateListIntents(value, limits) },
    responses: { 200: { description: 'a page of intents', schema: IntentPageSchema } },
    handler: async ({ query }, ctx) => ok(await ctx.tenantApi().listIntents(query)),
  }),
  route({
    method: 'GET',
    url: '/v1/intents/:effectKey',
    auth: 'worker',
    tag: 'intents',
    summary: 'One intent by its effect key',
    params: s.IntentParams,
    explain: {
      params: (value) => requireName((value as { effectKey?: unknown }).effectKey, 'effectKey'),
    },
    responses: { 200: { description: 'the intent', schema: IntentSchema } },
    errors: ['not_found'],
    handler: async ({ params }, ctx) => {
      const intent = await ctx.tenantApi().getIntent(params.effectKey);
      if (intent === null) {
        throw new FencegateError('not_found', `no intent with effectKey ${params.effectKey}`, {
          effectKey: params.effectKey,
        });
      }
      return ok(intent);
    },
  }),
];
