/**
 * What /metrics shows of rollouts, read in the background with the other store gauges: per
 * rollout, the scopes each step and the rollback moved, and after a rollback the commit attempts
 * under fences older than the rollback's and how many were accepted (from the audit log, through
 * the cutover report's running tally: a refresh reads only the entries appended since the last).
 * Only active rollouts and those finished within RECENT_MS, at most MAX_ROLLOUTS of them, so the
 * label sets stay few however many rollouts a store has kept.
 */
import { buildCutoverReport } from '../cutover/report.js';
import type { RolloutRow } from '../core/rollout-rows.js';
import { rollbackCutoverId, stepCutoverId } from '../core/rollout-rules.js';
import { everyTenantsRollouts, isFinished } from '../retention/rollout-retention.js';
import type { Store } from '../store/store.js';

/** A finished rollout stays on /metrics this long after it finished: a day. */
export const RECENT_MS = 86_400_000;
/** The most rollouts shown; the most recently changed first. */
export const MAX_ROLLOUTS = 50;

export interface RolloutGauge {
  rolloutId: string;
  percent: number;
  /** Scopes moved, by step number ('1', '2', …) and 'rollback'. */
  moved: Map<string, number>;
  /** After a rollback began: commit attempts under older fences, and the accepted ones (0). */
  staleAttempts: number | null;
  staleAccepted: number | null;
}

/**
 * The gauges of the rollouts shown, by rolloutId. Rollouts of one id in several tenants are
 * summed: the labels never name a tenant.
 */
export async function readRolloutGauges(store: Store): Promise<Map<string, RolloutGauge>> {
  const since = (await store.now()) - RECENT_MS;
  const shown: { tenant: string; rollout: RolloutRow }[] = [];
  for await (const entry of everyTenantsRollouts(store)) {
    if (!isFinished(entry.rollout) || entry.rollout.updatedAt >= since) shown.push(entry);
  }
  shown.sort((a, b) => b.rollout.updatedAt - a.rollout.updatedAt);
  const gauges = new Map<string, RolloutGauge>();
  for (const { tenant, rollout } of shown.slice(0, MAX_ROLLOUTS)) {
    const gauge = gauges.get(rollout.rolloutId) ?? {
      rolloutId: rollout.rolloutId,
      percent: rollout.percent,
      moved: new Map<string, number>(),
      staleAttempts: null,
      staleAccepted: null,
    };
    gauges.set(rollout.rolloutId, gauge);
    const add = (step: string, scopes: number) =>
      gauge.moved.set(step, (gauge.moved.get(step) ?? 0) + scopes);
    for (let step = 1; step <= rollout.step; step += 1) {
      const cutover = await store.getCutover(tenant, stepCutoverId(rollout.rolloutId, step));
      add(String(step), cutover?.fences.length ?? 0);
    }
    const rollback = await buildCutoverReport(store, tenant, rollbackCutoverId(rollout.rolloutId));
    if (rollback === null) continue;
    const back = await store.getCutover(tenant, rollback.cutoverId);
    add('rollback', back?.fences.length ?? 0);
    gauge.staleAttempts = (gauge.staleAttempts ?? 0) + rollback.staleAttempts;
    gauge.staleAccepted = (gauge.staleAccepted ?? 0) + rollback.staleAccepted;
  }
  return gauges;
}
