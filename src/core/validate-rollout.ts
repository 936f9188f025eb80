/** Validation of rollout requests (see validate.ts for the rules). */
import { fail } from '../errors.js';
import type {
  ListRolloutsQuery,
  RolloutCommand,
  RolloutRollbackRequest,
  StartRolloutRequest,
} from '../types.js';
import { ROLLOUT_STATUSES } from '../types.js';
import { requireSelection } from './validate-ops.js';
import { requireHoldFields } from './validate-rollout-gates.js';
import {
  optionalName,
  optionalText,
  requireInteger,
  requireName,
  requireObject,
} from './validate.js';

/**
 * A list selection is kept with the tenant's active rollouts, which an acquire of a new scope
 * reads: a larger ramp names a prefix.
 */
export const MAX_ROLLOUT_SCOPES = 1000;
const MAX_STEPS = 20;
const MAX_REASON = 1024;

export function validateStartRollout(input: unknown): StartRolloutRequest {
  const body = requireObject(input, 'body', [
    'rolloutId',
    'fromPolicy',
    'toPolicy',
    'scopes',
    'prefix',
    'steps',
    'controller',
    'reason',
    'holdSeconds',
    'holdExtensionSeconds',
    'gates',
    'onFailure',
  ]);
  const request: StartRolloutRequest = {
    fromPolicy: requireName(body.fromPolicy, 'fromPolicy'),
    toPolicy: requireName(body.toPolicy, 'toPolicy'),
    steps: requireSteps(body.steps),
  };
  if (request.fromPolicy === request.toPolicy) {
    fail('invalid_request', 'toPolicy must differ from fromPolicy', { field: 'toPolicy' });
  }
  const rolloutId = optionalName(body.rolloutId, 'rolloutId');
  if (rolloutId !== undefined) request.rolloutId = rolloutId;
  Object.assign(
    request,
    requireSelection(body, MAX_ROLLOUT_SCOPES, '; name a prefix for a larger selection'),
  );
  const controller = optionalName(body.controller, 'controller');
  if (controller !== undefined) request.controller = controller;
  const reason = optionalText(body.reason, 'reason', MAX_REASON);
  if (reason !== undefined) request.reason = reason;
  Object.assign(request, requireHoldFields(body, request.steps));
  return request;
}

function requireSteps(value: unknown): number[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_STEPS) {
    fail('invalid_request', `steps must be an array of 1 to ${MAX_STEPS} percentages`, {
      field: 'steps',
    });
  }
  const steps = value.map((step, i) => requireInteger(step, `steps[${i}]`, 1, 100));
  steps.forEach((step, i) => {
    if (i > 0 && step <= steps[i - 1]!) {
      fail('invalid_request', 'steps must increase, for example [5, 25, 50, 100]', {
        field: `steps[${i}]`,
      });
    }
  });
  return steps;
}

export function validateRolloutCommand(input: unknown): RolloutCommand {
  const body = requireObject(input, 'body', ['rolloutId', 'revision', 'reason']);
  return commandOf(body);
}

export function validateRollback(input: unknown): RolloutRollbackRequest {
  const body = requireObject(input, 'body', ['rolloutId', 'revision', 'reason', 'cancelIntents']);
  const request: RolloutRollbackRequest = commandOf(body);
  if (body.cancelIntents !== undefined) {
    if (typeof body.cancelIntents !== 'boolean') {
      fail('invalid_request', 'cancelIntents must be true or false', { field: 'cancelIntents' });
    }
    request.cancelIntents = body.cancelIntents;
  }
  return request;
}

function commandOf(body: Record<string, unknown>): RolloutCommand {
  const command: RolloutCommand = { rolloutId: requireName(body.rolloutId, 'rolloutId') };
  if (body.revision !== undefined) {
    command.revision = requireInteger(body.revision, 'revision', 1, Number.MAX_SAFE_INTEGER);
  }
  const reason = optionalText(body.reason, 'reason', MAX_REASON);
  if (reason !== undefined) command.reason = reason;
  return command;
}

export function validateListRollouts(input: unknown): ListRolloutsQuery {
  const body = requireObject(input ?? {}, 'query', ['status']);
  if (body.status === undefined) return {};
  if (!ROLLOUT_STATUSES.includes(body.status as never)) {
    fail('invalid_request', `status must be one of ${ROLLOUT_STATUSES.join(', ')}`, {
      field: 'status',
    });
  }
  return { status: body.status as ListRolloutsQuery['status'] & string };
}
