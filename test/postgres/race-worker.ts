/**
 * One racing OS process for multi-process.test.ts: 16 lanes on a 16-connection pool, each
 * acquiring random scopes (short leases by the database clock), pausing now and then long enough
 * for its lease to expire or be taken over, taking scopes over as an operator, incrementing a
 * counter record, re-sending commits (replays), and replaying commits with fences it knows are
 * stale. It reports what it saw over IPC; the parent judges the store by its audit log. It stops
 * after `seconds`, or sooner once it has seen `commits` commits: a fast machine has raced enough by
 * then, and a slow one still races for the whole time.
 *
 * argv: url schema processId seconds commits scopes groupCommit(0|1)
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isFencegateError } from '../../src/errors.js';
import { Fencegate } from '../../src/gate.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Grant } from '../../src/types.js';

export interface RaceReport {
  processId: string;
  /** operationIds this process saw committed for the first time (replayed: false). */
  committed: string[];
  replays: number;
  staleAttempts: number;
  staleAccepted: number;
  takeovers: number;
  rejections: Record<string, number>;
  errors: Record<string, number>;
}

const [url, schema, processId, secondsText, commitsText, scopesText, groupCommitText] =
  process.argv.slice(2) as [string, string, string, string, string, string, string];
const deadline = Date.now() + Number(secondsText) * 1000;
const commitTarget = Number(commitsText);
const racing = (): boolean => Date.now() < deadline && report.committed.length < commitTarget;
const scopeCount = Number(scopesText);
const LANES = 16;

const store = await PostgresStore.open({
  url,
  schema,
  pool: { max: LANES },
  groupCommit: groupCommitText === '1',
});
const gate = await Fencegate.open({ store });
const report: RaceReport = {
  processId,
  committed: [],
  replays: 0,
  staleAttempts: 0,
  staleAccepted: 0,
  takeovers: 0,
  rejections: {},
  errors: {},
};

function count(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

const pick = (n: number): number => Math.floor(Math.random() * n);

async function lane(laneId: number): Promise<void> {
  const holder = `${processId}-lane${laneId}`;
  const oldFences = new Map<string, number>();
  for (let i = 0; racing(); i++) {
    const scope = `race/${pick(scopeCount)}`;
    const operationBase = `${holder}-${i}`;
    try {
      let grant: Grant;
      if (pick(12) === 0) {
        grant = await gate.takeover(scope, {
          holder: `operator-${holder}`,
          ttlMs: 150 + pick(300),
        });
        report.takeovers++;
      } else {
        try {
          grant = await gate.acquire({ scope, holder, ttlMs: 100 + pick(300) });
        } catch (error) {
          if (isFencegateError(error) && error.code === 'lease_held') {
            count(report.rejections, 'lease_held');
            continue;
          }
          throw error;
        }
      }
      for (let step = 0; step < 1 + pick(3); step++) {
        const record = await gate.getRecord(scope, 'counter');
        // A pause (GC, slow model call): the lease may expire or be taken over meanwhile.
        if (pick(4) === 0) await sleep(pick(250));
        const current = record.exists ? (record.value as { count: number }).count : 0;
        const request = {
          scope,
          fence: grant.fence,
          operationId: `${operationBase}-${step}`,
          taskId: holder,
          writes: [
            { name: 'counter', expectRevision: record.revision, value: { count: current + 1 } },
          ],
        };
        const result = await gate.commit(request);
        if (result.outcome === 'committed') report.committed.push(request.operationId);
        else count(report.rejections, result.error.code);
        if (pick(8) === 0) {
          // A retry of the same logical commit: answered from the stored outcome.
          const again = await gate.commit(request);
          if (!again.replayed || again.outcome !== result.outcome)
            throw new Error('retry not replayed');
          report.replays++;
        }
        if (result.outcome !== 'committed') break;
      }
      const old = oldFences.get(scope);
      if (old !== undefined && old < grant.fence) {
        // A stale worker resuming with the fence it held before.
        report.staleAttempts++;
        const record = await gate.getRecord(scope, 'counter');
        const stale = await gate.commit({
          scope,
          fence: old,
          operationId: `${operationBase}-stale`,
          writes: [{ name: 'counter', expectRevision: record.revision, value: { count: -1 } }],
        });
        if (stale.outcome === 'committed') report.staleAccepted++;
      }
      oldFences.set(scope, grant.fence);
      if (pick(3) === 0) {
        await gate
          .release({ scope, holder: grant.holder, fence: grant.fence })
          .catch((error: unknown) => {
            if (!isFencegateError(error)) throw error;
            count(report.rejections, `release:${error.code}`);
          });
      }
    } catch (error) {
      // Nothing changed on store_unavailable (e.g. the server is short of connections): go on.
      if (isFencegateError(error) && error.code === 'store_unavailable') {
        count(report.errors, error.code);
        continue;
      }
      throw error;
    }
  }
}

await Promise.all(Array.from({ length: LANES }, (_, laneId) => lane(laneId)));
await gate.close();
process.send?.(report);
