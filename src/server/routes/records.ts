/** Record reads: what a writer reads before it commits. */
import { requireName } from '../../core/validate.js';
import { ok, route, type RouteFile } from '../route.js';
import { RecordListSchema, RecordSchema } from '../schemas/answers.js';
import { explainScopeParams } from './scopes.js';

function explainRecordParams(value: unknown): void {
  explainScopeParams(value);
  requireName((value as { name?: unknown }).name, 'name');
}

export const recordRoutes: RouteFile = (s) => [
  route({
    method: 'GET',
    url: '/v1/scopes/:scope/records/:name',
    auth: 'worker',
    tag: 'records',
    summary: 'A record (exists: false, revision 0 when it never existed)',
    params: s.RecordParams,
    explain: { params: explainRecordParams },
    responses: { 200: { description: 'the record', schema: RecordSchema } },
    handler: async ({ params }, ctx) =>
      ok(await ctx.tenantApi().getRecord(params.scope, params.name)),
  }),
  route({
    method: 'GET',
    url: '/v1/scopes/:scope/records',
    auth: 'worker',
    tag: 'records',
    summary: 'Every record of the scope that exists or has a tombstone, ordered by name',
    params: s.ScopeParams,
    explain: { params: explainScopeParams },
    responses: { 200: { description: 'the records', schema: RecordListSchema } },
    handler: async ({ params }, ctx) =>
      ok({ items: await ctx.tenantApi().listRecords(params.scope) }),
  }),
];
