/**
 * Intents: the reads, and the dispatcher's claim and complete. Claim and complete are worker
 * endpoints, so a dispatcher runs with a worker token of the tenant it serves.
 */
import { requireName, validateListIntents } from '../../core/validate.js';
import { validateClaim, validateComplete } from '../../core/validate-ops.js';
import { FencegateError } from '../../errors.js';
import { ok, route, routeFile } from '../route.js';
import { IntentListSchema, IntentPageSchema, IntentSchema } from '../schemas/answers.js';

function explainIntentParams(value: unknown): void {
  requireName((value as { effectKey?: unknown } | null)?.effectKey, 'effectKey');
}

export const intentRoutes = routeFile((s, limits) => [
  route({
    name: 'listIntents',
    tag: 'intents',
    summary: 'Intents of the tenant, filtered by scope and status',
    querystring: s.ListIntentsQuery,
    explain: { querystring: (value) => validateListIntents(value, limits) },
    responses: { 200: { description: 'a page of intents', schema: IntentPageSchema } },
    handler: async ({ query }, ctx) => ok(await ctx.tenantApi().listIntents(query)),
  }),
  route({
    name: 'getIntent',
    tag: 'intents',
    summary: 'One intent by its effect key',
    params: s.IntentParams,
    explain: { params: explainIntentParams },
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
  route({
    name: 'claimIntents',
    tag: 'intents',
    summary:
      'Claim due intents (pending past backoff, unknown to reconcile, claims that lapsed) under a new claim fence each',
    body: s.ClaimBody,
    explain: { body: (value) => validateClaim(value, limits) },
    responses: {
      200: { description: 'the claimed intents, possibly none', schema: IntentListSchema },
    },
    handler: async ({ body }, ctx) => ok({ items: await ctx.tenantApi().claimIntents(body) }),
  }),
  route({
    name: 'completeIntent',
    tag: 'intents',
    summary: "Record a claimed intent's delivery outcome under its current claim fence",
    params: s.IntentParams,
    body: s.CompleteBody,
    explain: { params: explainIntentParams, body: (value) => validateComplete(value) },
    responses: { 200: { description: 'the intent after the outcome', schema: IntentSchema } },
    errors: ['stale_claim', 'not_found'],
    handler: async ({ params, body }, ctx) =>
      ok(await ctx.tenantApi().completeIntent(params.effectKey, body)),
  }),
]);
