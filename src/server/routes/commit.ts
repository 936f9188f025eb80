/** The commit boundary and the stored outcomes behind it. */
import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { requireName, validateCommit, validateReason } from '../../core/validate.js';
import { FencegateError, isFencegateError } from '../../errors.js';
import type { CommitItemResult, CommitRequest } from '../../types.js';
import { toWireError } from '../error-handler.js';
import { ok, route, routeFile, type RouteContext } from '../route.js';
import {
  CommitCommittedSchema,
  CommitRejectedSchema,
  CommitResultSchema,
} from '../schemas/answers.js';
import { CLOSED, ErrorBody } from '../schemas/common.js';
import { bodyRefusal } from '../validation.js';

/** One item of a batch's answer: the status and body POST /v1/commit would have answered. */
const CommitItemSchema = Type.Object(
  {
    status: Type.Integer({ description: 'the HTTP status of this commit alone' }),
    body: Type.Union([CommitCommittedSchema, CommitRejectedSchema, ErrorBody]),
  },
  CLOSED,
);

export const commitRoutes = routeFile((s, limits) => {
  const commitBody = TypeCompiler.Compile(s.CommitBody);
  const explainCommit = (value: unknown) => validateCommit(value, limits);
  return [
    route({
      name: 'commit',
      tag: 'commit',
      summary: 'Check authority and freshness and apply the writes and intents atomically',
      body: s.CommitBody,
      explain: { body: (value) => validateCommit(value, limits) },
      responses: {
        200: { description: 'committed', schema: CommitCommittedSchema },
        409: {
          description: 'rejected; error.code is the first failing check',
          schema: CommitRejectedSchema,
        },
      },
      errors: ['operation_id_conflict', 'outcome_unknown'],
      handler: async ({ body }, ctx) => {
        try {
          const result = await ctx.tenantApi().commit(body);
          ctx.metrics.commit(result);
          return ok(result, result.outcome === 'committed' ? 200 : 409);
        } catch (error) {
          ctx.metrics.commitError(isFencegateError(error) ? error.code : 'internal_error');
          throw error;
        }
      },
    }),
    route({
      name: 'commitMany',
      tag: 'commit',
      summary:
        'Up to 64 commits in one request, each answered in order as POST /v1/commit answers it alone',
      body: s.CommitsBody,
      responses: {
        200: {
          description:
            'one item per commit, in order: its status and body as POST /v1/commit alone; an invalid commit is refused in its item',
          schema: Type.Object({ items: Type.Array(CommitItemSchema) }, CLOSED),
        },
      },
      handler: async ({ body }, ctx) => {
        // Refused by the schema: answered in its item, with the message its commit alone gets.
        const checked = body.commits.map((item) => bodyRefusal(commitBody, item, explainCommit));
        const valid = body.commits.filter(
          (_item, i) => checked[i] === undefined,
        ) as CommitRequest[];
        const applied = valid.length === 0 ? [] : await ctx.tenantApi().commitMany(valid);
        let next = 0;
        const items = checked.map((refusal) =>
          commitItem(refusal === undefined ? applied[next++]! : { ok: false, error: refusal }, ctx),
        );
        return ok({ items });
      },
    }),
    route({
      name: 'getOperation',
      tag: 'commit',
      summary: 'The stored outcome of an operationId, exactly as first answered',
      params: s.OperationParams,
      explain: {
        params: (value) =>
          requireName((value as { operationId?: unknown }).operationId, 'operationId'),
      },
      responses: { 200: { description: 'the stored outcome', schema: CommitResultSchema } },
      errors: ['not_found'],
      handler: async ({ params }, ctx) => {
        const outcome = await ctx.tenantApi().getOperation(params.operationId);
        if (outcome === null) {
          throw new FencegateError(
            'not_found',
            `operation ${params.operationId} has no outcome stored yet: a commit with it may still be in flight (or its outcome was deleted by retention); send the same commit again, or abandonOperation to settle it`,
            { operationId: params.operationId },
          );
        }
        return ok(outcome);
      },
    }),
    route({
      name: 'abandonOperation',
      tag: 'commit',
      summary:
        'Settle an operationId: its stored outcome, or else the stored rejection operation_abandoned; no commit with it applies afterwards',
      params: s.OperationParams,
      body: s.ReasonBody,
      bodyOptional: true,
      explain: {
        params: (value) =>
          requireName((value as { operationId?: unknown }).operationId, 'operationId'),
        body: (value) => validateReason(value),
      },
      responses: {
        200: {
          description: 'the stored outcome: committed, rejected, or rejected operation_abandoned',
          schema: CommitResultSchema,
        },
      },
      handler: async ({ params, body }, ctx) =>
        ok(await ctx.tenantApi().abandonOperation(params.operationId, body)),
    }),
  ];
});

/** A commit's answer in a batch, counted and logged as its commit alone would be. */
function commitItem(item: CommitItemResult, ctx: RouteContext): { status: number; body: unknown } {
  if (item.ok) {
    ctx.metrics.commit(item.result);
    return { status: item.result.outcome === 'committed' ? 200 : 409, body: item.result };
  }
  ctx.metrics.commitError(item.error.code);
  // A catalog error: the body limit, for Fastify's own errors, plays no part.
  const wire = toWireError(item.error, ctx.requestId, 0);
  if (wire.unexpected) ctx.logUnexpected(item.error.cause ?? item.error);
  return { status: wire.status, body: wire.body };
}
