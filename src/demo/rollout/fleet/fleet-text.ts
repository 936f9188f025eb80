/** What `fencegate demo rollout --fleet` prints: its invariants, then one JSON line. */
import type { FleetDemoResult } from './run-fleet.js';

export function formatFleet(result: FleetDemoResult, storeLabel: string): string {
  const lines = [
    `fencegate demo rollout --fleet on ${storeLabel}: ${result.workers} BullMQ worker processes (two per version), ${result.jobs} jobs`,
    `  ramp: ${result.moved} workflows moved to v8; ${result.inFlight} v8 jobs in flight at the rollback`,
    `  jobs handed back to the other version's queue: ${result.handedBack}`,
    `  rollback: decision to fenced ${result.decisionToFencedMs ?? '-'} ms, stale attempts ${result.staleAttempts ?? '-'}, accepted ${result.staleAccepted ?? '-'}`,
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
    workers: result.workers,
    jobs: result.jobs,
    inFlight: result.inFlight,
    handedBack: result.handedBack,
    v8AcceptedAfterRollback: result.v8AcceptedAfterRollback,
    compacted: result.compacted,
    invariantsFailed: result.invariantsFailed,
  };
  return `${lines.join('\n')}\n${JSON.stringify(summary)}\n`;
}
