/** Progressive rollouts: start, read, advance, pause, resume, promote, roll back. Operator endpoints. */
import { requireName } from '../../core/validate.js';
import {
  validateListRollouts,
  validateRollback,
  validateRolloutCommand,
  validateStartRollout,
} from '../../core/validate-rollout.js';
import { FencegateError } from '../../errors.js';
import type { RolloutsApi } from '../../rollout/rollouts.js';
import { ok, route, routeFile } from '../route.js';
import { RolloutListSchema, RolloutReportSchema, RolloutSchema } from '../schemas/answers.js';

const explainRolloutParams = (value: unknown) =>
  requireName((value as { rolloutId?: unknown } | null)?.rolloutId, 'rolloutId');

function notFound(rolloutId: string): FencegateError {
  return new FencegateError('not_found', `no rollout with rolloutId ${rolloutId}`, { rolloutId });
}

/** The commands that change a rollout's state, each a compare-and-swap on its revision. */
const COMMANDS = [
  ['advance', 'advanceRollout', 'Move the next step (an interrupted step is resumed instead)'],
  ['pause', 'pauseRollout', 'Stop advancing until resumed'],
  ['resume', 'resumeRollout', 'Resume a paused rollout'],
  ['promote', 'promoteRollout', 'Ramp to 100 % in one step'],
] as const satisfies readonly [keyof RolloutsApi, string, string][];

export const rolloutRoutes = routeFile((s) => [
  route({
    name: 'startRollout',
    tag: 'rollouts',
    summary:
      'Start a rollout of toPolicy over a selection, step by step, and move its first step; idempotent by rolloutId',
    body: s.RolloutBody,
    explain: { body: validateStartRollout },
    responses: { 200: { description: 'the rollout', schema: RolloutSchema } },
    errors: ['operation_id_conflict', 'rollout_conflict'],
    handler: async ({ body }, ctx) => ok(await ctx.tenantApi().rollouts.start(body)),
  }),
  route({
    name: 'listRollouts',
    tag: 'rollouts',
    summary: 'The rollouts of the tenant, by id',
    querystring: s.ListRolloutsQuery,
    explain: { querystring: validateListRollouts },
    responses: { 200: { description: 'the rollouts', schema: RolloutListSchema } },
    handler: async ({ query }, ctx) => ok({ items: await ctx.tenantApi().rollouts.list(query) }),
  }),
  route({
    name: 'getRollout',
    tag: 'rollouts',
    summary: 'One rollout: its status, step, percent, revision and current cutover',
    params: s.RolloutParams,
    explain: { params: explainRolloutParams },
    responses: { 200: { description: 'the rollout', schema: RolloutSchema } },
    errors: ['not_found'],
    handler: async ({ params }, ctx) => {
      const rollout = await ctx.tenantApi().rollouts.get(params.rolloutId);
      if (rollout === null) throw notFound(params.rolloutId);
      return ok(rollout);
    },
  }),
  ...COMMANDS.map(([command, name, summary]) =>
    route({
      name,
      tag: 'rollouts',
      summary,
      params: s.RolloutParams,
      body: s.RolloutCommandBody,
      explain: {
        params: explainRolloutParams,
        body: (value) => validateRolloutCommand({ ...(value as object), rolloutId: 'r' }),
      },
      responses: { 200: { description: 'the rollout after the change', schema: RolloutSchema } },
      errors: ['not_found', 'rollout_conflict'],
      handler: async ({ params, body }, ctx) =>
        ok(await ctx.tenantApi().rollouts[command]({ ...body, rolloutId: params.rolloutId })),
    }),
  ),
  route({
    name: 'rollbackRollout',
    tag: 'rollouts',
    summary:
      'Move every scope the rollout moved or pinned, still on toPolicy, back to fromPolicy with a new fence; sent again, resumes',
    params: s.RolloutParams,
    body: s.RolloutRollbackBody,
    explain: {
      params: explainRolloutParams,
      body: (value) => validateRollback({ ...(value as object), rolloutId: 'r' }),
    },
    responses: { 200: { description: 'the rollout after the rollback', schema: RolloutSchema } },
    errors: ['not_found', 'rollout_conflict'],
    handler: async ({ params, body }, ctx) =>
      ok(await ctx.tenantApi().rollouts.rollback({ ...body, rolloutId: params.rolloutId })),
  }),
  route({
    name: 'rolloutReport',
    tag: 'rollouts',
    summary:
      'Per step: scopes moved and commits accepted; after a rollback: stale attempts and how many were accepted (must be 0)',
    params: s.RolloutParams,
    explain: { params: explainRolloutParams },
    responses: { 200: { description: 'the report', schema: RolloutReportSchema } },
    errors: ['not_found'],
    handler: async ({ params }, ctx) => {
      const report = await ctx.tenantApi().rollouts.report(params.rolloutId);
      if (report === null) throw notFound(params.rolloutId);
      return ok(report);
    },
  }),
]);
