/**
 * Accepted commits: record revisions and incarnations, fingerprints, intents, dependencies in other
 * scopes, atomicity, and operationId replay.
 */
import { describe, expect, it } from 'vitest';
import { fingerprint } from '../../core/canonical.js';
import {
  OperationIds,
  acquire,
  auditAfter,
  expectCommitted,
  expectFailure,
  expectRejected,
  lastSeq,
  put,
  tenantState,
} from './helpers.js';
import type { ConformanceSubject, SubjectFixture } from './subject.js';

const SCOPE = 'wf-1/memory';

/**
 * A resend under an operationId that has an outcome, with another body: operation_id_conflict, and
 * nothing applied; the first outcome stays stored.
 */
export async function operationIdConflict(subject: ConformanceSubject): Promise<void> {
  const { gate } = subject;
  const grant = await acquire(gate, SCOPE, 'w1');
  const first = await put(gate, grant, 'doc', 0, 'first', 'op-1');
  const before = await tenantState(gate);
  const seq = await lastSeq(gate);

  const error = await expectFailure(
    gate.commit({
      scope: SCOPE,
      fence: grant.fence,
      operationId: 'op-1',
      writes: [{ name: 'doc', expectRevision: 1, value: 'second' }],
    }),
    'operation_id_conflict',
  );
  expect(error.httpStatus).toBe(422);
  // The message says what to do, not only what happened.
  expect(error.message).toContain('send a new request under a new operationId');
  // The conflict is not an outcome of op-1: trying again conflicts again.
  await expectFailure(
    gate.commit({
      scope: SCOPE,
      fence: grant.fence,
      operationId: 'op-1',
      writes: [{ name: 'doc', expectRevision: 1, value: 'second' }],
    }),
    'operation_id_conflict',
  );
  expect(await tenantState(gate)).toEqual(before);
  expect(await gate.getOperation('op-1')).toEqual(first);
  const entries = await auditAfter(gate, seq);
  const conflict: unknown = expect.objectContaining({
    kind: 'commit',
    outcome: 'rejected',
    reason: 'operation_id_conflict',
    operationId: 'op-1',
  });
  expect(entries).toEqual([conflict, conflict]);
}

export function recordCases(fx: SubjectFixture): void {
  describe('records', () => {
    it('reads a record that never existed as exists false at revision 0', async () => {
      const { gate } = fx.subject;
      expect(await gate.getRecord(SCOPE, 'doc')).toMatchObject({
        scope: SCOPE,
        name: 'doc',
        exists: false,
        value: null,
        revision: 0,
        incarnation: 0,
        fingerprint: null,
      });
      expect(await gate.listRecords(SCOPE)).toEqual([]);
    });

    it('creates, updates, deletes and re-creates a record with revisions that never repeat', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1');
      const value = { summary: 'first', facts: [1, 2], nested: { b: 1, a: 2 } };

      const created = await put(gate, grant, 'doc', 0, value, ids.next());
      expect(created).toMatchObject({
        outcome: 'committed',
        scope: SCOPE,
        fence: grant.fence,
        intents: [],
        replayed: false,
      });
      expect(created.records).toEqual([
        { name: 'doc', revision: 1, incarnation: 1, fingerprint: fingerprint(value) },
      ]);
      expect(await gate.getRecord(SCOPE, 'doc')).toMatchObject({
        exists: true,
        value,
        revision: 1,
        incarnation: 1,
        fingerprint: fingerprint(value),
      });
      // The fingerprint is of the canonical JSON: key order does not matter.
      expect(fingerprint({ nested: { a: 2, b: 1 }, facts: [1, 2], summary: 'first' })).toBe(
        created.records[0]?.fingerprint,
      );

      const updated = await put(gate, grant, 'doc', 1, 'second', ids.next());
      expect(updated.records).toEqual([
        { name: 'doc', revision: 2, incarnation: 1, fingerprint: fingerprint('second') },
      ]);

      const deleted = expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          writes: [{ name: 'doc', expectRevision: 2, delete: true }],
        }),
      );
      expect(deleted.records).toEqual([
        { name: 'doc', revision: 3, incarnation: 1, fingerprint: null },
      ]);
      expect(await gate.getRecord(SCOPE, 'doc')).toMatchObject({
        exists: false,
        value: null,
        revision: 3,
        incarnation: 1,
        fingerprint: null,
      });

      const recreated = await put(gate, grant, 'doc', 3, 'third', ids.next());
      expect(recreated.records).toEqual([
        { name: 'doc', revision: 4, incarnation: 4, fingerprint: fingerprint('third') },
      ]);
      expect(await gate.getRecord(SCOPE, 'doc')).toMatchObject({
        exists: true,
        value: 'third',
        revision: 4,
        incarnation: 4,
      });
    });

    it('lists existing records and tombstones in name order', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1');
      await put(gate, grant, 'c', 0, 3, ids.next());
      await put(gate, grant, 'a', 0, 1, ids.next());
      await put(gate, grant, 'b', 0, 2, ids.next());
      expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          writes: [{ name: 'b', expectRevision: 1, delete: true }],
        }),
      );
      const records = await gate.listRecords(SCOPE);
      expect(records.map((record) => [record.name, record.exists, record.revision])).toEqual([
        ['a', true, 1],
        ['b', false, 2],
        ['c', true, 1],
      ]);
    });

    it('audits a commit with revisions and fingerprints, never the value', async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'w1');
      const secret = 'do-not-log-this-value-7f3a';
      const seq = await lastSeq(gate);
      const committed = expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: 'op-audit',
          taskId: 'task-9',
          writes: [{ name: 'doc', expectRevision: 0, value: { secret } }],
          intents: [{ effectKey: 'fx-1', target: 'crm', payload: { secret } }],
        }),
      );
      const entries = await auditAfter(gate, seq);
      expect(JSON.stringify(entries)).not.toContain(secret);
      const commit = entries.find((entry) => entry.kind === 'commit');
      expect(commit).toMatchObject({
        outcome: 'committed',
        scope: SCOPE,
        operationId: 'op-audit',
        taskId: 'task-9',
        holder: 'w1',
        fence: grant.fence,
        currentFence: grant.fence,
        records: [
          {
            name: 'doc',
            expected: 0,
            actual: 0,
            resulting: 1,
            fingerprint: committed.records[0]?.fingerprint,
            deleted: false,
          },
        ],
      });
    });

    it('stores intents pending, with their commit, and answers them', async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'w1');
      const committed = expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: 'op-intent',
          writes: [{ name: 'doc', expectRevision: 0, value: 'x' }],
          intents: [{ effectKey: 'notify-wf-1', target: 'crm-webhook', payload: { to: 'a' } }],
        }),
      );
      expect(committed.intents).toEqual([{ effectKey: 'notify-wf-1', status: 'pending' }]);
      expect(await gate.getIntent('notify-wf-1')).toMatchObject({
        effectKey: 'notify-wf-1',
        scope: SCOPE,
        target: 'crm-webhook',
        payload: { to: 'a' },
        status: 'pending',
        attempts: 0,
        fence: grant.fence,
        operationId: 'op-intent',
      });
      expect((await gate.listIntents({ scope: SCOPE })).items).toHaveLength(1);
      expect(await gate.getIntent('unknown-key')).toBeNull();
    });

    it('checks dependencies in other scopes of the tenant', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const policy = await acquire(gate, 'tenant/policy', 'admin');
      await put(gate, policy, 'rules', 0, { strict: true }, ids.next());
      const grant = await acquire(gate, SCOPE, 'w1');
      const committed = expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          reads: [
            { scope: 'tenant/policy', name: 'rules', revision: 1 },
            { name: 'absent', revision: 0 },
          ],
          writes: [{ name: 'doc', expectRevision: 0, value: 'checked' }],
        }),
      );
      expect(committed.records).toHaveLength(1);
    });

    it("audits a commit's dependency reads with the revision each had at the check", async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const policy = await acquire(gate, 'tenant/policy', 'admin');
      await put(gate, policy, 'rules', 0, { strict: true }, ids.next());
      await put(gate, policy, 'rules', 1, { strict: false }, ids.next());
      const grant = await acquire(gate, SCOPE, 'w1');
      const seq = await lastSeq(gate);
      const reads = [
        { scope: 'tenant/policy', name: 'rules', revision: 2 },
        { name: 'doc', revision: 0 },
      ];
      expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: 'op-fresh',
          reads,
          writes: [{ name: 'doc', expectRevision: 0, value: 'read, then written' }],
        }),
      );
      // Read at revision 1: stale; every dependency is audited, the stale one and the fresh one.
      const stale = await gate.commit({
        scope: SCOPE,
        fence: grant.fence,
        operationId: 'op-stale',
        reads: [
          { scope: 'tenant/policy', name: 'rules', revision: 1 },
          { name: 'doc', revision: 1 },
        ],
      });
      expect(stale).toMatchObject({ outcome: 'rejected', error: { code: 'stale_dependency' } });
      const [fresh, refused] = (await auditAfter(gate, seq)).filter((e) => e.kind === 'commit');
      expect(fresh).toMatchObject({
        operationId: 'op-fresh',
        reads: [
          { scope: 'tenant/policy', name: 'rules', expected: 2, actual: 2 },
          // The commit's own record, read before its write.
          { scope: SCOPE, name: 'doc', expected: 0, actual: 0 },
        ],
      });
      expect(refused).toMatchObject({
        operationId: 'op-stale',
        reason: 'stale_dependency',
        reads: [
          { scope: 'tenant/policy', name: 'rules', expected: 1, actual: 2 },
          { scope: SCOPE, name: 'doc', expected: 1, actual: 1 },
        ],
      });
      const noReads = (await auditAfter(gate)).find((e) => e.kind === 'commit' && e.reads === null);
      expect(noReads).toBeDefined();
    });

    it('applies all writes of a commit or none', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1');
      await put(gate, grant, 'b', 0, 'b1', ids.next());
      const before = await tenantState(gate);
      const result = await gate.commit({
        scope: SCOPE,
        fence: grant.fence,
        operationId: ids.next(),
        writes: [
          { name: 'a', expectRevision: 0, value: 'a1' },
          { name: 'b', expectRevision: 0, value: 'b2' },
        ],
        intents: [{ effectKey: 'fx-atomic', target: 'crm', payload: 1 }],
      });
      expectRejected(result, 'stale_revision');
      expect(await tenantState(gate)).toEqual(before);
      expect(await gate.getIntent('fx-atomic')).toBeNull();
    });
  });

  describe('operation replay', () => {
    it('answers a retried commit with its stored outcome, replayed, and changes nothing', async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'w1');
      const request = {
        scope: SCOPE,
        fence: grant.fence,
        operationId: 'op-1',
        taskId: 'task-1',
        writes: [{ name: 'doc', expectRevision: 0, value: 'once' }],
      };
      const first = expectCommitted(await gate.commit(request));
      // The state moves on; the replay still answers the first outcome, not a new check.
      await put(gate, grant, 'doc', 1, 'later', 'op-2');
      const before = await tenantState(gate);
      const seq = await lastSeq(gate);

      expect(await gate.commit(request)).toEqual({ ...first, replayed: true });
      expect(await gate.getOperation('op-1')).toEqual(first);
      expect(await tenantState(gate)).toEqual(before);
      const committedEntries = (await auditAfter(gate)).filter(
        (entry) => entry.operationId === 'op-1' && entry.outcome === 'committed',
      );
      expect(committedEntries).toHaveLength(1);
      expect(
        (await auditAfter(gate, seq)).filter((entry) => entry.outcome === 'committed'),
      ).toEqual([]);
    });

    it('answers a retried rejection with the stored rejection even when it would now commit', async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'w1');
      await gate.release({ scope: SCOPE, holder: 'w1', fence: grant.fence });
      const request = {
        scope: SCOPE,
        fence: 2,
        operationId: 'op-early',
        writes: [{ name: 'doc', expectRevision: 0, value: 'x' }],
      };
      const rejected = expectRejected(await gate.commit(request), 'stale_fence');
      await acquire(gate, SCOPE, 'w2');
      expect(await gate.commit(request)).toEqual({ ...rejected, replayed: true });
      expect((await gate.getRecord(SCOPE, 'doc')).exists).toBe(false);
    });

    it('reads an unknown operation as absent', async () => {
      const { gate } = fx.subject;
      expect(await gate.getOperation('never-sent')).toBeNull();
    });

    it('answers operation_id_conflict to the same operationId with another request', () =>
      operationIdConflict(fx.subject));
  });
}
