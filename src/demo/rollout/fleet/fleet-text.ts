/** What `fencegate demo rollout --fleet` prints: its invariants, then one JSON line. */
import type { FleetDemoResult } from './run-fleet.js';

export function formatFleet(result: FleetDemoResult, storeLabel: string): string {
  const { gate } = result;
  const gateLine =
    gate === null
      ? '  gate: none failed; nothing rolled the ramp back'
      : `  gate ${gate.name} failed at ${gate.percent} % (a share of ${gate.value?.toFixed(3)} of ${gate.samples} v8 jobs failed, limit ${gate.limit}): the driver rolled back, no operator call`;
  const lines = [
    `fencegate demo rollout --fleet on ${storeLabel}: ${result.workers} BullMQ worker processes (two per version), ${result.jobs} jobs`,
    `  ramp: ${result.moved} workflows moved to v8; ${result.failedChecks} v8 jobs failed v8's own check, ${result.inFlight} held grants at the rollback`,
    gateLine,
    `  jobs handed back to the other version's queue: ${result.handedBack}`,
    `  rollback: gate decision to fenced ${result.decisionToFencedMs ?? '-'} ms, stale attempts ${result.staleAttempts ?? '-'}, accepted ${result.staleAccepted ?? '-'}`,
    '',
    ...result.invariants.map(
      (invariant) => `  ${invariant.ok ? 'ok  ' : 'FAIL'} ${invariant.name}`,
    ),
    '',
  ];
  const summary = {
    ok: result.ok,
    moved: result.moved,
    staleAttempts: result.staleAttempts,
    staleAccepted: result.staleAccepted,
    decisionToFencedMs: result.decisionToFencedMs,
    trigger: result.trigger,
    gate: gate?.name ?? null,
    gateValue: gate?.value ?? null,
    gateSamples: gate?.samples ?? null,
    gateLimit: gate?.limit ?? null,
    workers: result.workers,
    jobs: result.jobs,
    inFlight: result.inFlight,
    failedChecks: result.failedChecks,
    handedBack: result.handedBack,
    v8AcceptedAfterRollback: result.v8AcceptedAfterRollback,
    compacted: result.compacted,
    invariantsFailed: result.invariantsFailed,
  };
  return `${lines.join('\n')}\n${JSON.stringify(summary)}\n`;
}
