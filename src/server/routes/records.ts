/** Record reads: what a writer reads before it commits. */
import { validateListRecords } from '../../core/record-page.js';
import { requireName } from '../../core/validate.js';
import { ok, route, routeFile } from '../route.js';
import { RecordListSchema, RecordSchema } from '../schemas/answers.js';
import { explainScopeParams } from './scopes.js';

function explainRecordParams(value: unknown): void {
  explainScopeParams(value);
  requireName((value as { name?: unknown }).name, 'name');
}

export const recordRoutes = routeFile((s, limits) => [
  route({
    name: 'getRecord',
    tag: 'records',
    summary: 'A record (exists: false, revision 0 when it never existed)',
    params: s.RecordParams,
    explain: { params: explainRecordParams },
    responses: { 200: { description: 'the record', schema: RecordSchema } },
    handler: async ({ params }, ctx) =>
      ok(await ctx.tenantApi().getRecord(params.scope, params.name)),
  }),
  route({
    name: 'listRecords',
    tag: 'records',
    summary:
      'Records of the scope that exist or have a tombstone: by name up to the byte budget (then ' +
      'with nextCursor), or with any query parameter one page (prefix, order name or revision, ' +
      'direction, after, limit, cursor)',
    params: s.ScopeParams,
    querystring: s.ListRecordsQuery,
    explain: {
      params: explainScopeParams,
      querystring: (value) => validateListRecords(value, limits),
    },
    responses: { 200: { description: 'the records', schema: RecordListSchema } },
    handler: async ({ params, query }, ctx) => {
      if (Object.keys(query).length > 0) {
        return ok(await ctx.tenantApi().listRecordsPage(params.scope, query));
      }
      // Without a query, as many records as one page may hold; a cursor only when more follow.
      const page = await ctx
        .tenantApi()
        .listRecordsPage(params.scope, { limit: limits.maxListLimit });
      return ok(page.nextCursor === null ? { items: page.items } : page);
    },
  }),
]);
