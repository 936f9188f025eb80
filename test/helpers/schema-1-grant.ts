/**
 * A store opened on rows written at schema version 1, before grants recorded their token and audit
 * entries named theirs: one live grant of `orders/1` to `replica-1` at fence 1, and its acquire's
 * audit entry. Each SQL store's test writes those rows in its own terms (SCHEMA_1_ROWS), opens the
 * store, which upgrades it, and checks it here.
 */
import { expect } from 'vitest';
import { auditEntryHash } from '../../src/audit/checkpoint-identity.js';
import { verifyStore } from '../../src/audit/verify.js';
import type { Store } from '../../src/store/store.js';
import type { AuditEntry } from '../../src/types.js';

const LEASE_END = 9_000_000_000_000;

/** The rows: the values of the columns both SQL stores had at version 1, in their order. */
export const SCHEMA_1_ROWS = {
  scope: `'acme', 'orders/1', 1, 'replica-1', ${LEASE_END}, NULL, 'active', 1`,
  scopeColumns:
    'tenant, scope, fence, holder, lease_expires_at, policy_version, status, updated_at',
  audit: `1, 'acme', 'orders/1', 'acquire', 'granted', 'replica-1', 1, ${LEASE_END}`,
  auditColumns: 'at, tenant, scope, kind, outcome, holder, current_fence, lease_expires_at',
};

/** The entry as version 1 read it: every field, and no tokenId. */
const WRITTEN: AuditEntry = {
  seq: 1,
  at: 1,
  tenant: 'acme',
  scope: 'orders/1',
  kind: 'acquire',
  outcome: 'granted',
  reason: null,
  taskId: null,
  operationId: null,
  holder: 'replica-1',
  policyVersion: null,
  fence: null,
  currentFence: 1,
  leaseExpiresAt: LEASE_END,
  records: null,
  effectKey: null,
  reads: null,
};

/**
 * The old entry reads as it did and keeps its hash; the old grant binds no token (any worker token
 * releases it); the next grant records its token; the whole history verifies.
 */
export async function expectUpgradedGrant(store: Store): Promise<void> {
  const [entry] = (await store.readAudit('acme', {})).items;
  expect(entry).toEqual(WRITTEN);
  expect(auditEntryHash(entry!)).toBe(auditEntryHash(WRITTEN));
  const worker = { tokenId: 'tok_other', role: 'worker' as const, mayTakeOver: [] };
  const release = { scope: 'orders/1', holder: 'replica-1', fence: 1 };
  await expect(store.release('acme', release, worker)).resolves.toMatchObject({ released: true });
  const owner = { ...worker, tokenId: 'tok_owner' };
  await store.acquire('acme', { scope: 'orders/1', holder: 'replica-2', ttlMs: 60_000 }, owner);
  await expect(
    store.release('acme', { scope: 'orders/1', holder: 'replica-2', fence: 2 }, worker),
  ).rejects.toMatchObject({ code: 'not_holder', details: { grantTokenId: 'tok_owner' } });
  // The history, old entry and new ones, verifies.
  expect((await verifyStore(store, { tenant: 'acme' })).ok).toBe(true);
}
