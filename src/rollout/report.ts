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
import { emptyStepWork, stepWork, sumStepWork } from './step-work.js';
import type { CutoverRecord, Rollout, RolloutReport, RolloutStepReport } from '../types.js';

export async function buildRolloutReport(
  store: Store,
  tenant: string,
  rollout: Rollout,
  row: RolloutRow,
): Promise<RolloutReport> {
  const marks = await store.readRolloutScopes(tenant, row.rolloutId);
  const rollbackCutover = await store.getCutover(tenant, rollbackCutoverId(row.rolloutId));
  const work = await stepWork(store, tenant, row, marks, rollbackCutover?.fences ?? []);
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
      ...(work.get(step) ?? emptyStepWork()),
      startedAt: report.startedAt,
      completedAt: report.completedAt,
    });
  }
  const rollback = await buildCutoverReport(store, tenant, rollbackCutoverId(row.rolloutId));
  return {
    rollout,
    steps,
    rollback:
      rollback === null
        ? null
        : {
            cutoverId: rollback.cutoverId,
            status: rollback.status,
            moved: rollbackCutover?.fences.length ?? 0,
            skipped: rollback.skipped,
            staleAttempts: rollback.staleAttempts,
            staleAccepted: rollback.staleAccepted,
            intentsCancelled: await cancelledBy(store, tenant, rollbackCutover),
            startedAt: rollback.startedAt,
            completedAt: rollback.completedAt,
          },
    // The sums over the rows above, so a step that is not listed is in neither.
    ...sumStepWork(steps),
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
async function cancelledBy(
  store: Store,
  tenant: string,
  cutover: CutoverRecord | null,
): Promise<number> {
  if (cutover === null) return 0;
  const { cutoverId } = cutover;
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
