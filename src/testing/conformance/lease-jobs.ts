/**
 * Job states carried by acquire and release (types.ts LeaseJobEvents): recorded in the jobs ledger
 * with the lease operation, under its fence, only when it succeeds. The ledger is read the way its
 * users read it: through a cutover's report of the jobs issued under older generations.
 */
import { describe, expect, it } from 'vitest';
import type { FencegateApi, FencegateOpsApi } from '../../api.js';
import type { Grant, JobState } from '../../types.js';
import { LONG_TTL, expectFailure } from './helpers.js';
import type { SubjectFixture } from './subject.js';

const SCOPE = 'queue/job-scope';

/** The jobs the ledger holds for `scope`, by state, as a cutover to a new policy reports them. */
export async function ledgerByState(
  ops: FencegateOpsApi,
  scope = SCOPE,
): Promise<Partial<Record<JobState, number>>> {
  await ops.registerPolicy({ version: 'v2' });
  const { cutoverId } = await ops.cutover({ toPolicy: 'v2', holder: 'ctl', scopes: [scope] });
  const report = await ops.cutoverReport(cutoverId);
  const counted = Object.entries(report?.oldJobs.byState ?? {}).filter(([, n]) => n > 0);
  return Object.fromEntries(counted);
}

/** Registers policy v1 and acquires `scope` for `job` as w1, recording reserved and running. */
export async function acquireForJob(
  gate: FencegateApi & FencegateOpsApi,
  scope: string,
  job: { jobId: string; attempt: number },
): Promise<Grant> {
  await gate.registerPolicy({ version: 'v1' });
  return gate.acquire({
    scope,
    holder: 'w1',
    ttlMs: LONG_TTL,
    policyVersion: 'v1',
    job: { ...job, states: ['reserved', 'running'] },
  });
}

export function leaseJobCases(fx: SubjectFixture): void {
  describe('job states with acquire and release', () => {
    it('records the states with the grant and with the release, under the fence granted', async () => {
      const { gate } = fx.subject;
      // The same handle carries tenant A's policies, cutovers and jobs ledger.
      const ops = gate;
      const job = { jobId: 'q/1', attempt: 1 };
      const grant = await acquireForJob(gate, SCOPE, job);
      await gate.release({
        scope: SCOPE,
        holder: 'w1',
        fence: grant.fence,
        job: { ...job, states: ['succeeded'] },
      });
      // A second job acquires and stops running: its last state is the one the ledger keeps.
      const second = await gate.acquire({
        scope: SCOPE,
        holder: 'w2',
        ttlMs: LONG_TTL,
        policyVersion: 'v1',
        job: { jobId: 'q/2', attempt: 3, states: ['reserved', 'running'] },
      });
      expect(second.fence).toBe(grant.fence + 1);
      expect(await ledgerByState(ops)).toEqual({ succeeded: 1, running: 1 });
    });

    it('records nothing for a refused acquire or release, nor on a scope without a policy', async () => {
      const { gate } = fx.subject;
      // The same handle carries tenant A's policies, cutovers and jobs ledger.
      const ops = gate;
      await gate.acquire({
        scope: SCOPE,
        holder: 'w1',
        ttlMs: LONG_TTL,
        job: { jobId: 'q/0', attempt: 1, states: ['running'] },
      });
      await expectFailure(
        gate.acquire({
          scope: SCOPE,
          holder: 'w2',
          ttlMs: LONG_TTL,
          job: { jobId: 'q/1', attempt: 1, states: ['running'] },
        }),
        'lease_held',
      );
      await expectFailure(
        gate.release({
          scope: SCOPE,
          holder: 'w1',
          fence: 7,
          job: { jobId: 'q/0', attempt: 1, states: ['failed'] },
        }),
        'stale_fence',
      );
      expect(await ledgerByState(ops)).toEqual({});
    });
  });
}
