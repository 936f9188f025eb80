/** The commit boundary and the stored outcomes behind it. */
import { requireName, validateCommit, validateReason } from '../../core/validate.js';
import { FencegateError, isFencegateError } from '../../errors.js';
import { ok, route, routeFile } from '../route.js';
import {
  CommitCommittedSchema,
  CommitRejectedSchema,
  CommitResultSchema,
} from '../schemas/answers.js';

export const commitRoutes = routeFile((s, limits) => [
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
]);
