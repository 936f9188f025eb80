import { fail } from '../errors.js';
import { AUDIT_KINDS, INTENT_STATUSES, type AuditOutcome, type AuditQuery } from '../types.js';
import type { Limits } from './limits.js';
import { optionalName, requireInteger, requireObject } from './validate.js';

const AUDIT_OUTCOMES: readonly AuditOutcome[] = [
  'granted',
  'ok',
  'committed',
  'rejected',
  ...INTENT_STATUSES,
];

export function validateAuditQuery(input: unknown, limits: Limits): AuditQuery {
  const query = requireObject(input ?? {}, 'query', [
    'scope',
    'kind',
    'outcome',
    'afterSeq',
    'limit',
  ]);
  const result: AuditQuery = {};
  const scope = optionalName(query.scope, 'scope');
  if (scope !== undefined) result.scope = scope;
  if (query.kind !== undefined) {
    if (!AUDIT_KINDS.includes(query.kind as never)) {
      fail('invalid_request', `kind must be one of ${AUDIT_KINDS.join(', ')}`, { field: 'kind' });
    }
    result.kind = query.kind as AuditQuery['kind'] & string;
  }
  if (query.outcome !== undefined) {
    if (!AUDIT_OUTCOMES.includes(query.outcome as never)) {
      fail('invalid_request', `outcome must be one of ${AUDIT_OUTCOMES.join(', ')}`, {
        field: 'outcome',
      });
    }
    result.outcome = query.outcome as AuditOutcome;
  }
  if (query.afterSeq !== undefined) {
    result.afterSeq = requireInteger(query.afterSeq, 'afterSeq', 0, Number.MAX_SAFE_INTEGER);
  }
  if (query.limit !== undefined)
    result.limit = requireInteger(query.limit, 'limit', 1, limits.maxListLimit);
  return result;
}
