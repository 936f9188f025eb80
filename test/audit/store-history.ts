/**
 * Builds a real audit history by driving a real SQLite store through the competing-worker
 * scenarios of ACCEPTANCE.md, then returns it with the handles the mutation tests tamper with.
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { AuditEntry, CommitResult } from '../../src/types.js';

export const TENANT = 'acme';
export const OTHER_TENANT = 'other';
export const S1 = 'wf-1/memory';
export const S2 = 'wf-2/memory';
export const S3 = 'wf-3/memory';

export interface StoreHistory {
  store: SqliteStore;
  gate: Fencegate;
  clock: ManualClock;
  path: string;
}

function expectOutcome(result: CommitResult, outcome: string): void {
  if (outcome === 'committed') expect(result.outcome).toBe('committed');
  else expect(result.outcome === 'rejected' ? result.error.code : 'committed').toBe(outcome);
}

async function expectRefusal(promise: Promise<unknown>, code: string): Promise<void> {
  await expect(promise).rejects.toMatchObject({ code });
}

/** Drives the scenario on a fresh store file in `dir`. The store is left open. */
export async function driveStore(dir: string, file = 'history.db'): Promise<StoreHistory> {
  const clock = new ManualClock();
  const path = join(dir, file);
  const store = SqliteStore.open({ path, clock });
  const gate = await Fencegate.open({ store, tenant: TENANT });

  // S1: a worker commits, two candidates race on one revision, an operator takes over while the
  // first worker is paused, the stale worker comes back.
  const a = await gate.acquire({ scope: S1, holder: 'worker-a', ttlMs: 10_000 });
  expectOutcome(
    await gate.commit({
      scope: S1,
      fence: a.fence,
      operationId: 'a-1',
      writes: [{ name: 'summary', expectRevision: 0, value: { v: 1 } }],
      intents: [{ effectKey: 'email-1', target: 'crm', payload: { to: 'x' } }],
    }),
    'committed',
  );
  expectOutcome(
    await gate.commit({
      scope: S1,
      fence: a.fence,
      operationId: 'a-2',
      writes: [
        { name: 'summary', expectRevision: 1, value: { v: 2 } },
        { name: 'notes', expectRevision: 0, value: 'n' },
      ],
    }),
    'committed',
  );
  await gate.renew({ scope: S1, holder: 'worker-a', fence: a.fence, ttlMs: 10_000 });
  clock.advance(1000);
  // Two candidates read summary at revision 2: the first commits, the second is stale.
  expectOutcome(
    await gate.commit({
      scope: S1,
      fence: a.fence,
      operationId: 'a-3',
      writes: [{ name: 'summary', expectRevision: 2, value: { v: 3 } }],
    }),
    'committed',
  );
  expectOutcome(
    await gate.commit({
      scope: S1,
      fence: a.fence,
      operationId: 'a-4',
      writes: [{ name: 'summary', expectRevision: 2, value: { v: 'lost' } }],
    }),
    'stale_revision',
  );
  const b = await gate.takeover(S1, { holder: 'worker-b', ttlMs: 10_000 });
  // Worker a resumes with fresh reads but its old fence.
  expectOutcome(
    await gate.commit({
      scope: S1,
      fence: a.fence,
      operationId: 'a-stale',
      writes: [{ name: 'notes', expectRevision: 1, value: 'stale' }],
    }),
    'stale_fence',
  );
  await expectRefusal(
    gate.renew({ scope: S1, holder: 'worker-a', fence: a.fence, ttlMs: 10_000 }),
    'stale_fence',
  );
  expectOutcome(
    await gate.commit({
      scope: S1,
      fence: b.fence,
      operationId: 'b-1',
      writes: [{ name: 'summary', expectRevision: 3, value: { v: 4 } }],
    }),
    'committed',
  );
  await gate.release({ scope: S1, holder: 'worker-b', fence: b.fence });
  expectOutcome(
    await gate.commit({
      scope: S1,
      fence: b.fence,
      operationId: 'b-after-release',
      writes: [{ name: 'notes', expectRevision: 1, value: 'late' }],
    }),
    'authority_revoked',
  );
  const c = await gate.acquire({ scope: S1, holder: 'worker-c', ttlMs: 10_000 });
  expectOutcome(
    await gate.commit({
      scope: S1,
      fence: c.fence,
      operationId: 'c-1',
      writes: [{ name: 'summary', expectRevision: 4, value: { v: 5 } }],
    }),
    'committed',
  );
  // Delete and re-create: revisions continue from the tombstones.
  await gate.deleteScope(S1, { reason: 'reset' });
  const d = await gate.takeover(S1, { holder: 'worker-d', ttlMs: 10_000 });
  expectOutcome(
    await gate.commit({
      scope: S1,
      fence: d.fence,
      operationId: 'd-1',
      writes: [{ name: 'summary', expectRevision: 6, value: { v: 'new life' } }],
    }),
    'committed',
  );
  expectOutcome(
    await gate.commit({
      scope: S1,
      fence: d.fence,
      operationId: 'd-2',
      writes: [{ name: 'summary', expectRevision: 7, value: { v: 'new life 2' } }],
    }),
    'committed',
  );

  // S2: a lease runs out before the holder commits; nobody took over yet.
  const e = await gate.acquire({ scope: S2, holder: 'worker-e', ttlMs: 1000 });
  expectOutcome(
    await gate.commit({
      scope: S2,
      fence: e.fence,
      operationId: 'e-1',
      writes: [{ name: 'state', expectRevision: 0, value: 1 }],
      intents: [{ effectKey: 'email-2', target: 'crm', payload: {} }],
    }),
    'committed',
  );
  clock.advance(2000);
  expectOutcome(
    await gate.commit({
      scope: S2,
      fence: e.fence,
      operationId: 'e-late',
      writes: [{ name: 'state', expectRevision: 1, value: 2 }],
    }),
    'lease_expired',
  );
  const f = await gate.acquire({ scope: S2, holder: 'worker-f', ttlMs: 10_000 });
  await expectRefusal(gate.acquire({ scope: S2, holder: 'intruder', ttlMs: 10_000 }), 'lease_held');
  expectOutcome(
    await gate.commit({
      scope: S2,
      fence: f.fence,
      operationId: 'f-1',
      writes: [{ name: 'state', expectRevision: 1, value: 2 }],
    }),
    'committed',
  );
  await gate.cancel(S2, { reason: 'operator stop' });

  // Another tenant with the same names: its own fences, revisions and operation ids.
  const other = gate.forTenant(OTHER_TENANT);
  const x = await other.acquire({ scope: S1, holder: 'worker-x', ttlMs: 10_000 });
  expectOutcome(
    await other.commit({
      scope: S1,
      fence: x.fence,
      operationId: 'a-1',
      writes: [{ name: 'summary', expectRevision: 0, value: 'other' }],
      intents: [{ effectKey: 'email-1', target: 'crm', payload: {} }],
    }),
    'committed',
  );

  // S3: a v7 worker, before the cutover to v8.
  const v7 = await gate.acquire({
    scope: S3,
    holder: 'v7-worker',
    ttlMs: 60_000,
    policyVersion: 'v7',
  });
  expectOutcome(
    await gate.commit({
      scope: S3,
      fence: v7.fence,
      operationId: 'v7-1',
      policyVersion: 'v7',
      writes: [{ name: 'summary', expectRevision: 0, value: 'v7' }],
    }),
    'committed',
  );

  // S3 depends on S1's summary (revision 8 after d-2): a fresh read commits, a stale one not.
  expectOutcome(
    await gate.commit({
      scope: S3,
      fence: v7.fence,
      operationId: 'v7-dep',
      policyVersion: 'v7',
      reads: [{ scope: S1, name: 'summary', revision: 8 }],
      writes: [{ name: 'facts', expectRevision: 0, value: ['fresh'] }],
    }),
    'committed',
  );
  expectOutcome(
    await gate.commit({
      scope: S3,
      fence: v7.fence,
      operationId: 'v7-dep-stale',
      policyVersion: 'v7',
      reads: [{ scope: S1, name: 'summary', revision: 7 }],
      writes: [{ name: 'facts', expectRevision: 1, value: ['stale'] }],
    }),
    'stale_dependency',
  );

  // A dispatcher delivers email-1 in both tenants: one claim fence each, then the outcome.
  for (const tenantGate of [gate, other]) {
    const claimed = await tenantGate.claimIntents({ dispatcher: 'd-1', ttlMs: 5000, limit: 10 });
    const email = claimed.find((intent) => intent.effectKey === 'email-1');
    expect(email).toBeDefined();
    await tenantGate.completeIntent('email-1', {
      claimFence: email?.claimFence ?? 0,
      outcome: 'delivered',
    });
  }

  // S3: the cutover to v8; the paused v7 worker comes back late; the v8 controller commits.
  await gate.registerPolicy({ version: 'v8', digest: 'sha256:v8' });
  const cutover = await gate.cutover({
    cutoverId: 'cutover-1',
    toPolicy: 'v8',
    holder: 'v8-controller',
    scopes: [S3],
  });
  expectOutcome(
    await gate.commit({
      scope: S3,
      fence: v7.fence,
      operationId: 'v7-late',
      policyVersion: 'v7',
      writes: [{ name: 'summary', expectRevision: 1, value: 'v7 late' }],
    }),
    'stale_fence',
  );
  expectOutcome(
    await gate.commit({
      scope: S3,
      fence: cutover.fences[0]?.fence ?? 0,
      operationId: 'v8-1',
      policyVersion: 'v8',
      writes: [{ name: 'summary', expectRevision: 1, value: 'v8' }],
    }),
    'committed',
  );
  return { store, gate, clock, path };
}

/** Every audit entry of the store, all tenants, in seq order. */
export async function readAll(gate: Fencegate): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  let afterSeq: number | undefined;
  for (;;) {
    const page = await gate.store.readAudit(
      undefined,
      afterSeq === undefined ? { limit: 500 } : { afterSeq, limit: 500 },
    );
    entries.push(...page.items);
    if (page.nextAfterSeq === null) return entries;
    afterSeq = page.nextAfterSeq;
  }
}

type Appended = Partial<AuditEntry> & Pick<AuditEntry, 'kind' | 'outcome'>;

/** Appends entries after the store's history with the next seqs and store time. */
export function append(entries: AuditEntry[], additions: Appended[]): AuditEntry[] {
  const out = [...entries];
  for (const addition of additions) {
    const last = out.at(-1);
    out.push({
      seq: (last?.seq ?? 0) + 1,
      at: (last?.at ?? 0) + 1,
      tenant: TENANT,
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
      ...addition,
    });
  }
  return out;
}

/**
 * The parts of the history no store operation writes yet: a dispatcher claiming and delivering
 * email-1 (each tenant's), and a cutover of S3 to v8 followed by the v7 worker's late commit.
 */
