/**
 * A rollout's report, per step, from the authoritative history: each step's and the rollback's
 * cutover report (cutover/report.ts: moves from the cutover rows, commits from the audit log), what
 * the rollout did to each scope, the intents left to reconcile, the jobs ledger, and each gate's
 * readings of the current step from the driver's document.
 */
import { auditPages } from '../audit/audit-pages.js';
import { buildCutoverReport } from '../cutover/report.js';
import { answeredGateSeries } from '../core/gate-series.js';
import type { RolloutRow } from '../core/rollout-rows.js';
import { rollbackCutoverId, stepCutoverId } from '../core/rollout-rules.js';
import type { Store } from '../store/store.js';
import {
  JOB_STATES,
  type JobState,
  type JobTally,
  type Rollout,
  type RolloutReport,
  type RolloutStepReport,
} from '../types.js';

const INTENT_PAGE = 500;

export async function buildRolloutReport(
  store: Store,
  tenant: string,
  rollout: Rollout,
  row: RolloutRow,
): Promise<RolloutReport> {
  const marks = await store.readRolloutScopes(tenant, row.rolloutId);
  // Each scope belongs to the step that moved it, or that was current when an acquire pinned it.
  const stepOf = new Map(marks.map(({ scope, row: mark }) => [scope, mark.step]));
  const unknown = await unknownIntentsByStep(store, tenant, stepOf);
  const jobs = await jobsByStep(store, tenant, stepOf, row.toPolicy);
  const steps: RolloutStepReport[] = [];
  for (let step = 1; step <= row.step; step += 1) {
    const report = await buildCutoverReport(store, tenant, stepCutoverId(row.rolloutId, step));
    if (report === null) continue;
    const moved = await movedBy(store, tenant, report.cutoverId);
    steps.push({
      cutoverId: report.cutoverId,
      percent: step === row.step ? row.percent : (row.steps[step - 1] ?? 100),
      status: report.status,
      moved,
      skipped: report.skipped.length,
      commitsAccepted: report.liveCommits,
      pinnedAtAcquire: marks.filter(({ row: mark }) => mark.via === 'acquire' && mark.step === step)
        .length,
      unknownOutcomes: unknown.get(step) ?? 0,
      toPolicyJobs: jobs.get(step) ?? emptyTally(),
      startedAt: report.startedAt,
      completedAt: report.completedAt,
    });
  }
  const rollback = await buildCutoverReport(store, tenant, rollbackCutoverId(row.rolloutId));
  const movedBack = rollback === null ? 0 : await movedBy(store, tenant, rollback.cutoverId);
  return {
    rollout,
    steps,
    pinnedAtAcquire: marks.filter(({ row: mark }) => mark.via === 'acquire').length,
    rollback:
      rollback === null
        ? null
        : {
            cutoverId: rollback.cutoverId,
            status: rollback.status,
            moved: movedBack,
            skipped: rollback.skipped,
            staleAttempts: rollback.staleAttempts,
            staleAccepted: rollback.staleAccepted,
            intentsCancelled: await cancelledBy(store, tenant, rollback.cutoverId),
            startedAt: rollback.startedAt,
            completedAt: rollback.completedAt,
          },
    unknownOutcomes: [...unknown.values()].reduce((sum, count) => sum + count, 0),
    toPolicyJobs: sumTallies([...jobs.values()]),
    gateSeries: await gateSeriesOf(store, tenant, row),
  };
}

/** Each gate's readings of the current step, from the driver's document. */
async function gateSeriesOf(
  store: Store,
  tenant: string,
  row: RolloutRow,
): Promise<RolloutReport['gateSeries']> {
  const gates = row.gates ?? [];
  if (gates.length === 0) return [];
  const driver = await store.readRolloutDriver(tenant, row.rolloutId);
  return answeredGateSeries(gates, driver, row.step);
}

/** The scopes a cutover has moved so far (not those it skipped). */
async function movedBy(store: Store, tenant: string, cutoverId: string): Promise<number> {
  return (await store.getCutover(tenant, cutoverId))?.fences.length ?? 0;
}

/** The intents a rollback cancelled, from the audit log after it began. */
async function cancelledBy(store: Store, tenant: string, cutoverId: string): Promise<number> {
  const cutover = await store.getCutover(tenant, cutoverId);
  if (cutover === null) return 0;
  let count = 0;
  for await (const entries of auditPages(store, tenant, cutover.startSeq)) {
    for (const entry of entries) {
      if (entry.kind === 'intent' && entry.outcome === 'cancelled' && entry.reason === cutoverId) {
        count += 1;
      }
    }
  }
  return count;
}

/** Intents with an unknown outcome on the rollout's scopes, by the step each scope belongs to. */
async function unknownIntentsByStep(
  store: Store,
  tenant: string,
  stepOf: ReadonlyMap<string, number>,
): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  let cursor: string | undefined;
  do {
    const page = await store.listIntents(tenant, {
      status: 'unknown',
      limit: INTENT_PAGE,
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const intent of page.items) {
      const step = stepOf.get(intent.scope);
      if (step !== undefined) counts.set(step, (counts.get(step) ?? 0) + 1);
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return counts;
}

/** The ledger's toPolicy jobs of the rollout's scopes, by the step each scope belongs to. */
async function jobsByStep(
  store: Store,
  tenant: string,
  stepOf: ReadonlyMap<string, number>,
  toPolicy: string,
): Promise<Map<number, JobTally>> {
  const tallies = new Map<number, JobTally>();
  if (stepOf.size === 0) return tallies;
  for (const job of await store.listJobs(tenant, [...stepOf.keys()])) {
    const step = stepOf.get(job.scope);
    if (step === undefined || job.policyVersion !== toPolicy) continue;
    let tally = tallies.get(step);
    if (tally === undefined) {
      tally = emptyTally();
      tallies.set(step, tally);
    }
    tally.byState[job.state] += 1;
    tally.total += 1;
  }
  return tallies;
}

function emptyTally(): JobTally {
  return {
    total: 0,
    byState: Object.fromEntries(JOB_STATES.map((state) => [state, 0])) as Record<JobState, number>,
  };
}

function sumTallies(tallies: readonly JobTally[]): JobTally {
  const sum = emptyTally();
  for (const tally of tallies) {
    sum.total += tally.total;
    for (const state of JOB_STATES) sum.byState[state] += tally.byState[state];
  }
  return sum;
}
