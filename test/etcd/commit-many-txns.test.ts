/**
 * A `commitMany` on etcd that cannot be one Txn: 46 commits under a member started with
 * `--max-txn-ops 16` (so etcd itself refuses a Txn that oversteps), three of them on one scope
 * (each must see the one before), one reading a record an earlier item writes, replays inside the
 * batch and of a commit made before it, a reused operationId, a stale fence and an item too wide
 * for any Txn. Every item is answered exactly as the same commits sent one at a time to a store
 * without group commit (same history, same clock, on another prefix of the member), in order; the
 * commits land in several Txns, those of one scope in the order sent; each scope's audit log,
 * records and intents read the same on both stores, and both verify clean.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { isFencegateError } from '../../src/errors.js';
import { Fencegate } from '../../src/gate.js';
import { EtcdConnection } from '../../src/store/etcd/etcd-connection.js';
import { AUDIT_SLOTS } from '../../src/store/etcd/etcd-engine.js';
import { EtcdStore } from '../../src/store/etcd/etcd-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { AuditEntry, CommitItemResult, CommitRequest } from '../../src/types.js';
import { skipWithoutEtcd } from '../helpers/stores/etcd.js';
import { startEtcdCluster, type EtcdCluster } from './etcd-service.js';

const noEtcd = skipWithoutEtcd();

const MAX_TXN_OPS = 16;
const SCOPES = 40;
const clock = new ManualClock();
let member: EtcdCluster | null = null;
let batched: Fencegate;
let alone: Fencegate;

beforeAll(async () => {
  if (noEtcd) return;
  member = await startEtcdCluster(1, undefined, ['--max-txn-ops', String(MAX_TXN_OPS)]);
  const open = async (prefix: string, groupCommit: boolean) =>
    Fencegate.open({
      store: await EtcdStore.open({
        url: `${member!.url}?prefix=${prefix}`,
        clock,
        groupCommit,
        limits: { maxTxnOps: MAX_TXN_OPS },
      }),
    });
  batched = await open('batched', true);
  alone = await open('alone', false);
});

afterAll(async () => {
  if (noEtcd) return;
  for (const gate of [batched, alone]) {
    expect((await verifyStore(gate.store)).violations).toEqual([]);
    await gate.close();
  }
  await member?.stop();
});

const scope = (i: number) => `s${String(i).padStart(2, '0')}`;

/** The same history on each store: the scopes granted, one taken over, one commit made. */
async function history(gate: Fencegate): Promise<void> {
  for (let i = 0; i < SCOPES; i += 1) {
    await gate.acquire({ scope: scope(i), holder: 'w', ttlMs: 600_000 });
  }
  await gate.acquire({ scope: 'taken', holder: 'w', ttlMs: 600_000 });
  await gate.takeover('taken', { holder: 'v', ttlMs: 600_000, reason: 'test' });
  expect((await gate.commit(BEFORE)).outcome).toBe('committed');
  clock.advance(1_000);
}

const BEFORE: CommitRequest = {
  scope: scope(SCOPES - 1),
  fence: 1,
  operationId: 'before',
  writes: [{ name: 'r', expectRevision: 0, value: 'before' }],
};

/** One commit per scope but the last, each writing its record `r`; every eighth adds an intent. */
const FIRST: CommitRequest[] = Array.from({ length: SCOPES - 2 }, (_, i) => ({
  scope: scope(i),
  fence: 1,
  operationId: `c-${i}`,
  writes: [{ name: 'r', expectRevision: 0, value: i }],
  intents: i % 8 === 0 ? [{ effectKey: `fx-${i}`, target: 'hook', payload: { i } }] : [],
}));

const BATCH: CommitRequest[] = [
  ...FIRST,
  // The first scope twice more: the second item sees the first's write, the third the second's.
  {
    scope: scope(0),
    fence: 1,
    operationId: 'c-0-second',
    writes: [{ name: 'r', expectRevision: 1, value: 'second' }],
  },
  {
    scope: scope(0),
    fence: 1,
    operationId: 'c-0-third',
    writes: [{ name: 'r', expectRevision: 1, value: 'third' }],
  },
  // The same commit as an earlier item: its retry.
  FIRST[1]!,
  // Another commit under an earlier item's operationId.
  { ...FIRST[2]!, writes: [{ name: 'other', expectRevision: 0, value: 1 }] },
  // A commit applied before the batch, sent again.
  BEFORE,
  // The fence the takeover replaced.
  { ...FIRST[3]!, scope: 'taken', operationId: 'stale' },
  // Reads the record an earlier item writes, at the revision that item gives it.
  {
    scope: scope(SCOPES - 2),
    fence: 1,
    operationId: 'dependent',
    reads: [{ scope: scope(4), name: 'r', revision: 1 }],
    writes: [{ name: 'r', expectRevision: 0, value: 'dependent' }],
  },
  // More writes than one Txn holds.
  {
    scope: scope(5),
    fence: 1,
    operationId: 'too-wide',
    writes: Array.from({ length: MAX_TXN_OPS + 4 }, (_, i) => ({
      name: `w${i}`,
      expectRevision: 0,
      value: i,
    })),
  },
];

/**
 * Runs `work`, and answers the keys of each Txn it sent while another Txn that writes them was in
 * flight (observed on the connection; the real etcd answers each Txn). A Txn that compares a key
 * an unsettled Txn writes planned on the row before that write, and may land before it.
 */
async function keysRacedIn(work: () => Promise<unknown>): Promise<string[]> {
  const raced: string[] = [];
  const inFlight = new Set<Set<string>>();
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back as it was, and called with its own `this`
  const writeTxn = EtcdConnection.prototype.writeTxn;
  EtcdConnection.prototype.writeTxn = async function (this: EtcdConnection, request) {
    const written = new Set<string>();
    for (const op of request.success ?? []) {
      const key = op.request_put?.key ?? op.request_delete_range?.key;
      if (key !== undefined) written.add(key.toString());
    }
    const compared = (request.compare ?? []).flatMap((c) => (c.key === undefined ? [] : [c.key]));
    const touched = [...written, ...compared.map((key) => key.toString())];
    for (const other of inFlight) raced.push(...touched.filter((key) => other.has(key)));
    inFlight.add(written);
    try {
      return await writeTxn.call(this, request);
    } finally {
      inFlight.delete(written);
    }
  };
  try {
    await work();
  } finally {
    EtcdConnection.prototype.writeTxn = writeTxn;
  }
  return raced;
}

/** An item as a comparable value: the result, or the error's code, message and details. */
function plain(item: CommitItemResult): unknown {
  if (item.ok) return item.result;
  const { code, message, details } = item.error;
  return { code, message, details };
}

/** The commits one at a time, each answered as commitMany answers an item. */
async function oneAtATime(gate: Fencegate, requests: CommitRequest[]): Promise<CommitItemResult[]> {
  const items: CommitItemResult[] = [];
  for (const request of requests) {
    try {
      items.push({ ok: true, result: await gate.commit(request) });
    } catch (error) {
      if (!isFencegateError(error)) throw error;
      items.push({ ok: false, error });
    }
  }
  return items;
}

function summary(item: CommitItemResult): string {
  if (!item.ok) return item.error.code;
  const { result } = item;
  if (result.outcome === 'rejected') return result.error.code;
  return result.replayed ? 'replayed' : 'committed';
}

/**
 * Each scope's audit entries in order, without their seq (each store numbers its own); refusals
 * of a reused operationId apart, as a set: such a refusal reads only the operation's row, so it
 * lands wherever its turn comes.
 */
function byScope(entries: AuditEntry[]) {
  const scopes = new Map<string, unknown[]>();
  const reused: string[] = [];
  for (const { seq: _seq, ...entry } of entries) {
    if (entry.reason === 'operation_id_conflict') {
      reused.push(JSON.stringify(entry));
      continue;
    }
    const list = scopes.get(entry.scope ?? '') ?? [];
    list.push(entry);
    scopes.set(entry.scope ?? '', list);
  }
  return { scopes: [...scopes].sort(([x], [y]) => (x < y ? -1 : 1)), reused: reused.sort() };
}

async function everything(gate: Fencegate) {
  const audit = (await gate.audit({ limit: 1000 })).items;
  const records = [];
  for (let i = 0; i < SCOPES; i += 1) records.push(await gate.listRecords(scope(i)));
  const intents = (await gate.listIntents({ limit: 100 })).items;
  return { audit: byScope(audit), records, intents };
}

describe.skipIf(noEtcd)('a commitMany on etcd larger than one Txn', () => {
  it('answers every item as alone, in order, across several Txns', async () => {
    const start = clock.now();
    await history(batched);
    clock.set(start);
    await history(alone);
    const at = clock.now();
    const before = Math.max(...(await batched.audit({ limit: 1000 })).items.map((e) => e.seq));

    let items: CommitItemResult[] = [];
    const raced = await keysRacedIn(async () => {
      items = await batched.commitMany(BATCH);
    });
    clock.set(at);
    const expected = await oneAtATime(alone, BATCH);

    expect(items.map(summary)).toEqual([
      ...FIRST.map(() => 'committed'),
      'committed',
      'stale_revision',
      'replayed',
      'operation_id_conflict',
      'replayed',
      'stale_fence',
      'committed',
      'invalid_request',
    ]);
    expect(items.map(plain)).toEqual(expected.map(plain));
    // An item that shares a key with an earlier one is sent once that one's Txn settled.
    expect(raced).toEqual([]);

    // The commits took several Txns (an entry's seq carries its Txn's revision), and those of
    // one scope, or reading another's record, landed after the ones they depend on.
    const entries = (await batched.audit({ kind: 'commit', limit: 1000 })).items.filter(
      (e) => e.seq > before,
    );
    const txnOf = (operationId: string) => {
      const entry = entries.find(
        (e) => e.operationId === operationId && e.reason !== 'operation_id_conflict',
      );
      expect(entry, operationId).toBeDefined();
      return Math.floor(entry!.seq / AUDIT_SLOTS);
    };
    expect(new Set(entries.map((e) => Math.floor(e.seq / AUDIT_SLOTS))).size).toBeGreaterThan(1);
    expect(txnOf('c-0')).toBeLessThan(txnOf('c-0-second'));
    expect(txnOf('c-0-second')).toBeLessThan(txnOf('c-0-third'));
    expect(txnOf('c-4')).toBeLessThan(txnOf('dependent'));

    expect(await everything(batched)).toEqual(await everything(alone));
    expect((await batched.getRecord(scope(0), 'r')).value).toBe('second');
  });

  it("keeps one scope's commits in order behind another tenant's backlog, when several batches run at once", async () => {
    // Another tenant's writes fill the queue, so the batch's items spread over batches that run
    // side by side: a later commit of a scope must still plan on, and land after, the one before.
    const other = batched.forTenant('backlog');
    const grants = [];
    for (let i = 0; i < 120; i += 1) {
      grants.push(await other.acquire({ scope: `b${i}`, holder: 'w', ttlMs: 600_000 }));
    }
    const chain = await batched.acquire({ scope: 'chain', holder: 'w', ttlMs: 600_000 });
    const backlog = grants.map((grant, i) =>
      other.commit({
        scope: grant.scope,
        fence: grant.fence,
        operationId: `backlog-${i}`,
        writes: [{ name: 'r', expectRevision: 0, value: i }],
      }),
    );
    const items = Array.from({ length: 12 }, (_, n) => ({
      scope: 'chain',
      fence: chain.fence,
      operationId: `chain-${n}`,
      writes: [{ name: 'r', expectRevision: n, value: n }],
    }));
    const answers = await batched.commitMany(items);
    // More than one batch's share of a tenant (8), so the scope's commits span batches.
    expect(answers.map((answer) => answer.ok && answer.result.outcome)).toEqual(
      items.map(() => 'committed'),
    );
    expect(await batched.getRecord('chain', 'r')).toMatchObject({ revision: 12, value: 11 });
    for (const answer of await Promise.all(backlog)) expect(answer.outcome).toBe('committed');
  });
});
