/**
 * What /metrics shows of rollouts, read in the background with the other store gauges: per
 * rollout of each tenant, the scopes each step and the rollback moved, and after a rollback the
 * commit attempts under fences older than the rollback's and how many were accepted (from the
 * audit log, through the cutover report's running tally: a refresh reads only the entries appended
 * since the last). Only active rollouts and those finished within RECENT_MS, at most MAX_ROLLOUTS
 * of them shared fairly between tenants, so the label sets stay few however many rollouts a store
 * has kept and no tenant's rollouts push another's off the page.
 */
import { buildCutoverReport } from '../cutover/report.js';
import type { RolloutRow } from '../core/rollout-rows.js';
import { rollbackCutoverId, stepCutoverId } from '../core/rollout-rules.js';
import { everyTenantsRollouts, isFinished } from '../retention/rollout-retention.js';
import type { Store } from '../store/store.js';

/** A finished rollout stays on /metrics this long after it finished: a day. */
export const RECENT_MS = 86_400_000;
/** The most rollouts shown, of all tenants together. */
export const MAX_ROLLOUTS = 100;

/** One rollout of one tenant: two tenants' rollouts of the same id are two gauges. */
export interface RolloutGauge {
  tenant: string;
  rolloutId: string;
  percent: number;
  /** Scopes moved, by step number ('1', '2', …) and 'rollback'. */
  moved: Map<string, number>;
  /** After a rollback began: commit attempts under older fences, and the accepted ones (0). */
  staleAttempts: number | null;
  staleAccepted: number | null;
}

export interface TenantRollout {
  tenant: string;
  rollout: RolloutRow;
}

/**
 * The rollouts to show, at most `max`: each tenant's most recently changed first, taken one per
 * tenant in turn, so a tenant with many rollouts gets only what the others leave.
 */
export function fairShare(entries: readonly TenantRollout[], max: number): TenantRollout[] {
  const byTenant = new Map<string, TenantRollout[]>();
  for (const entry of entries) {
    const own = byTenant.get(entry.tenant) ?? [];
    own.push(entry);
    byTenant.set(entry.tenant, own);
  }
  const queues = [...byTenant.values()].map((own) =>
    own.sort((a, b) => b.rollout.updatedAt - a.rollout.updatedAt),
  );
  const shown: TenantRollout[] = [];
  for (let turn = 0; shown.length < max; turn += 1) {
    const round = queues.filter((own) => turn < own.length).map((own) => own[turn]!);
    if (round.length === 0) break;
    round.sort((a, b) => b.rollout.updatedAt - a.rollout.updatedAt);
    shown.push(...round.slice(0, max - shown.length));
  }
  return shown;
}

/** The gauges of the rollouts shown, one per tenant and rollout. */
export async function readRolloutGauges(store: Store): Promise<RolloutGauge[]> {
  const since = (await store.now()) - RECENT_MS;
  const candidates: TenantRollout[] = [];
  for await (const entry of everyTenantsRollouts(store)) {
    if (!isFinished(entry.rollout) || entry.rollout.updatedAt >= since) candidates.push(entry);
  }
  const gauges: RolloutGauge[] = [];
  for (const { tenant, rollout } of fairShare(candidates, MAX_ROLLOUTS)) {
    gauges.push(await readGauge(store, tenant, rollout));
  }
  return gauges;
}

async function readGauge(store: Store, tenant: string, rollout: RolloutRow): Promise<RolloutGauge> {
  const gauge: RolloutGauge = {
    tenant,
    rolloutId: rollout.rolloutId,
    percent: rollout.percent,
    moved: new Map<string, number>(),
    staleAttempts: null,
    staleAccepted: null,
  };
  for (let step = 1; step <= rollout.step; step += 1) {
    const cutover = await store.getCutover(tenant, stepCutoverId(rollout.rolloutId, step));
    gauge.moved.set(String(step), cutover?.fences.length ?? 0);
  }
  const rollback = await buildCutoverReport(store, tenant, rollbackCutoverId(rollout.rolloutId));
  if (rollback === null) return gauge;
  const back = await store.getCutover(tenant, rollback.cutoverId);
  gauge.moved.set('rollback', back?.fences.length ?? 0);
  gauge.staleAttempts = rollback.staleAttempts;
  gauge.staleAccepted = rollback.staleAccepted;
  return gauge;
}
