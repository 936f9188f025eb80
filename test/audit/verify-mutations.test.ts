/**
 * Mutation tests: a history written by a real store verifies clean, and each single fault a
 * broken store could make is reported as exactly one violation of the right kind at the right
 * entry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyHistory } from '../../src/audit/verify.js';
import type { ViolationKind } from '../../src/audit/violations.js';
import type { AuditEntry } from '../../src/types.js';
import { tempDir } from '../helpers/temp-dir.js';
import {
  append,
  driveStore,
  readAll,
  S1,
  S2,
  S3,
  TENANT,
  type StoreHistory,
} from './store-history.js';
import {
  acceptCommit,
  wouldWrite,
  commitIndex,
  copy,
  indexOf,
  misattribute,
  shiftFences,
  shiftRecord,
} from './tamper.js';

const dir = tempDir();
let history: StoreHistory;
let valid: AuditEntry[];

beforeAll(async () => {
  history = await driveStore(dir.path);
  valid = await readAll(history.gate);
});

afterAll(async () => {
  await history.gate.close();
  dir.cleanup();
});

function found(entries: AuditEntry[]): { kind: ViolationKind; seq: number }[] {
  return verifyHistory(entries).violations.map(({ kind, seq }) => ({ kind, seq }));
}

describe('verify on a real store history', () => {
  it('finds no violation in the untouched history', () => {
    const result = verifyHistory(valid);
    expect(result.violations).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.checked).toBe(valid.length);
    expect(result.lastSeq).toBe(valid.at(-1)!.seq);
    // The history really covers what the mutations below need.
    const kinds = new Set(valid.map((e) => `${e.kind}:${e.outcome}`));
    for (const needed of [
      'acquire:granted',
      'takeover:granted',
      'delete:ok',
      'cancel:ok',
      'release:ok',
      'renew:ok',
    ]) {
      expect(kinds).toContain(needed);
    }
  });

  it('reports an accepted stale commit', () => {
    const t = copy(valid);
    const i = commitIndex(t, 'a-stale');
    acceptCommit(t[i]!, wouldWrite(t, i, 'notes'));
    shiftRecord(t, i, { tenant: TENANT, scope: S1, name: 'notes' }, 1);
    const result = verifyHistory(t);
    expect(result.violations.map(({ kind, seq }) => ({ kind, seq }))).toEqual([
      { kind: 'stale_commit_accepted', seq: t[i]!.seq },
    ]);
    expect(result.violations[0]).toMatchObject({
      tenant: TENANT,
      scope: S1,
      expected: 2,
      found: 1,
    });
    expect(result.ok).toBe(false);
  });

  it("names the retired holder in a stale commit's entry, and reports any other", () => {
    const i = commitIndex(valid, 'a-stale');
    expect(valid[i]).toMatchObject({ outcome: 'rejected', holder: 'worker-a', fence: 1 });
    expect(valid[i]!.currentFence).toBe(2);
    for (const holder of ['worker-b', null]) {
      const t = copy(valid);
      misattribute(t[i]!, holder);
      expect(verifyHistory(t).violations).toEqual([
        expect.objectContaining({
          kind: 'fence_holder_mismatch',
          seq: t[i]!.seq,
          expected: 'worker-a',
          found: holder,
        }),
      ]);
    }
  });

  it("reports a released holder's late commit attributed to nobody", () => {
    const t = copy(valid);
    const i = commitIndex(t, 'b-after-release');
    expect(t[i]).toMatchObject({ outcome: 'rejected', holder: 'worker-b' });
    misattribute(t[i]!, null);
    expect(found(t)).toEqual([{ kind: 'fence_holder_mismatch', seq: t[i]!.seq }]);
  });

  it('does not judge the holder of a fence granted before its checkpoint', () => {
    const t = copy(valid);
    const i = commitIndex(t, 'a-stale');
    misattribute(t[i]!, 'worker-b');
    // Verified up to just before the stale commit: the grant of fence 1 is behind the checkpoint.
    const first = verifyHistory(t.slice(0, i));
    const second = verifyHistory(t.slice(i), first.checkpoint);
    expect(first.violations).toEqual([]);
    expect(second.violations).toEqual([]);
  });

  it('reports a repeated fence', () => {
    const t = copy(valid);
    const i = indexOf(t, (e) => e.kind === 'takeover' && e.holder === 'worker-b');
    t[i]!.currentFence = 1;
    shiftFences(t, i, { tenant: TENANT, scope: S1 }, 2, -1);
    expect(found(t)).toEqual([{ kind: 'fence_repeated', seq: t[i]!.seq }]);
  });

  it('reports a fence going backwards', () => {
    const t = copy(valid);
    const i = indexOf(
      t,
      (e) => e.kind === 'acquire' && e.outcome === 'granted' && e.holder === 'worker-c',
    );
    expect(t[i]!.currentFence).toBe(3);
    t[i]!.currentFence = 1;
    shiftFences(t, i, { tenant: TENANT, scope: S1 }, 3, -2);
    const result = verifyHistory(t);
    expect(result.violations.map(({ kind, seq }) => ({ kind, seq }))).toEqual([
      { kind: 'fence_regressed', seq: t[i]!.seq },
    ]);
    expect(result.violations[0]).toMatchObject({ expected: 3, found: 1 });
  });

  it('reports a skipped revision', () => {
    const t = copy(valid);
    const i = commitIndex(t, 'd-2');
    t[i]!.records![0]!.resulting = 9;
    shiftRecord(t, i, { tenant: TENANT, scope: S1, name: 'summary' }, 1);
    const result = verifyHistory(t);
    expect(result.violations.map(({ kind, seq }) => ({ kind, seq }))).toEqual([
      { kind: 'revision_skipped', seq: t[i]!.seq },
    ]);
    expect(result.violations[0]).toMatchObject({ record: 'summary', expected: 8, found: 9 });
  });

  it('reports a revision reused after delete and re-create (a store that lost the tombstone)', () => {
    const t = copy(valid);
    const i = commitIndex(t, 'd-1');
    const write = t[i]!.records![0]!;
    expect(write).toMatchObject({ name: 'summary', expected: 6, resulting: 7 });
    Object.assign(write, { expected: 0, actual: 0, resulting: 1 });
    shiftRecord(t, i, { tenant: TENANT, scope: S1, name: 'summary' }, -6);
    const result = verifyHistory(t);
    expect(result.violations.map(({ kind, seq }) => ({ kind, seq }))).toEqual([
      { kind: 'revision_reused', seq: t[i]!.seq },
    ]);
    expect(result.violations[0]).toMatchObject({ record: 'summary', expected: 7, found: 1 });
  });

  it('reports a revision reused without a delete', () => {
    const t = copy(valid);
    const i = commitIndex(t, 'c-1');
    const write = t[i]!.records![0]!;
    write.resulting = write.expected;
    shiftRecord(t, i, { tenant: TENANT, scope: S1, name: 'summary' }, -1);
    expect(found(t)).toEqual([{ kind: 'revision_reused', seq: t[i]!.seq }]);
  });

  it('reports a doubly delivered effect, per tenant', () => {
    const delivered = valid.find((e) => e.tenant === TENANT && e.outcome === 'delivered')!;
    // A second attempt (claim fence 2) delivering it again.
    const t = append(valid, [
      {
        tenant: TENANT,
        scope: delivered.scope,
        kind: 'intent',
        outcome: 'claimed',
        holder: 'd-2',
        fence: 2,
        effectKey: 'email-1',
      },
      {
        tenant: TENANT,
        scope: delivered.scope,
        kind: 'intent',
        outcome: 'delivered',
        holder: 'd-2',
        fence: 2,
        effectKey: 'email-1',
      },
    ]);
    expect(found(t)).toEqual([{ kind: 'effect_delivered_twice', seq: t.at(-1)!.seq }]);
    const result = verifyHistory(t);
    expect(result.violations[0]).toMatchObject({ effectKey: 'email-1', found: delivered.seq });
  });

  it('the history audits each commit dependency with the revision it had at the check', () => {
    const fresh = valid[commitIndex(valid, 'v7-dep')]!;
    const stale = valid[commitIndex(valid, 'v7-dep-stale')]!;
    expect(fresh.reads).toEqual([{ scope: S1, name: 'summary', expected: 8, actual: 8 }]);
    expect(stale).toMatchObject({
      outcome: 'rejected',
      reason: 'stale_dependency',
      reads: [{ scope: S1, name: 'summary', expected: 7, actual: 8 }],
    });
    expect(valid[commitIndex(valid, 'a-1')]!.reads).toBeNull();
  });

  it('reports a commit accepted with a stale dependency', () => {
    const t = copy(valid);
    const i = commitIndex(t, 'v7-dep-stale');
    acceptCommit(t[i]!);
    shiftRecord(t, i, { tenant: TENANT, scope: S3, name: 'facts' }, 1);
    const result = verifyHistory(t);
    expect(result.violations.map(({ kind, seq }) => ({ kind, seq }))).toEqual([
      { kind: 'stale_dependency_accepted', seq: t[i]!.seq },
    ]);
    expect(result.violations[0]).toMatchObject({ record: 'summary', expected: 8, found: 7 });
  });

  it('reports a dependency revision the history does not give the record', () => {
    const t = copy(valid);
    const i = commitIndex(t, 'v7-dep');
    t[i]!.reads![0]!.actual = 5;
    expect(found(t)).toEqual([{ kind: 'dependency_mismatch', seq: t[i]!.seq }]);
    // On a rejection too: it must report the revision in force.
    const r = copy(valid);
    const j = commitIndex(r, 'v7-dep-stale');
    r[j]!.reads![0]!.actual = 9;
    expect(found(r)).toEqual([{ kind: 'dependency_mismatch', seq: r[j]!.seq }]);
  });

  it('reports a delivery outcome no audited attempt produced (more deliveries than attempts)', () => {
    const delivered = valid.find((e) => e.tenant === TENANT && e.outcome === 'delivered')!;
    expect(delivered).toMatchObject({ effectKey: 'email-1', fence: 1 });
    // The attempt already ended delivered; a second outcome for the same claim fence.
    const again = append(valid, [
      {
        tenant: TENANT,
        scope: delivered.scope,
        kind: 'intent',
        outcome: 'failed',
        holder: 'd-1',
        fence: 1,
        effectKey: 'email-1',
      },
    ]);
    expect(found(again)).toEqual([{ kind: 'delivery_without_attempt', seq: again.at(-1)!.seq }]);
    // An outcome whose claim was never audited (the claim entry is missing).
    const t = copy(valid).filter(
      (e) => !(e.tenant === TENANT && e.outcome === 'claimed' && e.effectKey === 'email-1'),
    );
    const result = verifyHistory(t);
    expect(result.violations.map(({ kind, seq }) => ({ kind, seq }))).toEqual([
      { kind: 'delivery_without_attempt', seq: delivered.seq },
    ]);
    expect(result.violations[0]).toMatchObject({ effectKey: 'email-1', expected: 0, found: 1 });
  });

  it('reports a commit accepted after the lease expired', () => {
    const t = copy(valid);
    const i = commitIndex(t, 'e-late');
    acceptCommit(t[i]!);
    shiftRecord(t, i, { tenant: TENANT, scope: S2, name: 'state' }, 1);
    expect(found(t)).toEqual([{ kind: 'commit_after_lease_expiry', seq: t[i]!.seq }]);
  });

  it('reports a stale commit accepted after a cutover as its own kind', () => {
    const t = copy(valid);
    const i = commitIndex(t, 'v7-late');
    acceptCommit(t[i]!, wouldWrite(t, i, 'summary'));
    shiftRecord(t, i, { tenant: TENANT, scope: S3, name: 'summary' }, 1);
    const result = verifyHistory(t);
    expect(result.violations.map(({ kind, seq }) => ({ kind, seq }))).toEqual([
      { kind: 'stale_accepted_after_cutover', seq: t[i]!.seq },
    ]);
    expect(result.violations[0]).toMatchObject({ expected: 2, found: 1 });
  });

  it('reports a commit accepted after the holder released', () => {
    const t = copy(valid);
    const i = commitIndex(t, 'b-after-release');
    acceptCommit(t[i]!);
    shiftRecord(t, i, { tenant: TENANT, scope: S1, name: 'notes' }, 1);
    expect(found(t)).toEqual([{ kind: 'commit_without_holder', seq: t[i]!.seq }]);
  });

  it('reports a lost update (a write on a stale revision accepted)', () => {
    const t = copy(valid);
    const i = commitIndex(t, 'a-4');
    acceptCommit(t[i]!);
    shiftRecord(t, i, { tenant: TENANT, scope: S1, name: 'summary' }, 1);
    const result = verifyHistory(t);
    expect(result.violations.map(({ kind, seq }) => ({ kind, seq }))).toEqual([
      { kind: 'stale_write_accepted', seq: t[i]!.seq },
    ]);
    expect(result.violations[0]).toMatchObject({ record: 'summary', expected: 3, found: 2 });
  });

  it('reports a seq that does not increase', () => {
    const t = copy(valid);
    const i = commitIndex(t, 'c-1');
    t[i]!.seq = t[i - 1]!.seq;
    expect(found(t)).toEqual([{ kind: 'seq_not_increasing', seq: t[i]!.seq }]);
  });

  it('finds the same violations when the history is verified in two parts through a checkpoint', () => {
    const t = copy(valid);
    const i = commitIndex(t, 'a-stale');
    acceptCommit(t[i]!, wouldWrite(t, i, 'notes'));
    const whole = verifyHistory(t);
    for (let split = 0; split <= t.length; split++) {
      const first = verifyHistory(t.slice(0, split));
      const checkpoint = JSON.parse(JSON.stringify(first.checkpoint)) as typeof first.checkpoint;
      const second = verifyHistory(t.slice(split), checkpoint);
      expect([...first.violations, ...second.violations]).toEqual(whole.violations);
      expect(second.totalChecked).toBe(t.length);
      expect(second.totalViolations).toBe(whole.violationCount);
      expect(second.ok).toBe(false);
    }
  });
});
