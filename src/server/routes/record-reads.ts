/** Several reads of one scope in one exchange (core/record-reads.ts). */
import { Type } from '@sinclair/typebox';
import { namesWithinBudget, validateRecordReads } from '../../core/record-reads.js';
import { ok, route, routeFile } from '../route.js';
import { RecordListSchema, RecordSchema } from '../schemas/answers.js';
import { CLOSED, Name } from '../schemas/common.js';
import { explainScopeParams } from './scopes.js';

export const RecordReadsSchema = Type.Object(
  {
    records: Type.Array(RecordSchema, { description: 'the records, in the order asked' }),
    pages: Type.Array(RecordListSchema, { description: 'the pages, in the order asked' }),
  },
  CLOSED,
);

export const recordReadRoutes = routeFile((s, limits) => [
  route({
    name: 'readRecords',
    tag: 'records',
    summary:
      'Records by name and pages of records of one scope, each answered as its own GET would ' +
      'be, in one exchange (not one snapshot), within one byte budget',
    params: s.ScopeParams,
    body: Type.Object(
      {
        records: Type.Optional(Type.Array(Name, { maxItems: namesWithinBudget(limits) })),
        pages: Type.Optional(Type.Array(s.ListRecordsQuery, { maxItems: limits.maxReads })),
      },
      CLOSED,
    ),
    explain: {
      params: explainScopeParams,
      body: (value) => validateRecordReads(value, limits),
    },
    responses: { 200: { description: 'the records and pages', schema: RecordReadsSchema } },
    handler: async ({ params, body }, ctx) =>
      ok(await ctx.tenantApi().readRecords(params.scope, body)),
  }),
]);
