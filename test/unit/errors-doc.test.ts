import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderErrorsDoc } from '../../src/errors-doc.js';
import {
  COMMIT_REJECTION_CODES,
  ERROR_CATALOG,
  FencegateError,
  isFencegateError,
} from '../../src/errors.js';

describe('error catalog', () => {
  it('docs/errors.md equals the catalog', () => {
    const onDisk = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    expect(onDisk).toBe(renderErrorsDoc());
  });

  it('holds every code the contract names', () => {
    const contract = [
      'invalid_request',
      'unauthorized',
      'forbidden',
      'not_found',
      'scope_not_found',
      'scope_deleted',
      'lease_held',
      'not_holder',
      'policy_mismatch',
      'stale_fence',
      'authority_revoked',
      'lease_expired',
      'stale_policy',
      'stale_dependency',
      'stale_revision',
      'incarnation_changed',
      'duplicate_effect',
      'policy_conflict',
      'stale_claim',
      'payload_too_large',
      'unsupported_media_type',
      'operation_id_conflict',
      'operation_abandoned',
      'store_unavailable',
      'outcome_unknown',
    ];
    for (const code of contract) expect(Object.keys(ERROR_CATALOG)).toContain(code);
    for (const code of COMMIT_REJECTION_CODES) expect(Object.keys(ERROR_CATALOG)).toContain(code);
  });

  it('errors carry status, retryability and are recognised across copies', () => {
    const error = new FencegateError('store_unavailable', 'down');
    expect(error.httpStatus).toBe(503);
    expect(error.retryable).toBe(true);
    expect(isFencegateError(error)).toBe(true);
    expect(isFencegateError(new Error('plain'))).toBe(false);
  });
});
