/**
 * Hand-built histories for the violation kinds the store-driven mutations do not reach, the
 * checkpoint file format, and the synthetic generator the benchmark relies on.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  emptyCheckpoint,
  loadCheckpoint,
  parseCheckpoint,
  saveCheckpoint,
} from '../../src/audit/checkpoint.js';
import { GRANTS_KEPT_PER_SCOPE } from '../../src/audit/history-verifier.js';
import { generateHistory } from '../../src/audit/synthetic-history.js';
import { verifyHistory } from '../../src/audit/verify.js';
import { VIOLATION_KINDS, type ViolationKind } from '../../src/audit/violations.js';
import type { AuditEntry } from '../../src/types.js';
import { tempDir } from '../helpers/temp-dir.js';
import { append } from './store-history.js';

const dir = tempDir();
afterAll(() => dir.cleanup());

const S = 'wf/1';
const T0 = 1_700_000_000_000;

type Step = Parameters<typeof append>[1][number];

/** A worker holding S at fence 1 with a lease until T0 + 10 s, one committed record `r` at revision 1. */
function base(): AuditEntry[] {
  return append(
    [],
    [
      {
        at: T0,
        scope: S,
        kind: 'acquire',
        outcome: 'granted',
        holder: 'w1',
        currentFence: 1,
        leaseExpiresAt: T0 + 10_000,
      },
      {
        at: T0 + 1,
        scope: S,
        kind: 'commit',
        outcome: 'committed',
        holder: 'w1',
        fence: 1,
        currentFence: 1,
        records: [
          { name: 'r', expected: 0, actual: 0, resulting: 1, fingerprint: 'f', deleted: false },
        ],
      },
    ],
  );
}

function kindsOf(entries: AuditEntry[]): { kind: ViolationKind; seq: number }[] {
  return verifyHistory(entries).violations.map(({ kind, seq }) => ({ kind, seq }));
}

function expectOnly(entries: AuditEntry[], kind: ViolationKind): void {
  expect(kindsOf(entries)).toEqual([{ kind, seq: entries.at(-1)!.seq }]);
}

function then(...steps: Step[]): AuditEntry[] {
  return append(base(), steps);
}

describe('verify, violation kinds on hand-built histories', () => {
  it('accepts the base history', () => {
    expect(verifyHistory(base()).violations).toEqual([]);
  });

  it('acquire_over_live_lease', () => {
    expectOnly(
      then({
        at: T0 + 5,
        scope: S,
        kind: 'acquire',
        outcome: 'granted',
        holder: 'w2',
        currentFence: 2,
        leaseExpiresAt: T0 + 9,
      }),
      'acquire_over_live_lease',
    );
    // Once the lease ran out by store time, the same grant is fine.
    const expired = then({
      at: T0 + 10_000,
      scope: S,
      kind: 'acquire',
      outcome: 'granted',
      holder: 'w2',
      currentFence: 2,
      leaseExpiresAt: T0 + 20_000,
    });
    expect(kindsOf(expired)).toEqual([]);
  });

  it('stale_lease_op_accepted for renew and release, stale_accepted_after_cutover after a cutover', () => {
    const takeover: Step = {
      scope: S,
      kind: 'takeover',
      outcome: 'granted',
      holder: 'op',
      currentFence: 2,
      leaseExpiresAt: null,
    };
    expectOnly(
      then(takeover, {
        scope: S,
        kind: 'renew',
        outcome: 'ok',
        holder: 'w1',
        fence: 1,
        currentFence: 2,
        leaseExpiresAt: T0 + 20_000,
      }),
      'stale_lease_op_accepted',
    );
    expectOnly(
      then(takeover, { scope: S, kind: 'release', outcome: 'ok', fence: 1, currentFence: 2 }),
      'stale_lease_op_accepted',
    );
    const cutover: Step = { ...takeover, kind: 'cutover', policyVersion: 'v8' };
    expectOnly(
      then(cutover, { scope: S, kind: 'release', outcome: 'ok', fence: 1, currentFence: 2 }),
      'stale_accepted_after_cutover',
    );
    // Fence 2 was issued by the cutover itself: a commit presenting it after a later takeover is
    // stale, but not older than the cutover.
    expectOnly(
      then(
        cutover,
        { ...takeover, currentFence: 3 },
        { scope: S, kind: 'commit', outcome: 'committed', fence: 2, currentFence: 3, records: [] },
      ),
      'stale_commit_accepted',
    );
  });

  it('lease_op_by_non_holder', () => {
    expectOnly(
      then({
        scope: S,
        kind: 'renew',
        outcome: 'ok',
        holder: 'w2',
        fence: 1,
        currentFence: 1,
        leaseExpiresAt: T0 + 20_000,
      }),
      'lease_op_by_non_holder',
    );
    expectOnly(
      then(
        { scope: S, kind: 'release', outcome: 'ok', fence: 1, currentFence: 1 },
        {
          scope: S,
          kind: 'renew',
          outcome: 'ok',
          holder: 'w1',
          fence: 1,
          currentFence: 1,
          leaseExpiresAt: T0 + 20_000,
        },
      ),
      'lease_op_by_non_holder',
    );
    // Renewing an expired lease nobody replaced is allowed.
    expect(
      kindsOf(
        then({
          at: T0 + 50_000,
          scope: S,
          kind: 'renew',
          outcome: 'ok',
          holder: 'w1',
          fence: 1,
          currentFence: 1,
          leaseExpiresAt: T0 + 60_000,
        }),
      ),
    ).toEqual([]);
  });

  it('accepted_on_deleted_scope, and a takeover re-creating the scope continues from the tombstones', () => {
    const del: Step = {
      scope: S,
      kind: 'delete',
      outcome: 'ok',
      currentFence: 2,
      records: [
        { name: 'r', expected: 1, actual: 1, resulting: 2, fingerprint: null, deleted: true },
      ],
    };
    expectOnly(
      then(del, {
        scope: S,
        kind: 'commit',
        outcome: 'committed',
        holder: null,
        fence: 2,
        currentFence: 2,
        records: [],
      }),
      'accepted_on_deleted_scope',
    );
    expectOnly(
      then(del, { scope: S, kind: 'cancel', outcome: 'ok', currentFence: 3 }),
      'accepted_on_deleted_scope',
    );
    expectOnly(
      then(del, {
        scope: S,
        kind: 'acquire',
        outcome: 'granted',
        holder: 'w2',
        currentFence: 3,
        leaseExpiresAt: T0 + 20_000,
      }),
      'accepted_on_deleted_scope',
    );
    const recreated = then(
      del,
      {
        scope: S,
        kind: 'takeover',
        outcome: 'granted',
        holder: 'w2',
        currentFence: 3,
        leaseExpiresAt: null,
      },
      {
        scope: S,
        kind: 'commit',
        outcome: 'committed',
        holder: 'w2',
        fence: 3,
        currentFence: 3,
        records: [
          { name: 'r', expected: 2, actual: 2, resulting: 3, fingerprint: 'g', deleted: false },
        ],
      },
    );
    expect(kindsOf(recreated)).toEqual([]);
  });

  it('policy_changed_without_cutover, while a cutover may change the pin', () => {
    const pinned = append(
      [],
      [
        {
          at: T0,
          scope: S,
          kind: 'acquire',
          outcome: 'granted',
          holder: 'w1',
          policyVersion: 'v7',
          currentFence: 1,
          leaseExpiresAt: T0 + 10_000,
        },
      ],
    );
    const bad = append(pinned, [
      {
        scope: S,
        kind: 'takeover',
        outcome: 'granted',
        holder: 'op',
        policyVersion: 'v8',
        currentFence: 2,
        leaseExpiresAt: null,
      },
    ]);
    expectOnly(bad, 'policy_changed_without_cutover');
    const good = append(pinned, [
      {
        scope: S,
        kind: 'cutover',
        outcome: 'granted',
        holder: 'ctl',
        policyVersion: 'v8',
        currentFence: 2,
        leaseExpiresAt: null,
      },
      {
        scope: S,
        kind: 'commit',
        outcome: 'committed',
        holder: 'ctl',
        policyVersion: 'v8',
        fence: 2,
        currentFence: 2,
        records: [],
      },
    ]);
    expect(kindsOf(good)).toEqual([]);
    expectOnly(
      append(good, [
        {
          scope: S,
          kind: 'commit',
          outcome: 'committed',
          holder: 'ctl',
          policyVersion: 'v7',
          fence: 2,
          currentFence: 2,
          records: [],
        },
      ]),
      'policy_changed_without_cutover',
    );
  });

  it('holder_mismatch', () => {
    expectOnly(
      then({
        scope: S,
        kind: 'commit',
        outcome: 'committed',
        holder: 'w9',
        fence: 1,
        currentFence: 1,
        records: [],
      }),
      'holder_mismatch',
    );
    expectOnly(
      then({
        scope: S,
        kind: 'acquire',
        outcome: 'ok',
        holder: 'w9',
        currentFence: 1,
        leaseExpiresAt: T0 + 10_000,
      }),
      'holder_mismatch',
    );
  });

  it('fence_holder_mismatch', () => {
    const rejected = (holder: string | null, fence: number): Step => ({
      scope: S,
      kind: 'commit',
      outcome: 'rejected',
      reason: 'stale_fence',
      holder,
      fence,
      currentFence: 2,
      records: [],
    });
    const takeover: Step = {
      scope: S,
      kind: 'takeover',
      outcome: 'granted',
      holder: 'w2',
      currentFence: 2,
      leaseExpiresAt: T0 + 20_000,
    };
    // Fence 1 went to w1: its late commit names w1, never the current holder w2.
    expect(kindsOf(then(takeover, rejected('w1', 1)))).toEqual([]);
    expectOnly(then(takeover, rejected('w2', 1)), 'fence_holder_mismatch');
    // Fence 9 was never granted: its commit names nobody.
    expect(kindsOf(then(takeover, rejected(null, 9)))).toEqual([]);
    expectOnly(then(takeover, rejected('w1', 9)), 'fence_holder_mismatch');
  });

  it('fence_holder_mismatch only for the fences a scope was granted last', () => {
    const takeovers = Array.from({ length: GRANTS_KEPT_PER_SCOPE + 1 }, (_, i): Step => ({
      scope: S,
      kind: 'takeover',
      outcome: 'granted',
      holder: `w${i + 2}`,
      currentFence: i + 2,
      leaseExpiresAt: T0 + 20_000,
    }));
    const current = GRANTS_KEPT_PER_SCOPE + 2;
    const rejected = (fence: number): Step => ({
      scope: S,
      kind: 'commit',
      outcome: 'rejected',
      reason: 'stale_fence',
      holder: 'someone-else',
      fence,
      currentFence: current,
      records: [],
    });
    // Fence 1 (w1's) is older than the fences remembered: not judged.
    expect(kindsOf(then(...takeovers, rejected(1)))).toEqual([]);
    expectOnly(then(...takeovers, rejected(current - 1)), 'fence_holder_mismatch');
  });

  it('fence_mismatch and fence_regressed on entries that may not move the fence', () => {
    expectOnly(
      then({
        scope: S,
        kind: 'renew',
        outcome: 'ok',
        holder: 'w1',
        fence: 1,
        currentFence: 2,
        leaseExpiresAt: T0 + 20_000,
      }),
      'fence_mismatch',
    );
    expectOnly(
      then({
        scope: S,
        kind: 'commit',
        outcome: 'rejected',
        reason: 'stale_fence',
        fence: 0,
        currentFence: 5,
      }),
      'fence_mismatch',
    );
    expectOnly(
      then({
        scope: S,
        kind: 'acquire',
        outcome: 'rejected',
        reason: 'lease_held',
        currentFence: 0,
      }),
      'fence_regressed',
    );
  });

  it('accepts entries without a scope that change no scope', () => {
    expect(
      kindsOf(
        then(
          { scope: null, kind: 'commit', outcome: 'rejected', reason: 'operation_id_conflict' },
          { scope: null, kind: 'cutover', outcome: 'ok', reason: 'cutover-1 completed' },
        ),
      ),
    ).toEqual([]);
  });

  it('malformed_entry', () => {
    expectOnly(
      then({ scope: null, kind: 'acquire', outcome: 'granted', currentFence: 2 }),
      'malformed_entry',
    );
    expectOnly(
      then({ scope: S, kind: 'commit', outcome: 'granted', currentFence: 1 }),
      'malformed_entry',
    );
    expectOnly(
      then({ scope: S, kind: 'commit', outcome: 'committed', currentFence: 1, holder: 'w1' }),
      'malformed_entry',
    );
    expectOnly(then({ scope: S, kind: 'intent', outcome: 'delivered' }), 'malformed_entry');
    expectOnly(
      then({ scope: S, kind: 'intent', outcome: 'committed', effectKey: 'k' }),
      'malformed_entry',
    );
    expectOnly(
      then({ scope: S, kind: 'takeover', outcome: 'granted', holder: 'op' }),
      'malformed_entry',
    );
  });

  it('stale_dependency_accepted and dependency_mismatch', () => {
    const commitReading = (expected: number, actual: number): Step => ({
      at: T0 + 2,
      scope: S,
      kind: 'commit',
      outcome: 'committed',
      holder: 'w1',
      fence: 1,
      currentFence: 1,
      records: [],
      reads: [{ scope: S, name: 'r', expected, actual }],
    });
    expect(kindsOf(then(commitReading(1, 1)))).toEqual([]);
    expectOnly(then(commitReading(0, 0)), 'stale_dependency_accepted');
    expectOnly(then(commitReading(1, 2)), 'dependency_mismatch');
    // A dependency in another scope the history never wrote is at revision 0.
    expectOnly(
      then({
        ...commitReading(1, 1),
        reads: [{ scope: 'wf/2', name: 'x', expected: 0, actual: 3 }],
      }),
      'dependency_mismatch',
    );
  });

  it('delivery_without_attempt, and re-deliveries under rising claim fences are fine', () => {
    const intent = (outcome: AuditEntry['outcome'], fence: number | null): Step => ({
      scope: S,
      kind: 'intent',
      outcome,
      fence,
      currentFence: fence === null ? 1 : null,
      holder: fence === null ? null : 'd-1',
      effectKey: 'k',
    });
    // Created, attempt 1 ends unknown, attempt 2 delivers: one delivery, two attempts.
    const redelivered = then(
      intent('pending', null),
      intent('claimed', 1),
      intent('unknown', 1),
      intent('claimed', 2),
      intent('delivered', 2),
    );
    expect(kindsOf(redelivered)).toEqual([]);
    expectOnly(
      then(intent('pending', null), intent('delivered', null)),
      'delivery_without_attempt',
    );
    expectOnly(
      then(intent('pending', null), intent('claimed', 1), intent('failed', 2)),
      'delivery_without_attempt',
    );
    expectOnly(
      then(
        intent('pending', null),
        intent('claimed', 1),
        intent('pending', 1),
        intent('failed', 1),
      ),
      'delivery_without_attempt',
    );
  });

  it('keeps at most maxViolations details but counts them all', () => {
    const steps = Array.from({ length: 50 }, (): Step => ({
      scope: S,
      kind: 'intent',
      outcome: 'delivered',
      effectKey: 'same',
    }));
    const result = verifyHistory(append(base(), steps), undefined, { maxViolations: 10 });
    expect(result.violations).toHaveLength(10);
    expect(result.violationCount).toBe(49);
    expect(result.totalViolations).toBe(49);
  });

  it('every kind has a description', () => {
    for (const description of Object.values(VIOLATION_KINDS))
      expect(description.length).toBeGreaterThan(10);
  });
});

describe('verify checkpoints', () => {
  it('round-trips through a file and continues without re-reading history', async () => {
    const history = generateHistory({ entries: 5000, scopes: 50, seed: 7 });
    const first = verifyHistory(history.slice(0, 3000));
    const path = join(dir.path, 'checkpoint.json');
    await saveCheckpoint(path, first.checkpoint);
    const loaded = await loadCheckpoint(path);
    expect(loaded).toEqual(first.checkpoint);
    const second = verifyHistory(history.slice(3000), loaded!);
    expect(second).toMatchObject({
      ok: true,
      checked: 2000,
      totalChecked: 5000,
      lastSeq: history.at(-1)!.seq,
    });
    // The continued state equals the state of one run over everything.
    expect(second.checkpoint).toEqual(verifyHistory(history).checkpoint);
  });

  it('answers null for a missing file and invalid_request for a file that is not a checkpoint', async () => {
    expect(await loadCheckpoint(join(dir.path, 'absent.json'))).toBeNull();
    const bad = join(dir.path, 'bad.json');
    await writeFile(bad, '{"version": 1, "scopes": 3}');
    await expect(loadCheckpoint(bad)).rejects.toMatchObject({ code: 'invalid_request' });
    await writeFile(bad, 'not json');
    await expect(loadCheckpoint(bad)).rejects.toMatchObject({ code: 'invalid_request' });
    expect(() => parseCheckpoint({ ...emptyCheckpoint(), lastSeq: -1 })).toThrow(/lastSeq/);
  });

  it('keeps record names that are not safe object keys', async () => {
    const entries = append(
      [],
      [
        {
          scope: S,
          kind: 'acquire',
          outcome: 'granted',
          holder: 'w',
          currentFence: 1,
          leaseExpiresAt: null,
        },
        {
          scope: S,
          kind: 'commit',
          outcome: 'committed',
          holder: 'w',
          fence: 1,
          currentFence: 1,
          records: [
            {
              name: '__proto__',
              expected: 0,
              actual: 0,
              resulting: 1,
              fingerprint: 'f',
              deleted: false,
            },
          ],
        },
      ],
    );
    const path = join(dir.path, 'proto.json');
    await saveCheckpoint(path, verifyHistory(entries).checkpoint);
    const loaded = (await loadCheckpoint(path))!;
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual(loaded);
    const reused = append(entries, [
      {
        scope: S,
        kind: 'commit',
        outcome: 'committed',
        holder: 'w',
        fence: 1,
        currentFence: 1,
        records: [
          {
            name: '__proto__',
            expected: 0,
            actual: 0,
            resulting: 1,
            fingerprint: 'f',
            deleted: false,
          },
        ],
      },
    ]);
    expect(verifyHistory(reused.slice(2), loaded).violations.map((v) => v.kind)).toEqual([
      'revision_reused',
    ]);
  });
});

describe('synthetic histories', () => {
  it('are valid for any seed and size, and stay valid across any checkpoint split', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 1, max: 3000 }),
        fc.nat(),
        (seed, size, at) => {
          const history = generateHistory({ entries: size, scopes: 20, records: 3, seed });
          const split = at % (history.length + 1);
          const first = verifyHistory(history.slice(0, split));
          const second = verifyHistory(history.slice(split), first.checkpoint);
          expect(first.violations).toEqual([]);
          expect(second.violations).toEqual([]);
          expect(second.totalChecked).toBe(history.length);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('reports one violation for one bumped revision anywhere in them', () => {
    const history = generateHistory({ entries: 20_000, scopes: 100, seed: 3 });
    fc.assert(
      fc.property(fc.nat(), (pick) => {
        const commits = history.filter((e) => e.kind === 'commit' && e.outcome === 'committed');
        const target = commits[pick % commits.length]!;
        const tampered = history.map((e) => (e === target ? structuredClone(e) : e));
        const entry = tampered.find((e) => e.seq === target.seq)!;
        const write = entry.records![0]!;
        write.resulting = write.resulting! + 1;
        // The store carries on from the skipped revision.
        for (const later of tampered) {
          if (
            later.seq <= entry.seq ||
            later.tenant !== entry.tenant ||
            later.scope !== entry.scope
          )
            continue;
          if (!later.records?.some((r) => r.name === write.name && r.resulting !== null)) continue;
          const copy = structuredClone(later);
          for (const r of copy.records!) {
            if (r.name === write.name && r.resulting !== null) {
              r.expected += 1;
              r.resulting += 1;
            }
          }
          tampered[tampered.indexOf(later)] = copy;
        }
        expect(kindsOf(tampered)).toEqual([{ kind: 'revision_skipped', seq: entry.seq }]);
      }),
      { numRuns: 30 },
    );
  });
});

describe('docs/verify.md', () => {
  it('lists every violation kind with the description of src/audit/violations.ts', async () => {
    const doc = await readFile(new URL('../../docs/verify.md', import.meta.url), 'utf8');
    // Table cells may be padded by the formatter.
    const rows = new Map<string, string>();
    for (const match of doc.matchAll(/^\| `([a-z_]+)` +\| (.+?) +\|$/gm))
      rows.set(match[1]!, match[2]!);
    expect(Object.fromEntries(rows)).toEqual(VIOLATION_KINDS);
  });
});
