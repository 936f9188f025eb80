/**
 * A commit with `release: true` (the run's last commit): committed, it releases the lease in the
 * same transaction, exactly as a release with its fence would, job states included; refused or
 * replayed, it releases nothing more.
 */
import { describe, expect, it } from 'vitest';
import {
  LONG_TTL,
  auditAfter,
  expectCommitted,
  expectFailure,
  expectRejected,
  lastSeq,
} from './helpers.js';
import { acquireForJob, ledgerByState } from './lease-jobs.js';
import type { SubjectFixture } from './subject.js';

const SCOPE = 'queue/release-scope';

export function commitReleaseCases(fx: SubjectFixture): void {
  describe('commit with release', () => {
    it('commits and releases the lease in one transaction, with the job states', async () => {
      const { gate } = fx.subject;
      const job = { jobId: 'q/1', attempt: 1 };
      const grant = await acquireForJob(gate, SCOPE, job);
      const before = await lastSeq(gate);
      const request = {
        scope: SCOPE,
        fence: grant.fence,
        operationId: 'last-commit',
        writes: [{ name: 'result', expectRevision: 0, value: { done: true } }],
        release: true as const,
        job: { ...job, states: ['succeeded' as const] },
      };
      const result = expectCommitted(await gate.commit(request));
      expect(result.records[0]?.revision).toBe(1);

      // The lease is gone, the fence stays: the next grant moves it at once.
      const scope = await gate.getScope(SCOPE);
      expect(scope).toMatchObject({ fence: grant.fence, holder: null, leaseExpiresAt: null });
      const entries = (await auditAfter(gate, before)).map((e) => [e.kind, e.outcome, e.fence]);
      expect(entries).toEqual([
        ['commit', 'committed', grant.fence],
        ['release', 'ok', grant.fence],
      ]);

      // The same commit again is a replay: nothing more is released or recorded.
      const replay = expectCommitted(await gate.commit(request));
      expect(replay.replayed).toBe(true);
      expect((await auditAfter(gate, before)).length).toBe(2);
      // A commit under the released fence has no holder; a release finds it released.
      const { release: _release, job: _job, ...plain } = request;
      expectRejected(
        await gate.commit({ ...plain, operationId: 'after-release' }),
        'authority_revoked',
      );
      const released = await gate.release({ scope: SCOPE, holder: 'w1', fence: grant.fence });
      expect(released.alreadyReleased).toBe(true);

      const next = await gate.acquire({
        scope: SCOPE,
        holder: 'w2',
        ttlMs: LONG_TTL,
        policyVersion: 'v1',
      });
      expect(next.fence).toBe(grant.fence + 1);
      expect(await ledgerByState(gate, SCOPE)).toEqual({ succeeded: 1 });
    });

    it('releases nothing and records no job state when the commit is rejected', async () => {
      const { gate } = fx.subject;
      await gate.registerPolicy({ version: 'v1' });
      const grant = await gate.acquire({
        scope: SCOPE,
        holder: 'w1',
        ttlMs: LONG_TTL,
        policyVersion: 'v1',
      });
      const rejected = await gate.commit({
        scope: SCOPE,
        fence: grant.fence,
        operationId: 'stale-write',
        writes: [{ name: 'result', expectRevision: 3, value: 1 }],
        release: true,
        job: { jobId: 'q/1', attempt: 1, states: ['succeeded'] },
      });
      expectRejected(rejected, 'stale_revision');
      expect(await gate.getScope(SCOPE)).toMatchObject({ fence: grant.fence, holder: 'w1' });
      // The lease still holds: the holder's next commit lands.
      expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: 'retry',
          writes: [{ name: 'result', expectRevision: 0, value: 1 }],
        }),
      );
      expect(await ledgerByState(gate, SCOPE)).toEqual({});
    });

    it('answers invalid_request to a job without release, or release other than true', async () => {
      const { gate } = fx.subject;
      const grant = await gate.acquire({ scope: SCOPE, holder: 'w1', ttlMs: LONG_TTL });
      const base = { scope: SCOPE, fence: grant.fence, operationId: 'bad' };
      await expectFailure(
        gate.commit({ ...base, job: { jobId: 'q/1', attempt: 1, states: ['succeeded'] } }),
        'invalid_request',
      );
      await expectFailure(
        gate.commit({ ...base, release: false as unknown as true }),
        'invalid_request',
      );
      expect(await gate.getScope(SCOPE)).toMatchObject({ holder: 'w1' });
    });
  });
}
