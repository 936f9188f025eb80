/** The rollout demo's printed summary, then its figures as one JSON line (the last line). */
import { invariantLines, labelled, reasons, timingLines, verdictLine } from '../table-parts.js';
import type { RolloutDemoResult } from './types.js';

const line = labelled(52);

/** The JSON line a script reads: the figures that say whether the rollback did its job. */
export function rolloutSummary(result: RolloutDemoResult, storeLabel: string) {
  return {
    ok: result.ok,
    store: storeLabel,
    workflows: result.workflows,
    action: result.action,
    moved: result.moved,
    movedBack: result.report?.rollback?.moved ?? 0,
    inFlight: result.inFlight,
    inFlightAccepted: result.store.inFlightCommits.accepted,
    staleAttempts: result.staleAttempts,
    staleAccepted: result.staleAccepted,
    decisionToFencedMs: result.decisionToFencedMs,
    trigger: result.trigger,
    gate: result.gate?.name ?? null,
    gateValue: result.gate?.value ?? null,
    gateSamples: result.gate?.samples ?? null,
    gateLimit: result.gate?.limit ?? null,
    damagedWorkflows: result.store.damagedWorkflows,
    invariantsFailed: result.invariants.filter((invariant) => !invariant.ok).length,
    totalMs: result.totalMs,
  };
}

export function formatRolloutTable(result: RolloutDemoResult, storeLabel: string): string {
  const { store, report } = result;
  const rollback = report?.rollback ?? null;
  const out: string[] = [
    `fencegate demo rollout: v8 ramped over ${result.workflows} workflows pinned to v7 (seed ${result.seed}, ${storeLabel})`,
    '',
    'The ramp, driven by the rollout driver; the handoff check read each step from the store',
  ];
  for (const step of result.steps) {
    out.push(
      line(
        `  ${step.cutoverId} at ${step.percent} %`,
        `${step.moved} scopes moved, ${step.v8Writes} v8 writes, ${step.damaged} workflows missing ${step.factsLost} handoff facts`,
      ),
    );
  }
  out.push(
    '',
    gateLine(result),
    line('gate decision -> last moved scope fenced', msOrNone(result.decisionToFencedMs)),
    line('scopes moved back to v7 (report)', `${rollback?.moved ?? 0} of ${result.moved}`),
    line(
      'in-flight v8 commits after it (audit)',
      `${store.inFlightCommits.attempted} attempted, ${store.inFlightCommits.accepted} accepted (${reasons(store.rejectedByReason, 'none rejected')})`,
    ),
    line('stale attempts (report)', rollback?.staleAttempts ?? 'no rollback'),
    line('stale accepted (report)', rollback?.staleAccepted ?? 'no rollback'),
    line('a v8-only worker acquiring a moved-back scope', store.freshV8Acquire ?? 'not refused'),
    line(
      'moved scopes back on v7 above the move fence',
      `${store.movedBack.back}/${store.movedBack.total}`,
    ),
    line(
      'scopes the ramp never moved, untouched',
      `${store.untouched.untouched}/${store.untouched.total}`,
    ),
    line(
      'workflows v8 left missing handoff facts',
      `${store.damagedWorkflows} (a rollback does not revert records: v7 repairs them)`,
    ),
    line(
      'audit history verified',
      `${store.auditVerified.checked} entries, ${store.auditVerified.violations} violations`,
    ),
    '',
    ...invariantLines(result.invariants),
    '',
    ...timingLines(result.phases, result.totalMs, line),
    '',
    verdictLine(result.invariants, result.staleAccepted),
    JSON.stringify(rolloutSummary(result, storeLabel)),
    '',
  );
  return out.join('\n');
}

/** What the gate read and what the driver did about it, from the store. */
function gateLine(result: RolloutDemoResult): string {
  const { gate } = result;
  if (gate === null)
    return `No gate failed: nothing stopped the ramp (${result.inFlight} v8 jobs in flight)`;
  const reading = `a share of ${share(gate.value)} of ${gate.samples} v8 jobs failed, limit ${share(gate.limit)}`;
  const acted =
    result.action === 'rollback' ? 'the driver rolls back' : 'the driver only pauses the rollout';
  return `The gate ${gate.name} fails at ${gate.percent} % (${reading}): ${acted}, no operator call, with ${result.inFlight} v8 jobs in flight`;
}

function share(value: number | null): string {
  return value === null ? 'none' : String(Number(value.toFixed(3)));
}

function msOrNone(ms: number | null): string {
  return ms === null ? 'no rollback' : `${ms} ms`;
}
