import type { AuditEntry } from '../types.js';

export type NewAuditEntry = Omit<AuditEntry, 'seq'>;

type Required = Pick<AuditEntry, 'at' | 'tenant' | 'kind' | 'outcome'>;

/** An audit entry with every field not given set to null, ready to append. */
export function auditEntry(fields: Required & Partial<NewAuditEntry>): NewAuditEntry {
  return {
    scope: null,
    reason: null,
    taskId: null,
    operationId: null,
    holder: null,
    policyVersion: null,
    fence: null,
    currentFence: null,
    leaseExpiresAt: null,
    records: null,
    effectKey: null,
    reads: null,
    ...fields,
  };
}
