/**
 * Shape and limit checks for every request, shared by the library and the server so both reject
 * the same input with the same code and message. A rejected request changes nothing: these run
 * before the store is touched.
 */
import { fail } from '../errors.js';
import type {
  AcquireRequest,
  CancelIntentsRequest,
  CommitRequest,
  JobState,
  LeaseJobEvents,
  ListCutoversQuery,
  ListIntentsQuery,
  ListScopesQuery,
  ReleaseRequest,
  RenewRequest,
  TakeoverRequest,
} from '../types.js';
import { INTENT_STATUSES, JOB_STATES } from '../types.js';
import { decodeCutoverCursor } from './cutover-cursor.js';
import { decodeIntentCursor } from './intent-page.js';
import { rememberPayloadJson, rememberValueJson } from './prepared-value.js';
import { requestFingerprint } from './commit-check.js';
import { childPath, failBigint, isUnsafeInteger, unsafeIntegerError } from './safe-integers.js';
import {
  DEFAULT_LIMITS,
  NAME_PATTERN,
  NAME_RULE,
  TARGET_PATTERN,
  TARGET_RULE,
  TENANT_PATTERN,
  TENANT_RULE,
  type Limits,
} from './limits.js';

type Obj = Record<string, unknown>;

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function requireObject(value: unknown, field: string, allowed: readonly string[]): Obj {
  if (!isObject(value)) fail('invalid_request', `${field} must be a JSON object`, { field });
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      fail(
        'invalid_request',
        `${field}.${key} is not a known field; allowed: ${allowed.join(', ')}`,
        {
          field: `${field}.${key}`,
        },
      );
    }
  }
  return value;
}

export function requireName(value: unknown, field: string): string {
  if (typeof value !== 'string' || !NAME_PATTERN.test(value)) {
    fail('invalid_request', `${field} must be ${NAME_RULE}`, { field });
  }
  return value;
}

export function optionalName(value: unknown, field: string): string | undefined {
  return value === undefined ? undefined : requireName(value, field);
}

export function requireTenant(value: unknown, field = 'tenant'): string {
  if (typeof value !== 'string' || !TENANT_PATTERN.test(value)) {
    fail('invalid_request', `${field} must be ${TENANT_RULE}`, { field });
  }
  return value;
}

export function requireInteger(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    fail('invalid_request', `${field} must be an integer from ${min} to ${max}`, { field });
  }
  return value;
}

const MAX_COUNTER = Number.MAX_SAFE_INTEGER;

export function requireFence(value: unknown, field = 'fence'): number {
  return requireInteger(value, field, 0, MAX_COUNTER);
}

export function requireJobState(value: unknown, field: string): JobState {
  if (!JOB_STATES.includes(value as JobState)) {
    fail('invalid_request', `${field} must be one of ${JOB_STATES.join(', ')}`, { field });
  }
  return value as JobState;
}

export const MAX_JOB_ATTEMPT = 1_000_000;

/** A lease operation's job states (types.ts LeaseJobEvents): one to six, each a job state. */
function optionalLeaseJobEvents(value: unknown, field = 'job'): LeaseJobEvents | undefined {
  if (value === undefined) return undefined;
  const job = requireObject(value, field, ['jobId', 'attempt', 'states']);
  if (
    !Array.isArray(job.states) ||
    job.states.length === 0 ||
    job.states.length > JOB_STATES.length
  ) {
    fail(
      'invalid_request',
      `${field}.states must be an array of 1 to ${JOB_STATES.length} job states`,
      {
        field: `${field}.states`,
      },
    );
  }
  return {
    jobId: requireName(job.jobId, `${field}.jobId`),
    attempt: requireInteger(job.attempt, `${field}.attempt`, 0, MAX_JOB_ATTEMPT),
    states: job.states.map((state, i) => requireJobState(state, `${field}.states[${i}]`)),
  };
}

export function requireTtl(value: unknown, limits: Limits, field = 'ttlMs'): number {
  return requireInteger(value, field, limits.minTtlMs, limits.maxTtlMs);
}

/** Text from outside (a receiver's answer, an effector's error) made storable: NUL becomes U+FFFD. */
export function withoutNul(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

/**
 * Free text a caller attaches (a reason, a description, a label, an error, a provider reference):
 * any characters but NUL, which PostgreSQL cannot store in text, up to `maxLength`.
 */
export function optionalText(value: unknown, field: string, maxLength: number): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > maxLength) {
    fail('invalid_request', `${field} must be a string of at most ${maxLength} characters`, {
      field,
    });
  }
  if (value.includes('\u0000')) {
    fail('invalid_request', `${field} must not contain NUL characters (U+0000)`, { field });
  }
  return value;
}

function requireArray(value: unknown, field: string, max: number): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) fail('invalid_request', `${field} must be an array`, { field });
  if (value.length > max) {
    fail('invalid_request', `${field} may hold at most ${max} items`, { field, max });
  }
  return value;
}

/**
 * A JSON value (no undefined, functions, NaN or Infinity) no larger than the value limit; returns
 * its JSON text, which has the byte length of its canonical form (only key order differs).
 */
export function requireJsonValue(value: unknown, field: string, limits: Limits): string {
  if (value === undefined) fail('invalid_request', `${field} is required`, { field });
  assertJson(value, field, 0);
  const json = JSON.stringify(value);
  const bytes = Buffer.byteLength(json);
  if (bytes > limits.maxValueBytes) {
    fail('payload_too_large', `${field} is ${bytes} bytes; the limit is ${limits.maxValueBytes}`, {
      field,
      limit: limits.maxValueBytes,
    });
  }
  return json;
}

const MAX_DEPTH = 64;

/** `path` names the value being checked (`writes[0].value.items[2]`), for the message. */
function assertJson(value: unknown, path: string, depth: number): void {
  if (depth > MAX_DEPTH)
    fail('invalid_request', `${path} nests deeper than ${MAX_DEPTH}`, { field: path });
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      fail('invalid_request', `${path} holds a non-finite number`, { field: path });
    if (isUnsafeInteger(value)) throw unsafeIntegerError(path, String(BigInt(value)));
    return;
  }
  if (typeof value === 'bigint') failBigint(path);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) assertJson(value[i], childPath(path, i), depth + 1);
    return;
  }
  // A plain object: its prototype, not its (possibly user-named) "constructor" key, says so.
  const prototype: unknown = isObject(value) ? Object.getPrototypeOf(value) : undefined;
  if (prototype === Object.prototype || prototype === null) {
    for (const [key, item] of Object.entries(value as Obj)) {
      assertJson(item, childPath(path, key), depth + 1);
    }
    return;
  }
  fail('invalid_request', `${path} must be a JSON value`, { field: path });
}

/** The versions one acquire may offer: the old and the new one of a rollout, and a few more. */
const MAX_POLICY_VERSIONS = 8;

export function validateAcquire(input: unknown, limits: Limits = DEFAULT_LIMITS): AcquireRequest {
  const body = requireObject(input, 'body', [
    'scope',
    'holder',
    'ttlMs',
    'policyVersion',
    'policyVersions',
    'job',
  ]);
  const request: AcquireRequest = {
    scope: requireName(body.scope, 'scope'),
    holder: requireName(body.holder, 'holder'),
    ttlMs: requireTtl(body.ttlMs, limits),
  };
  const policyVersion = optionalName(body.policyVersion, 'policyVersion');
  if (policyVersion !== undefined) request.policyVersion = policyVersion;
  if (body.policyVersions !== undefined) {
    if (policyVersion !== undefined) {
      fail('invalid_request', 'send policyVersion or policyVersions, not both', {
        field: 'policyVersions',
      });
    }
    if (!Array.isArray(body.policyVersions) || body.policyVersions.length === 0) {
      fail('invalid_request', 'policyVersions must be a non-empty array of policy versions', {
        field: 'policyVersions',
      });
    }
    const versions = requireArray(body.policyVersions, 'policyVersions', MAX_POLICY_VERSIONS);
    request.policyVersions = [
      ...new Set(versions.map((version, i) => requireName(version, `policyVersions[${i}]`))),
    ];
  }
  const job = optionalLeaseJobEvents(body.job);
  if (job !== undefined) request.job = job;
  return request;
}

export function validateRenew(input: unknown, limits: Limits = DEFAULT_LIMITS): RenewRequest {
  const body = requireObject(input, 'body', ['scope', 'holder', 'fence', 'ttlMs']);
  return {
    scope: requireName(body.scope, 'scope'),
    holder: requireName(body.holder, 'holder'),
    fence: requireFence(body.fence),
    ttlMs: requireTtl(body.ttlMs, limits),
  };
}

export function validateRelease(input: unknown): ReleaseRequest {
  const body = requireObject(input, 'body', ['scope', 'holder', 'fence', 'job']);
  const request: ReleaseRequest = {
    scope: requireName(body.scope, 'scope'),
    holder: requireName(body.holder, 'holder'),
    fence: requireFence(body.fence),
  };
  const job = optionalLeaseJobEvents(body.job);
  if (job !== undefined) request.job = job;
  return request;
}

export function validateCancelIntents(input: unknown): CancelIntentsRequest {
  const body = requireObject(input, 'body', [
    'scope',
    'holder',
    'fence',
    'committedFrom',
    'reason',
    'cursor',
  ]);
  const request: CancelIntentsRequest = {
    scope: requireName(body.scope, 'scope'),
    holder: requireName(body.holder, 'holder'),
    fence: requireFence(body.fence),
    committedFrom: requireFence(body.committedFrom, 'committedFrom'),
  };
  const reason = optionalText(body.reason, 'reason', MAX_REASON);
  if (reason !== undefined) request.reason = reason;
  const cursor = optionalCursor(body.cursor);
  if (cursor !== undefined) {
    // Refused here, before any store reads it: a cursor no page answered.
    decodeIntentCursor(cursor);
    request.cursor = cursor;
  }
  return request;
}

export const MAX_REASON = 1024;

export function validateTakeover(input: unknown, limits: Limits = DEFAULT_LIMITS): TakeoverRequest {
  const body = requireObject(input, 'body', ['holder', 'ttlMs', 'policyVersion', 'reason']);
  const request: TakeoverRequest = { holder: requireName(body.holder, 'holder') };
  if (body.ttlMs !== undefined) request.ttlMs = requireTtl(body.ttlMs, limits);
  const policyVersion = optionalName(body.policyVersion, 'policyVersion');
  if (policyVersion !== undefined) request.policyVersion = policyVersion;
  const reason = optionalText(body.reason, 'reason', MAX_REASON);
  if (reason !== undefined) request.reason = reason;
  return request;
}

export function validateReason(input: unknown): { reason?: string } {
  const body = requireObject(input ?? {}, 'body', ['reason']);
  const reason = optionalText(body.reason, 'reason', MAX_REASON);
  return reason === undefined ? {} : { reason };
}

function optionalLimit(value: unknown, limits: Limits): number | undefined {
  return value === undefined ? undefined : requireInteger(value, 'limit', 1, limits.maxListLimit);
}

function optionalCursor(value: unknown): string | undefined {
  return optionalText(value, 'cursor', 1024);
}

export function validateListScopes(
  input: unknown,
  limits: Limits = DEFAULT_LIMITS,
): ListScopesQuery {
  const query = requireObject(input ?? {}, 'query', ['prefix', 'limit', 'cursor']);
  const result: ListScopesQuery = {};
  if (query.prefix !== undefined && query.prefix !== '') {
    result.prefix = requireName(query.prefix, 'prefix');
  }
  const limit = optionalLimit(query.limit, limits);
  if (limit !== undefined) result.limit = limit;
  const cursor = optionalCursor(query.cursor);
  if (cursor !== undefined) result.cursor = cursor;
  return result;
}

export function validateListIntents(
  input: unknown,
  limits: Limits = DEFAULT_LIMITS,
): ListIntentsQuery {
  const query = requireObject(input ?? {}, 'query', ['scope', 'status', 'limit', 'cursor']);
  const result: ListIntentsQuery = {};
  const scope = optionalName(query.scope, 'scope');
  if (scope !== undefined) result.scope = scope;
  if (query.status !== undefined) {
    if (!INTENT_STATUSES.includes(query.status as never)) {
      fail('invalid_request', `status must be one of ${INTENT_STATUSES.join(', ')}`, {
        field: 'status',
      });
    }
    result.status = query.status as ListIntentsQuery['status'] & string;
  }
  const limit = optionalLimit(query.limit, limits);
  if (limit !== undefined) result.limit = limit;
  const cursor = optionalCursor(query.cursor);
  if (cursor !== undefined) {
    // Refused here, before any store reads it: a cursor no page answered.
    decodeIntentCursor(cursor);
    result.cursor = cursor;
  }
  return result;
}

/**
 * Validates a commit request and returns it normalized: every read names its scope, absent lists
 * are empty. A record is written at most once, a write is a value or a delete, effect keys are
 * unique within the request.
 */
export function validateCommit(input: unknown, limits: Limits = DEFAULT_LIMITS): NormalizedCommit {
  const body = requireObject(input, 'body', [
    'scope',
    'fence',
    'operationId',
    'taskId',
    'policyVersion',
    'reads',
    'writes',
    'intents',
    'release',
    'job',
  ]);
  const scope = requireName(body.scope, 'scope');
  const request: NormalizedCommit = {
    scope,
    fence: requireFence(body.fence),
    operationId: requireName(body.operationId, 'operationId'),
    reads: [],
    writes: [],
    intents: [],
  };
  const taskId = optionalName(body.taskId, 'taskId');
  if (taskId !== undefined) request.taskId = taskId;
  const policyVersion = optionalName(body.policyVersion, 'policyVersion');
  if (policyVersion !== undefined) request.policyVersion = policyVersion;
  addRelease(request, body.release, body.job);

  requireArray(body.reads, 'reads', limits.maxReads).forEach((item, i) => {
    const field = `reads[${i}]`;
    const read = requireObject(item, field, ['scope', 'name', 'revision']);
    request.reads.push({
      scope: optionalName(read.scope, `${field}.scope`) ?? scope,
      name: requireName(read.name, `${field}.name`),
      revision: requireFence(read.revision, `${field}.revision`),
    });
  });

  const written = new Set<string>();
  requireArray(body.writes, 'writes', limits.maxWrites).forEach((item, i) => {
    const field = `writes[${i}]`;
    const write = requireObject(item, field, ['name', 'expectRevision', 'value', 'delete']);
    const name = requireName(write.name, `${field}.name`);
    if (written.has(name)) {
      fail('invalid_request', `${field}.name: record ${name} is written twice in one commit`, {
        field: `${field}.name`,
      });
    }
    written.add(name);
    const expectRevision = requireFence(write.expectRevision, `${field}.expectRevision`);
    if (write.delete !== undefined) {
      if (write.delete !== true) {
        fail('invalid_request', `${field}.delete must be true when present`, {
          field: `${field}.delete`,
        });
      }
      if (write.value !== undefined) {
        fail('invalid_request', `${field} has both value and delete; send one`, { field });
      }
      request.writes.push({ name, expectRevision, delete: true });
    } else {
      if (write.value === undefined) {
        fail('invalid_request', `${field} needs a value or delete: true`, { field });
      }
      const json = requireJsonValue(write.value, `${field}.value`, limits);
      const valueWrite = { name, expectRevision, value: write.value };
      rememberValueJson(valueWrite, json);
      request.writes.push(valueWrite);
    }
  });

  const keys = new Set<string>();
  requireArray(body.intents, 'intents', limits.maxIntents).forEach((item, i) => {
    const field = `intents[${i}]`;
    const intent = requireObject(item, field, ['effectKey', 'target', 'payload']);
    const effectKey = requireName(intent.effectKey, `${field}.effectKey`);
    if (keys.has(effectKey)) {
      fail('invalid_request', `${field}.effectKey ${effectKey} appears twice in one commit`, {
        field: `${field}.effectKey`,
      });
    }
    keys.add(effectKey);
    if (typeof intent.target !== 'string' || !TARGET_PATTERN.test(intent.target)) {
      fail('invalid_request', `${field}.target must be ${TARGET_RULE}`, {
        field: `${field}.target`,
      });
    }
    const payloadJson = requireJsonValue(intent.payload, `${field}.payload`, limits);
    const normalized = { effectKey, target: intent.target, payload: intent.payload };
    rememberPayloadJson(normalized, payloadJson);
    request.intents.push(normalized);
  });
  // Everything the store compares or stores is taken now, not when the commit runs.
  requestFingerprint(request);
  return request;
}

/** A commit's `release: true`, and the job states it records (only with a release). */
function addRelease(request: NormalizedCommit, release: unknown, job: unknown): void {
  if (release !== undefined && release !== true) {
    fail('invalid_request', 'release must be true when present', { field: 'release' });
  }
  if (release === undefined) {
    if (job !== undefined) {
      fail('invalid_request', 'job is recorded with a release; send release: true', {
        field: 'job',
      });
    }
    return;
  }
  request.release = true;
  const events = optionalLeaseJobEvents(job);
  if (events !== undefined) request.job = events;
}

/** A validated commit request: reads carry their scope, lists are present. */
export interface NormalizedCommit extends CommitRequest {
  reads: { scope: string; name: string; revision: number }[];
  writes: NonNullable<CommitRequest['writes']>;
  intents: NonNullable<CommitRequest['intents']>;
}

export function validateListCutovers(
  input: unknown,
  limits: Limits = DEFAULT_LIMITS,
): ListCutoversQuery {
  const query = requireObject(input ?? {}, 'query', ['limit', 'cursor']);
  const result: ListCutoversQuery = {};
  const limit = optionalLimit(query.limit, limits);
  if (limit !== undefined) result.limit = limit;
  const cursor = optionalCursor(query.cursor);
  if (cursor !== undefined) {
    decodeCutoverCursor(cursor);
    result.cursor = cursor;
  }
  return result;
}
