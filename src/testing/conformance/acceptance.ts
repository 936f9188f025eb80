/**
 * The competing-worker cases A1 to A9 of ACCEPTANCE.md, each with a controlled interleaving: a
 * worker pauses at a named point (PausePoints), the competing transition commits, the worker
 * resumes. Time moves only through the store's manual clock. Where every order matters (A5, A7,
 * A9), fast-check's scheduler explores the interleavings as well. Each case inspects the
 * authoritative state and the audit log, never what a worker believed.
 */
import { describe, expect, it } from 'vitest';
import type { FencegateApi } from '../../api.js';
import { isFencegateError } from '../../errors.js';
import type { CommitResult, Grant } from '../../types.js';
import { exploreInterleavings } from '../interleavings.js';
import { PausePoints } from '../pause-points.js';
import {
  LONG_TTL,
  OperationIds,
  acquire,
  auditAfter,
  expectCommitted,
  expectFailure,
  expectRejected,
  expireLease,
  put,
  tenantState,
} from './helpers.js';
import type { ConformanceSubject, SubjectFixture } from './subject.js';

const SCOPE = 'wf-1/memory';
/** Scheduler orders tried per exploring case: enough to meet every order of a few steps. */
const EXPLORE_RUNS = 15;

async function auditOf(gate: FencegateApi, operationId: string): Promise<string[]> {
  return (await auditAfter(gate))
    .filter((entry) => entry.operationId === operationId && entry.kind === 'commit')
    .map((entry) => (entry.outcome === 'rejected' ? `rejected:${entry.reason}` : entry.outcome));
}

/**
 * A6, and the invariant that a lost answer is resent under the same operationId: the resend answers
 * the stored outcome (`replayed: true`) and applies nothing twice, even after a takeover.
 */
export async function lostAnswerResentReplays(subject: ConformanceSubject): Promise<void> {
  const { gate } = subject;
  const grant = await acquire(gate, SCOPE, 'A');
  const request = {
    scope: SCOPE,
    fence: grant.fence,
    operationId: 'op-notify',
    writes: [{ name: 'doc', expectRevision: 0, value: 'published' }],
    intents: [{ effectKey: 'notify-wf-1', target: 'crm-webhook', payload: { doc: 1 } }],
  };
  // The store accepts the commit; the worker never sees this reply.
  const lost = expectCommitted(await gate.commit(request));

  const retried = await gate.commit(request);
  expect(retried).toEqual({ ...lost, replayed: true });
  const intents = (await gate.listIntents({ scope: SCOPE })).items;
  expect(intents.map((intent) => intent.effectKey)).toEqual(['notify-wf-1']);
  expect(await gate.getRecord(SCOPE, 'doc')).toMatchObject({ value: 'published', revision: 1 });

  // The replacement reconciles from the stored outcome instead of minting a new effect.
  const b = await gate.takeover(SCOPE, { holder: 'B', ttlMs: LONG_TTL });
  expect(await gate.getOperation('op-notify')).toEqual(lost);
  expect(await gate.getIntent('notify-wf-1')).toMatchObject({
    status: 'pending',
    fence: grant.fence,
    operationId: 'op-notify',
  });
  const competing = await gate.commit({
    scope: SCOPE,
    fence: b.fence,
    operationId: 'op-notify-again',
    intents: [{ effectKey: 'notify-wf-1', target: 'crm-webhook', payload: { doc: 1 } }],
  });
  expectRejected(competing, 'duplicate_effect');
  // The old worker's retry after the takeover still answers the stored outcome.
  expect(await gate.commit(request)).toEqual({ ...lost, replayed: true });
  expect((await gate.listIntents({})).items).toHaveLength(1);
  expect(await auditOf(gate, 'op-notify')).toEqual(['committed']);
}

export function acceptanceCases(fx: SubjectFixture): void {
  describe('acceptance: competing workers', () => {
    it('A1: of two candidates that read the same revision, the second to commit is rejected stale_revision', async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'w1');
      await put(gate, grant, 'doc', 0, 'v1', 'op-seed');
      const points = new PausePoints();
      const candidate = async (name: string, operationId: string): Promise<CommitResult> => {
        const read = await gate.getRecord(SCOPE, 'doc');
        await points.reach(`${name}:after-read`);
        return gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId,
          taskId: name,
          writes: [{ name: 'doc', expectRevision: read.revision, value: `from ${name}` }],
        });
      };
      const a = candidate('A', 'op-a');
      const b = candidate('B', 'op-b');
      await points.waitUntilReached('A:after-read', a);
      await points.waitUntilReached('B:after-read', b);

      points.release('A:after-read');
      expectCommitted(await a);
      points.release('B:after-read');
      const rejected = expectRejected(await b, 'stale_revision');
      expect(rejected.error.details).toMatchObject({ name: 'doc', expected: 1, actual: 2 });

      expect(await gate.getRecord(SCOPE, 'doc')).toMatchObject({ value: 'from A', revision: 2 });
      expect(await auditOf(gate, 'op-a')).toEqual(['committed']);
      expect(await auditOf(gate, 'op-b')).toEqual(['rejected:stale_revision']);
    });

    it('A2: a worker whose lease expired and was replaced is rejected stale_fence on resume', async () => {
      const { gate } = fx.subject;
      const points = new PausePoints();
      const workerA = (async () => {
        const grant = await acquire(gate, SCOPE, 'A', { ttlMs: 5_000 });
        const read = await gate.getRecord(SCOPE, 'doc');
        await points.reach('A:paused');
        const result = await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: 'op-a',
          writes: [{ name: 'doc', expectRevision: read.revision, value: 'from A' }],
        });
        return { grant, result };
      })();
      await points.waitUntilReached('A:paused', workerA);

      await expireLease(fx.subject, SCOPE);
      const b = await acquire(gate, SCOPE, 'B');
      await put(gate, b, 'doc', 0, 'from B', 'op-b');

      points.release('A:paused');
      const { grant, result } = await workerA;
      expect(b.fence).toBe(grant.fence + 1);
      const rejected = expectRejected(result, 'stale_fence');
      expect(rejected.error.details).toMatchObject({ currentFence: grant.fence + 1 });
      expect(await gate.getRecord(SCOPE, 'doc')).toMatchObject({ value: 'from B', revision: 1 });
      expect(await auditOf(gate, 'op-a')).toEqual(['rejected:stale_fence']);
    });

    it('A3: a delayed commit from before a takeover is rejected even before the new holder wrote anything', async () => {
      const { gate } = fx.subject;
      const points = new PausePoints();
      await acquire(gate, SCOPE, 'A');
      const workerA = (async () => {
        const authority = await gate.getScope(SCOPE);
        expect(authority).toMatchObject({ holder: 'A', fence: 1 });
        await points.reach('A:after-authority-check');
        return gate.commit({
          scope: SCOPE,
          fence: authority?.fence ?? 0,
          operationId: 'op-a',
          writes: [{ name: 'doc', expectRevision: 0, value: 'from A' }],
        });
      })();
      await points.waitUntilReached('A:after-authority-check', workerA);

      const b = await gate.takeover(SCOPE, { holder: 'B', ttlMs: LONG_TTL });
      const before = await tenantState(gate);
      points.release('A:after-authority-check');
      const rejected = expectRejected(await workerA, 'stale_fence');
      expect(rejected.error.details).toMatchObject({ currentFence: b.fence });
      expect(await tenantState(gate)).toEqual(before);
      expect((await gate.getRecord(SCOPE, 'doc')).exists).toBe(false);

      await put(gate, b, 'doc', 0, 'from B', 'op-b');
      expect(await gate.getRecord(SCOPE, 'doc')).toMatchObject({ value: 'from B', revision: 1 });
    });

    it("A4: a stale worker's renew and release are stale_fence; the replacement's grant is intact", async () => {
      const { gate } = fx.subject;
      const points = new PausePoints();
      const workerA = (async () => {
        const grant = await acquire(gate, SCOPE, 'A', { ttlMs: 5_000 });
        await points.reach('A:paused');
        const renew = gate.renew({ scope: SCOPE, holder: 'A', fence: grant.fence, ttlMs: 5_000 });
        const renewError = await expectFailure(renew, 'stale_fence');
        const release = gate.release({ scope: SCOPE, holder: 'A', fence: grant.fence });
        const releaseError = await expectFailure(release, 'stale_fence');
        return { renewError, releaseError };
      })();
      await points.waitUntilReached('A:paused', workerA);
      await expireLease(fx.subject, SCOPE);
      const b = await acquire(gate, SCOPE, 'B', { ttlMs: 5_000 });
      const replacement = await gate.getScope(SCOPE);

      points.release('A:paused');
      const { renewError, releaseError } = await workerA;
      expect(renewError.details).toMatchObject({ currentFence: b.fence });
      expect(releaseError.details).toMatchObject({ currentFence: b.fence });
      expect(await gate.getScope(SCOPE)).toEqual(replacement);
      expect(replacement).toMatchObject({
        holder: 'B',
        fence: b.fence,
        leaseExpiresAt: b.leaseExpiresAt,
      });
    });

    it('A5: of two distinct tasks writing the same record, one commits and the other is rejected', async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'controller');
      await put(gate, grant, 'doc', 0, 'v1', 'op-seed');
      const points = new PausePoints();
      const task = async (taskId: string): Promise<CommitResult> => {
        const read = await gate.getRecord(SCOPE, 'doc');
        await points.reach(`${taskId}:after-read`);
        return gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: `op-${taskId}`,
          taskId,
          writes: [{ name: 'doc', expectRevision: read.revision, value: `${taskId} edit` }],
        });
      };
      const t1 = task('task-1');
      const t2 = task('task-2');
      await points.waitUntilReached('task-1:after-read', t1);
      await points.waitUntilReached('task-2:after-read', t2);
      points.release('task-2:after-read');
      points.release('task-1:after-read');
      const results = await Promise.all([t1, t2]);
      const outcomes = results.map((result) =>
        result.outcome === 'committed' ? 'committed' : result.error.code,
      );
      expect(outcomes.sort()).toEqual(['committed', 'stale_revision']);
      const winner = results.findIndex((result) => result.outcome === 'committed');
      expect(await gate.getRecord(SCOPE, 'doc')).toMatchObject({
        value: `task-${winner + 1} edit`,
        revision: 2,
      });
    });

    it('A5: no lost update in any interleaving of two tasks', async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'controller');
      let run = 0;
      await exploreInterleavings(
        {
          setup: async () => {
            run += 1;
            const name = `doc-${run}`;
            await put(gate, grant, name, 0, 'base', `seed-${run}`);
            const reads: Record<string, number> = {};
            const results: Record<string, CommitResult> = {};
            return { name, reads, results };
          },
          workers: (ctx) => {
            const task = (taskId: string) => [
              {
                label: 'read',
                run: async () => {
                  ctx.reads[taskId] = (await gate.getRecord(SCOPE, ctx.name)).revision;
                },
              },
              {
                label: 'commit',
                run: async () => {
                  ctx.results[taskId] = await gate.commit({
                    scope: SCOPE,
                    fence: grant.fence,
                    operationId: `${ctx.name}-${taskId}`,
                    taskId,
                    writes: [
                      { name: ctx.name, expectRevision: ctx.reads[taskId] ?? -1, value: taskId },
                    ],
                  });
                },
              },
            ];
            return { t1: task('t1'), t2: task('t2') };
          },
          check: async (ctx, trace) => {
            const committed = Object.entries(ctx.results).filter(
              ([, result]) => result.outcome === 'committed',
            );
            const record = await gate.getRecord(SCOPE, ctx.name);
            expect(record.revision).toBe(1 + committed.length);
            if (ctx.reads.t1 === ctx.reads.t2) {
              expect(committed).toHaveLength(1);
            } else {
              expect(committed).toHaveLength(2);
            }
            const lastCommit = trace.order.filter(
              (step) =>
                step.endsWith(':commit') &&
                ctx.results[step.split(':')[0] ?? '']?.outcome === 'committed',
            );
            expect(record.value).toBe(lastCommit.at(-1)?.split(':')[0]);
          },
        },
        { numRuns: EXPLORE_RUNS },
      );
    });
  });

  describe('acceptance: intents and recreation', () => {
    it('A6: a commit whose reply was lost, retried with its operationId, leaves exactly one intent', () =>
      lostAnswerResentReplays(fx.subject));

    it('A7: commit before cancel: the intent exists and is cancelled, since it was unclaimed', async () => {
      const { gate } = fx.subject;
      const points = new PausePoints();
      const grant = await acquire(gate, SCOPE, 'A');
      const operator = (async () => {
        await points.reach('operator:before-cancel');
        return gate.cancel(SCOPE, { reason: 'user cancelled' });
      })();
      await points.waitUntilReached('operator:before-cancel', operator);
      const committed = expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: 'op-a',
          intents: [{ effectKey: 'notify-1', target: 'crm', payload: 1 }],
        }),
      );
      expect(committed.intents).toEqual([{ effectKey: 'notify-1', status: 'pending' }]);
      points.release('operator:before-cancel');
      expect(await operator).toEqual({ fence: grant.fence + 1, cancelledIntents: 1 });
      expect(await gate.getIntent('notify-1')).toMatchObject({
        status: 'cancelled',
        fence: grant.fence,
      });
    });

    it('A7: cancel before commit: the commit is rejected at the moved fence and no intent exists', async () => {
      const { gate } = fx.subject;
      const points = new PausePoints();
      const grant = await acquire(gate, SCOPE, 'A');
      const workerA = (async () => {
        await points.reach('A:before-commit');
        return gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: 'op-a',
          intents: [{ effectKey: 'notify-1', target: 'crm', payload: 1 }],
        });
      })();
      await points.waitUntilReached('A:before-commit', workerA);
      expect(await gate.cancel(SCOPE)).toEqual({ fence: grant.fence + 1, cancelledIntents: 0 });
      points.release('A:before-commit');
      // The fence moved (check 3) before the holder was cleared (check 4) is looked at.
      const rejected = expectRejected(await workerA, 'stale_fence');
      expect(rejected.error.details).toMatchObject({ currentFence: grant.fence + 1 });
      expect(await gate.getIntent('notify-1')).toBeNull();
      expect((await gate.listIntents({})).items).toEqual([]);
    });

    it('A7: in every order of commit and cancel, the store order decides', async () => {
      const { gate } = fx.subject;
      let run = 0;
      await exploreInterleavings(
        {
          setup: async () => {
            run += 1;
            const scope = `race-${run}`;
            const grant = await acquire(gate, scope, 'A');
            return { scope, grant, commit: null as CommitResult | null, cancelled: -1 };
          },
          workers: (ctx) => ({
            worker: [
              async () => {
                ctx.commit = await gate.commit({
                  scope: ctx.scope,
                  fence: ctx.grant.fence,
                  operationId: `${ctx.scope}-op`,
                  intents: [{ effectKey: `${ctx.scope}-fx`, target: 'crm', payload: 1 }],
                });
              },
            ],
            operator: [
              async () => {
                ctx.cancelled = (await gate.cancel(ctx.scope)).cancelledIntents;
              },
            ],
          }),
          check: async (ctx, trace) => {
            const intent = await gate.getIntent(`${ctx.scope}-fx`);
            if (trace.order[0] === 'worker:step1') {
              expect(ctx.commit?.outcome).toBe('committed');
              expect(ctx.cancelled).toBe(1);
              expect(intent?.status).toBe('cancelled');
            } else {
              expect(ctx.commit?.outcome).toBe('rejected');
              expect(ctx.cancelled).toBe(0);
              expect(intent).toBeNull();
            }
          },
        },
        { numRuns: EXPLORE_RUNS },
      );
    });

    it('A8: a candidate that read a record deleted and re-created since is rejected incarnation_changed', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1');
      await put(gate, grant, 'doc', 0, 'first lifetime', ids.next());
      const points = new PausePoints();
      const candidate = (async () => {
        const read = await gate.getRecord(SCOPE, 'doc');
        await points.reach('old:after-read');
        return gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: 'op-old',
          writes: [{ name: 'doc', expectRevision: read.revision, value: 'old candidate' }],
        });
      })();
      await points.waitUntilReached('old:after-read', candidate);

      expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          writes: [{ name: 'doc', expectRevision: 1, delete: true }],
        }),
      );
      await put(gate, grant, 'doc', 2, 'second lifetime', ids.next());
      const recreated = await gate.getRecord(SCOPE, 'doc');

      points.release('old:after-read');
      const rejected = expectRejected(await candidate, 'incarnation_changed');
      expect(rejected.error.details).toMatchObject({ name: 'doc', expected: 1, actual: 3 });
      expect(await gate.getRecord(SCOPE, 'doc')).toEqual(recreated);
      expect(recreated).toMatchObject({ value: 'second lifetime', revision: 3, incarnation: 3 });
    });

    it('A8: the same holds when the whole scope was deleted and re-created by a takeover', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1');
      await put(gate, grant, 'doc', 0, 'first lifetime', ids.next());
      const read = await gate.getRecord(SCOPE, 'doc');
      await gate.deleteScope(SCOPE);
      const next = await gate.takeover(SCOPE, { holder: 'w2', ttlMs: LONG_TTL });
      await put(gate, next, 'doc', 2, 'second lifetime', ids.next());
      const recreated = await gate.getRecord(SCOPE, 'doc');
      // Even carrying the new fence, evidence from the old lifetime cannot authorize the write.
      const rejected = expectRejected(
        await gate.commit({
          scope: SCOPE,
          fence: next.fence,
          operationId: ids.next(),
          writes: [{ name: 'doc', expectRevision: read.revision, value: 'old evidence' }],
        }),
        'incarnation_changed',
      );
      expect(rejected.error.details).toMatchObject({ expected: 1, actual: 3 });
      expect(await gate.getRecord(SCOPE, 'doc')).toEqual(recreated);
    });
  });

  describe('acceptance: progress', () => {
    it('A9: a healthy holder with fresh reads commits every time under a stream of stale attempts', async () => {
      const { gate } = fx.subject;
      let run = 0;
      const rounds = 4;
      await exploreInterleavings(
        {
          setup: async () => {
            run += 1;
            const scope = `progress-${run}`;
            const old = await acquire(gate, scope, 'old', { ttlMs: 1_000 });
            const healthy: Grant = await gate.takeover(scope, { holder: 'H', ttlMs: LONG_TTL });
            return {
              scope,
              old,
              healthy,
              read: 0,
              committed: [] as CommitResult[],
              stale: [] as string[],
            };
          },
          workers: (ctx) => {
            const holder = [];
            for (let round = 0; round < rounds; round += 1) {
              holder.push(
                {
                  label: `read${round}`,
                  run: async () => {
                    ctx.read = (await gate.getRecord(ctx.scope, 'doc')).revision;
                  },
                },
                {
                  label: `commit${round}`,
                  run: async () => {
                    ctx.committed.push(
                      await gate.commit({
                        scope: ctx.scope,
                        fence: ctx.healthy.fence,
                        operationId: `${ctx.scope}-h${round}`,
                        writes: [{ name: 'doc', expectRevision: ctx.read, value: round }],
                      }),
                    );
                  },
                },
              );
            }
            const staleCommit = (n: number, expectRevision: number) => async () => {
              const result = await gate.commit({
                scope: ctx.scope,
                fence: ctx.old.fence,
                operationId: `${ctx.scope}-s${n}`,
                writes: [{ name: 'doc', expectRevision, value: 'stale' }],
                intents: [{ effectKey: `${ctx.scope}-fx${n}`, target: 'crm', payload: n }],
              });
              ctx.stale.push(result.outcome === 'rejected' ? result.error.code : 'committed');
            };
            const refused = (call: () => Promise<unknown>) => async () => {
              try {
                await call();
                ctx.stale.push('accepted');
              } catch (error) {
                ctx.stale.push(isFencegateError(error) ? error.code : 'unexpected error');
              }
            };
            return {
              healthy: holder,
              stale: [
                staleCommit(1, 0),
                refused(() => acquire(gate, ctx.scope, 'intruder')),
                staleCommit(2, 1),
                refused(() =>
                  gate.renew({
                    scope: ctx.scope,
                    holder: 'old',
                    fence: ctx.old.fence,
                    ttlMs: 1_000,
                  }),
                ),
                () => fx.subject.advanceClock(1_000),
                staleCommit(3, 2),
                refused(() =>
                  gate.release({ scope: ctx.scope, holder: 'old', fence: ctx.old.fence }),
                ),
              ],
            };
          },
          check: async (ctx) => {
            expect(ctx.committed.map((result) => result.outcome)).toEqual(
              Array.from({ length: rounds }, () => 'committed'),
            );
            expect(ctx.stale).toEqual([
              'stale_fence',
              'lease_held',
              'stale_fence',
              'stale_fence',
              'stale_fence',
              'stale_fence',
            ]);
            expect(await gate.getRecord(ctx.scope, 'doc')).toMatchObject({
              value: rounds - 1,
              revision: rounds,
            });
            expect(await gate.getScope(ctx.scope)).toMatchObject({
              holder: 'H',
              fence: ctx.healthy.fence,
            });
          },
        },
        { numRuns: EXPLORE_RUNS },
      );
    });
  });
}
