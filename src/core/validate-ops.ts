/** Validation of dispatch, policy, cutover and job requests (see validate.ts for the rules). */
import { fail, isFencegateError, type FencegateError } from '../errors.js';
import {
  type ClaimIntentsRequest,
  type CompleteIntentRequest,
  type CutoverRequest,
  type IntentCompletion,
  type IntentCompletionCode,
  type JobEvent,
  type RegisterPolicyRequest,
} from '../types.js';
import { INTENT_COMPLETION_CODES } from './intent-rules.js';
import { TARGET_PATTERN, TARGET_RULE, type Limits } from './limits.js';
import { parseRolloutCutoverId } from './rollout-rules.js';
import {
  optionalName,
  optionalText,
  requireFence,
  MAX_JOB_ATTEMPT,
  requireInteger,
  requireJobState,
  requireName,
  requireObject,
  requireTtl,
} from './validate.js';

const MAX_TEXT = 1024;
const MAX_SCOPES_PER_CUTOVER = 100_000;
const MAX_JOB_EVENTS = 1000;
/** Completions per completeIntents call: a dispatcher's largest batch. */
export const MAX_COMPLETIONS = 1000;

function optionalString(value: unknown, field: string, max = MAX_TEXT): string | undefined {
  return optionalText(value, field, max);
}

export function validateClaim(input: unknown, limits: Limits): ClaimIntentsRequest {
  const body = requireObject(input, 'body', ['dispatcher', 'ttlMs', 'limit', 'targets']);
  const request: ClaimIntentsRequest = {
    dispatcher: requireName(body.dispatcher, 'dispatcher'),
    ttlMs: requireTtl(body.ttlMs, limits),
    limit: requireInteger(body.limit, 'limit', 1, limits.maxListLimit),
  };
  if (body.targets !== undefined) {
    if (!Array.isArray(body.targets) || body.targets.length === 0 || body.targets.length > 256) {
      fail('invalid_request', 'targets must be an array of 1 to 256 target names', {
        field: 'targets',
      });
    }
    request.targets = body.targets.map((target, i) => {
      if (typeof target !== 'string' || !TARGET_PATTERN.test(target)) {
        fail('invalid_request', `targets[${i}] must be ${TARGET_RULE}`, { field: `targets[${i}]` });
      }
      return target;
    });
  }
  return request;
}

const OUTCOMES = ['delivered', 'failed', 'unknown', 'needs_attention'] as const;
const MAX_RETRY_AFTER_MS = 86_400_000;

export function validateComplete(input: unknown): CompleteIntentRequest {
  const body = requireObject(input, 'body', [
    'claimFence',
    'outcome',
    'retryable',
    'retryAfterMs',
    'providerRef',
    'error',
    'code',
  ]);
  if (!OUTCOMES.includes(body.outcome as never)) {
    fail('invalid_request', `outcome must be one of ${OUTCOMES.join(', ')}`, { field: 'outcome' });
  }
  const request: CompleteIntentRequest = {
    claimFence: requireFence(body.claimFence, 'claimFence'),
    outcome: body.outcome as CompleteIntentRequest['outcome'],
  };
  if (body.retryable !== undefined) {
    if (typeof body.retryable !== 'boolean') {
      fail('invalid_request', 'retryable must be a boolean', { field: 'retryable' });
    }
    request.retryable = body.retryable;
  }
  if (body.retryAfterMs !== undefined) {
    request.retryAfterMs = requireInteger(body.retryAfterMs, 'retryAfterMs', 0, MAX_RETRY_AFTER_MS);
  }
  const providerRef = optionalString(body.providerRef, 'providerRef', 256);
  if (providerRef !== undefined) request.providerRef = providerRef;
  const error = optionalString(body.error, 'error');
  if (error !== undefined) request.error = error;
  if (body.code !== undefined) {
    if (!INTENT_COMPLETION_CODES.includes(body.code as never)) {
      fail('invalid_request', `code must be one of ${INTENT_COMPLETION_CODES.join(', ')}`, {
        field: 'code',
      });
    }
    // A code says why the intent was never attempted: that ends it, failed.
    if (request.outcome !== 'failed' || request.retryable === true) {
      fail('invalid_request', 'code goes only with outcome failed and retryable absent or false', {
        field: 'code',
      });
    }
    request.code = body.code as IntentCompletionCode;
  }
  return request;
}

/**
 * A batch of completions: the batch itself must be an array of 1 to MAX_COMPLETIONS, but each
 * completion is judged alone, so one that is not valid is answered its own invalid_request and
 * the others are still recorded.
 */
export function validateCompletions(input: unknown): (IntentCompletion | FencegateError)[] {
  if (!Array.isArray(input) || input.length === 0 || input.length > MAX_COMPLETIONS) {
    fail('invalid_request', `completions must be an array of 1 to ${MAX_COMPLETIONS}`, {
      field: 'completions',
    });
  }
  return input.map((item: unknown, i) => {
    try {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) {
        fail('invalid_request', `completions[${i}] must be a JSON object`, {
          field: `completions[${i}]`,
        });
      }
      const { effectKey, ...request } = item as Record<string, unknown>;
      return { effectKey: requireName(effectKey, 'effectKey'), ...validateComplete(request) };
    } catch (error) {
      if (isFencegateError(error)) return error;
      throw error;
    }
  });
}

export function validatePolicy(input: unknown): RegisterPolicyRequest {
  const body = requireObject(input, 'body', ['version', 'digest', 'description']);
  const request: RegisterPolicyRequest = { version: requireName(body.version, 'version') };
  const digest = optionalString(body.digest, 'digest', 256);
  if (digest !== undefined) request.digest = digest;
  const description = optionalString(body.description, 'description');
  if (description !== undefined) request.description = description;
  return request;
}

export function validateCutover(input: unknown, limits: Limits): CutoverRequest {
  const body = requireObject(input, 'body', [
    'cutoverId',
    'toPolicy',
    'holder',
    'scopes',
    'prefix',
    'leaseTtlMs',
    'reason',
  ]);
  const request: CutoverRequest = {
    toPolicy: requireName(body.toPolicy, 'toPolicy'),
    holder: requireName(body.holder, 'holder'),
  };
  const cutoverId = optionalName(body.cutoverId, 'cutoverId');
  // A rollout's cutovers are named `<rolloutId>/step-<n>` and `<rolloutId>/rollback`; a plain
  // cutover under such a name would make that step, or the rollback, unstartable.
  if (cutoverId !== undefined && parseRolloutCutoverId(cutoverId) !== null) {
    fail(
      'invalid_request',
      `cutoverId ${cutoverId} ends in /step-<n> or /rollback, names kept for a rollout's own cutovers; choose another cutoverId`,
      { field: 'cutoverId' },
    );
  }
  if (cutoverId !== undefined) request.cutoverId = cutoverId;
  Object.assign(request, requireSelection(body, MAX_SCOPES_PER_CUTOVER));
  if (body.leaseTtlMs !== undefined)
    request.leaseTtlMs = requireTtl(body.leaseTtlMs, limits, 'leaseTtlMs');
  const reason = optionalString(body.reason, 'reason');
  if (reason !== undefined) request.reason = reason;
  return request;
}

export function validateJobEvents(input: unknown): JobEvent[] {
  const body = requireObject(input, 'body', ['events']);
  if (
    !Array.isArray(body.events) ||
    body.events.length === 0 ||
    body.events.length > MAX_JOB_EVENTS
  ) {
    fail('invalid_request', `events must be an array of 1 to ${MAX_JOB_EVENTS} events`, {
      field: 'events',
    });
  }
  return body.events.map((item, i) => {
    const field = `events[${i}]`;
    const event = requireObject(item, field, [
      'jobId',
      'scope',
      'policyVersion',
      'fence',
      'state',
      'attempt',
      'at',
    ]);
    const result: JobEvent = {
      jobId: requireName(event.jobId, `${field}.jobId`),
      scope: requireName(event.scope, `${field}.scope`),
      policyVersion: requireName(event.policyVersion, `${field}.policyVersion`),
      fence: requireFence(event.fence, `${field}.fence`),
      state: requireJobState(event.state, `${field}.state`),
      attempt: requireInteger(event.attempt, `${field}.attempt`, 0, MAX_JOB_ATTEMPT),
    };
    if (event.at !== undefined)
      result.at = requireInteger(event.at, `${field}.at`, 0, Number.MAX_SAFE_INTEGER);
    return result;
  });
}

/**
 * The scopes a cutover or rollout covers: exactly one of `scopes` (1 to `maxScopes` names,
 * duplicates dropped) or `prefix`. `larger` says what to do about a longer list.
 */
export function requireSelection(
  body: Record<string, unknown>,
  maxScopes: number,
  larger = '',
): { scopes?: string[]; prefix?: string } {
  if ((body.scopes === undefined) === (body.prefix === undefined)) {
    fail('invalid_request', 'send exactly one of scopes (a list) or prefix', { field: 'scopes' });
  }
  if (body.prefix !== undefined) return { prefix: requireName(body.prefix, 'prefix') };
  if (!Array.isArray(body.scopes) || body.scopes.length === 0 || body.scopes.length > maxScopes) {
    fail('invalid_request', `scopes must be an array of 1 to ${maxScopes} scope names${larger}`, {
      field: 'scopes',
    });
  }
  return {
    scopes: [...new Set(body.scopes.map((scope, i) => requireName(scope, `scopes[${i}]`)))],
  };
}
