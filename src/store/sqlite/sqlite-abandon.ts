/** abandonOperation on SQLite, inside the caller's write transaction. */
import {
  ABANDONED_FINGERPRINT,
  abandonedAuditEntry,
  abandonedOutcome,
} from '../../core/abandon.js';
import type { AbandonRequest, CommitResult } from '../../types.js';
import { appendAudit } from './sqlite-audit.js';
import type { CommitContext } from './sqlite-commit.js';

/**
 * The stored outcome, or the abandonment stored and audited now. The write lock is held, so no
 * commit with this operationId can be between its replay check and its stored outcome.
 */
export function abandonInTransaction(
  ctx: CommitContext,
  operationId: string,
  request: AbandonRequest,
): CommitResult {
  const { statements, tenant, now } = ctx;
  const stored = statements.getOperation.get(tenant, operationId) as
    { outcome: string } | undefined;
  if (stored !== undefined) return JSON.parse(stored.outcome) as CommitResult;
  const result = abandonedOutcome(operationId, request.reason);
  statements.insertOperation.run(
    tenant,
    operationId,
    ABANDONED_FINGERPRINT,
    JSON.stringify(result),
    now,
  );
  appendAudit(statements, abandonedAuditEntry(tenant, now, operationId));
  return result;
}
