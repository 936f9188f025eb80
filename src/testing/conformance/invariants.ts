/**
 * The invariants every store adapter keeps (docs/adapters.md, "Invariants an adapter keeps") that
 * no other case states on its own: one audit seq for the whole store, a log read by `afterSeq`
 * that never shows a hole filled later, and decisions judged by the store clock when they apply.
 * The fourth, a lost answer resent under its operationId, is checked by A6 (acceptance.ts) and by
 * the operation_id_conflict case (records.ts). Each check takes a subject, so a test can run it
 * against a store that breaks the invariant and see it fail.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../types.js';
import { acquire, auditAfter, expectRejected, put } from './helpers.js';
import type { ConformanceGate, ConformanceSubject, SubjectFixture } from './subject.js';

/** Scopes written at once per tenant, and commits per scope: enough to interleave every store. */
const WRITERS = 4;
const COMMITS = 6;
/** A small page, so the reader pages many times while the writers run. */
const PAGE = 5;

/** One worker's scope: a grant, then COMMITS commits of distinct records, one after another. */
async function writeScope(gate: ConformanceGate, scope: string): Promise<void> {
  const grant = await acquire(gate, scope, 'w1');
  for (let i = 0; i < COMMITS; i++) await put(gate, grant, `doc-${i}`, 0, i, `${scope}-op-${i}`);
}

/** WRITERS scopes of each tenant written at once. */
function writeConcurrently(subject: ConformanceSubject, prefix: string): Promise<void[]> {
  const scopes = Array.from({ length: WRITERS }, (_, i) => `${prefix}-${i}/memory`);
  return Promise.all(
    [subject.gate, subject.other].flatMap((gate) => scopes.map((scope) => writeScope(gate, scope))),
  );
}

function expectIncreasing(entries: readonly AuditEntry[]): void {
  const seqs = entries.map((entry) => entry.seq);
  for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1]!);
}

/**
 * Audit seq is global and strictly increasing: concurrent commits of two tenants never share a
 * seq, and an entry appended after a read has a seq above every entry that read returned.
 */
export async function auditSeqIsGlobal(subject: ConformanceSubject): Promise<void> {
  const { gate, other } = subject;
  await writeConcurrently(subject, 'seq');
  const mine = await auditAfter(gate);
  const theirs = await auditAfter(other);
  expect(mine).toHaveLength(WRITERS * (COMMITS + 1));
  expect(theirs).toHaveLength(WRITERS * (COMMITS + 1));
  expectIncreasing(mine);
  expectIncreasing(theirs);
  const mineSeqs = new Set(mine.map((entry) => entry.seq));
  expect(theirs.filter((entry) => mineSeqs.has(entry.seq))).toEqual([]);

  const highestRead = Math.max(...mineSeqs, ...theirs.map((entry) => entry.seq));
  await Promise.all([
    acquire(gate, 'seq-late/memory', 'w1'),
    acquire(other, 'seq-late/memory', 'w1'),
  ]);
  const later = [
    ...(await auditAfter(gate, mine.at(-1)!.seq)),
    ...(await auditAfter(other, theirs.at(-1)!.seq)),
  ];
  expect(later).toHaveLength(2);
  for (const entry of later) expect(entry.seq).toBeGreaterThan(highestRead);
}

/**
 * A reader never pages past an entry still in flight: following `afterSeq` cursors while both
 * tenants commit at once, the reader reads exactly the log as it stands afterwards, in order, so
 * no entry ever appeared below a seq it had already been given.
 */
export async function auditReaderSeesNoHole(subject: ConformanceSubject): Promise<void> {
  const { gate } = subject;
  let writing = true;
  const writers = writeConcurrently(subject, 'hole').finally(() => {
    writing = false;
  });
  const read: AuditEntry[] = [];
  let afterSeq = 0;
  for (;;) {
    // Read after learning whether the writers are done: a last empty page then proves the end.
    const done = !writing;
    const page = await gate.audit({ afterSeq, limit: PAGE });
    read.push(...page.items);
    const last = page.items.at(-1);
    if (last !== undefined) afterSeq = Math.max(page.nextAfterSeq ?? last.seq, last.seq);
    else if (done) break;
    // Caught up while the writers run: let them write before the next page.
    else await nextTurn();
  }
  await writers;
  expectIncreasing(read);
  expect(read).toEqual(await auditAfter(gate));
  expect(read).toHaveLength(WRITERS * (COMMITS + 1));
}

/**
 * A decision is judged by the store clock when it applies, not by an earlier reading of it: a
 * lease live at its last millisecond accepts a commit; from its expiry on, a commit is rejected
 * `lease_expired`, though the store's previous reading still had the lease live.
 */
export async function storeClockJudgesAtApply(subject: ConformanceSubject): Promise<void> {
  const { gate } = subject;
  const scope = 'clock/memory';
  const grant = await acquire(gate, scope, 'w1', { ttlMs: 5_000 });
  const state = await gate.getScope(scope);
  const expiresAt = grant.leaseExpiresAt!;
  // The clock has not moved since the grant, whose store time the scope's updatedAt is.
  const remaining = expiresAt - state!.updatedAt;

  await subject.advanceClock(remaining - 1);
  const lastMoment = await put(gate, grant, 'doc', 0, 'at the last ms', 'clock-op-1');
  await subject.advanceClock(1);
  const late = await gate.commit({
    scope,
    fence: grant.fence,
    operationId: 'clock-op-2',
    writes: [{ name: 'doc', expectRevision: 1, value: 'after expiry' }],
  });
  expect(expectRejected(late, 'lease_expired').error.details).toMatchObject({
    leaseExpiresAt: expiresAt,
  });
  expect(await gate.getRecord(scope, 'doc')).toMatchObject({ value: 'at the last ms' });

  const entries = await auditAfter(gate);
  const atOf = (operationId: string) =>
    entries.find((entry) => entry.operationId === operationId)!.at;
  expect(atOf(lastMoment.operationId)).toBeLessThan(expiresAt);
  expect(atOf('clock-op-2')).toBeGreaterThanOrEqual(expiresAt);
}

export function invariantCases(fx: SubjectFixture): void {
  describe('adapter invariants', () => {
    it('audit seq is global and strictly increasing across tenants and concurrent commits', () =>
      auditSeqIsGlobal(fx.subject));
    it('an audit reader following afterSeq during concurrent commits never sees a hole filled later', () =>
      auditReaderSeesNoHole(fx.subject));
    it('the store clock judges a lease when the decision applies, not an earlier reading', () =>
      storeClockJudgesAtApply(fx.subject));
  });
}
