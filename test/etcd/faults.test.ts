/**
 * Faults on a 3-member etcd cluster of its own, each case ending with verify and 0 stale accepted:
 * the leader SIGKILLed under load, a minority member frozen with SIGSTOP, two of three members
 * killed (every call fails closed with store_unavailable within its deadline) and restarted, every
 * member frozen (a commit that reached one is outcome_unknown until getOperation settles it), and a
 * lease across a leader change. Workers retry a call that failed with the same operationId, so an acknowledged commit is
 * counted once, and a commit whose answer was lost resolves to its stored outcome.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { Fencegate } from '../../src/gate.js';
import { EtcdStore } from '../../src/store/etcd/etcd-store.js';
import { isFencegateError } from '../../src/errors.js';
import { FAULT_TIMERS, startEtcdCluster, type EtcdCluster } from './etcd-service.js';
import { skipWithoutEtcd } from '../helpers/stores/etcd.js';

/** The whole file is skipped, and reported, on a machine without etcd. */
const noEtcd = skipWithoutEtcd();

const CALL_TIMEOUT_MS = 700;
const OPERATION_TIMEOUT_MS = 3_000;

let cluster: EtcdCluster | null = null;
const gates: Fencegate[] = [];

afterEach(async () => {
  for (const gate of gates.splice(0)) await gate.close();
  await cluster?.stop();
  cluster = null;
});

async function open(): Promise<{ cluster: EtcdCluster; gate: Fencegate }> {
  cluster = await startEtcdCluster(3, FAULT_TIMERS);
  const store = await EtcdStore.open({
    url: `${cluster.url}?prefix=faults`,
    groupCommit: true,
    callTimeoutMs: CALL_TIMEOUT_MS,
    operationTimeoutMs: OPERATION_TIMEOUT_MS,
  });
  const gate = await Fencegate.open({ store });
  gates.push(gate);
  return { cluster, gate };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The call's answer once the store answers again (store_unavailable meanwhile). */
async function answered<T>(call: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i += 1) {
    try {
      return await call();
    } catch (error) {
      if (i >= 50 || !isFencegateError(error) || error.code !== 'store_unavailable') throw error;
      await sleep(200);
    }
  }
}

interface WorkerTally {
  committed: number;
  /** Commits acknowledged after `mark` was set. */
  committedAfterMark: number;
  errors: string[];
}

/** One worker per scope commits revision after revision until `stop` is set. */
async function worker(
  gate: Fencegate,
  scope: string,
  control: { stop: boolean; mark: boolean },
): Promise<WorkerTally> {
  const tally: WorkerTally = { committed: 0, committedAfterMark: 0, errors: [] };
  const grant = await gate.acquire({ scope, holder: `worker-${scope}`, ttlMs: 3_600_000 });
  let revision = 0;
  for (let n = 1; !control.stop; n += 1) {
    const request = {
      scope,
      fence: grant.fence,
      operationId: `${scope}-op-${n}`,
      writes: [{ name: 'counter', expectRevision: revision, value: n }],
    };
    // The same request until it is answered: a lost answer is replayed from the store.
    for (;;) {
      try {
        const result = await gate.commit(request);
        expect(result.outcome, JSON.stringify(result)).toBe('committed');
        revision += 1;
        tally.committed += 1;
        if (control.mark) tally.committedAfterMark += 1;
        break;
      } catch (error) {
        if (!isFencegateError(error)) throw error;
        tally.errors.push(error.code);
        expect(['store_unavailable', 'outcome_unknown']).toContain(error.code);
        await sleep(50);
      }
    }
  }
  const record = await gate.getRecord(scope, 'counter');
  // No acknowledged commit lost, none applied twice.
  expect(record.revision).toBe(tally.committed);
  return tally;
}

async function underLoad(
  gate: Fencegate,
  fault: () => Promise<void>,
  settleMs: number,
): Promise<WorkerTally[]> {
  const control = { stop: false, mark: false };
  const workers = Array.from({ length: 6 }, (_, i) => worker(gate, `w${i}`, control));
  await sleep(500);
  await fault();
  control.mark = true;
  await sleep(settleMs);
  control.stop = true;
  return Promise.all(workers);
}

async function expectVerified(gate: Fencegate): Promise<void> {
  const result = await verifyStore(gate.store);
  expect(result.violations).toEqual([]);
  expect(result.checked).toBeGreaterThan(0);
}

describe.skipIf(noEtcd)('etcd faults on three members', () => {
  it(
    'SIGKILL of the leader under load: commits go on after the election, none lost',
    { timeout: 60_000 },
    async () => {
      const { cluster, gate } = await open();
      const tallies = await underLoad(gate, () => cluster.kill(cluster.leader()), 3_000);
      expect(tallies.reduce((sum, t) => sum + t.committedAfterMark, 0)).toBeGreaterThan(0);
      // A stale holder after the election: a takeover moves the fence, the old grant is refused.
      const taken = await gate.takeover('w0', { holder: 'operator', reason: 'after the election' });
      const stale = await gate.commit({
        scope: 'w0',
        fence: taken.fence - 1,
        operationId: 'stale-after-election',
        writes: [{ name: 'counter', expectRevision: tallies[0]?.committed ?? 0, value: 'stale' }],
      });
      expect(stale.outcome).toBe('rejected');
      await expectVerified(gate);
    },
  );

  it(
    'SIGSTOP of a minority member changes nothing about correctness',
    { timeout: 60_000 },
    async () => {
      const { cluster, gate } = await open();
      const leader = cluster.leader();
      const follower = cluster.members.find((member) => member !== leader);
      if (follower === undefined) throw new Error('no follower');
      const tallies = await underLoad(gate, () => Promise.resolve(cluster.pause(follower)), 3_000);
      cluster.resume(follower);
      expect(tallies.reduce((sum, t) => sum + t.committedAfterMark, 0)).toBeGreaterThan(0);
      await expectVerified(gate);
    },
  );

  it(
    'two of three killed: every call answers store_unavailable within its deadline; restarted, service resumes',
    { timeout: 60_000 },
    async () => {
      const { cluster, gate } = await open();
      const grant = await gate.acquire({ scope: 'quorum', holder: 'w', ttlMs: 3_600_000 });
      const [first, second, survivor] = cluster.members;
      if (first === undefined || second === undefined || survivor === undefined) {
        throw new Error('no members');
      }
      await cluster.kill(first);
      await cluster.kill(second);
      // The survivor notices within its election timeout that it has no leader.
      for (let i = 0; i < 100 && cluster.hasLeader(survivor); i += 1) await sleep(100);
      expect(cluster.hasLeader(survivor)).toBe(false);
      const commit = {
        scope: 'quorum',
        fence: grant.fence,
        operationId: 'during-loss',
        writes: [{ name: 'r', expectRevision: 0, value: 1 }],
      };
      const calls: [string, () => Promise<unknown>][] = [
        ['commit', () => gate.commit(commit)],
        ['acquire', () => gate.acquire({ scope: 'other', holder: 'w', ttlMs: 60_000 })],
        [
          'renew',
          () => gate.renew({ scope: 'quorum', fence: grant.fence, holder: 'w', ttlMs: 60_000 }),
        ],
        ['takeover', () => gate.takeover('quorum', { holder: 'operator', reason: 'loss' })],
        ['getScope', () => gate.getScope('quorum')],
        ['getOperation', () => gate.getOperation('during-loss')],
        ['audit', () => gate.audit({})],
      ];
      for (const [name, call] of calls) {
        const started = Date.now();
        const error = await call().then(
          () => null,
          (caught: unknown) => caught,
        );
        const elapsed = Date.now() - started;
        expect(isFencegateError(error), `${name} must fail`).toBe(true);
        if (!isFencegateError(error)) continue;
        // Every member left refuses before proposing: nothing was applied, and the answer says so.
        expect(error.code, `${name}: ${error.message}`).toBe('store_unavailable');
        expect(error.message).toContain('nothing was changed');
        expect(elapsed, `${name} answered within its deadline`).toBeLessThan(
          OPERATION_TIMEOUT_MS + 1_000,
        );
      }
      await cluster.restart(first);
      await cluster.restart(second);
      // Members that failed are skipped for a second: the first answer may take that long.
      const stored = await answered(() => gate.getOperation('during-loss'));
      // Nothing of the refused calls applied: the commit is new, the fence unchanged.
      expect(stored).toBeNull();
      expect((await gate.getScope('quorum'))?.fence).toBe(grant.fence);
      const result = await gate.commit(commit);
      expect(result.outcome).toBe('committed');
      expect((await gate.getRecord('quorum', 'r')).revision).toBe(1);
      await expectVerified(gate);
    },
  );

  it(
    'every member frozen: a commit that reached a member answers outcome_unknown, and getOperation settles it',
    { timeout: 60_000 },
    async () => {
      const { cluster, gate } = await open();
      const grant = await gate.acquire({ scope: 'frozen', holder: 'w', ttlMs: 3_600_000 });
      const commit = {
        scope: 'frozen',
        fence: grant.fence,
        operationId: 'while-frozen',
        writes: [{ name: 'r', expectRevision: 0, value: 1 }],
      };
      await gate.getScope('frozen');
      for (const member of cluster.members) cluster.pause(member);
      const started = Date.now();
      const error = await gate.commit(commit).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(Date.now() - started).toBeLessThan(OPERATION_TIMEOUT_MS + 1_000);
      // The Txn reached a member that may still propose it: the truth is that nobody knows yet.
      expect(isFencegateError(error) && error.code).toBe('outcome_unknown');
      for (const member of cluster.members) cluster.resume(member);
      let stored = null;
      for (let i = 0; i < 50; i += 1) {
        const settled = await gate.commit(commit).then(
          (value) => value,
          () => null,
        );
        if (settled !== null) {
          stored = settled;
          break;
        }
        await sleep(200);
      }
      // Whether the frozen send applied or not, the commit applied exactly once.
      expect(stored?.outcome).toBe('committed');
      expect((await gate.getRecord('frozen', 'r')).revision).toBe(1);
      await expectVerified(gate);
    },
  );

  it('a lease across a leader change is never taken over early', { timeout: 60_000 }, async () => {
    const { cluster, gate } = await open();
    const grant = await gate.acquire({ scope: 'leased', holder: 'first', ttlMs: 2_000 });
    const expiresAt = grant.leaseExpiresAt ?? 0;
    await cluster.kill(cluster.leader());
    let taken: number | null = null;
    while (taken === null) {
      const attempt = await gate.acquire({ scope: 'leased', holder: 'second', ttlMs: 2_000 }).then(
        (next) => ({ ok: true as const, fence: next.fence }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      const at = Date.now();
      if (attempt.ok) {
        expect(at).toBeGreaterThanOrEqual(expiresAt);
        expect(attempt.fence).toBe(grant.fence + 1);
        taken = at;
      } else {
        expect(isFencegateError(attempt.error)).toBe(true);
        if (isFencegateError(attempt.error) && attempt.error.code === 'lease_held') {
          expect(at).toBeLessThan(expiresAt + OPERATION_TIMEOUT_MS);
        }
        await sleep(100);
      }
    }
    await expectVerified(gate);
  });
});
