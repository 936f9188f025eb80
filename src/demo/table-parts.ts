/** What both demos print the same way: aligned lines, the invariants, the timings, the verdict. */
import type { InvariantResult, PhaseTiming } from './demo-types.js';

/** A label padded to `width`, then its value: runs line up. */
export function labelled(width: number): (label: string, value: string | number) => string {
  return (label, value) => `  ${label.padEnd(width)} ${value}`;
}

export function reasons(byReason: Record<string, number>, none = 'none'): string {
  const parts = Object.entries(byReason).map(([reason, n]) => `${reason} ${n}`);
  return parts.length === 0 ? none : parts.join(', ');
}

export function invariantLines(invariants: readonly InvariantResult[]): string[] {
  return [
    'Invariants (checked from the store)',
    ...invariants.flatMap((invariant) => [
      `  ${invariant.ok ? 'PASS' : 'FAIL'}  ${invariant.name}`,
      `        ${invariant.detail}`,
    ]),
  ];
}

export function timingLines(
  phases: readonly PhaseTiming[],
  totalMs: number,
  line: (label: string, value: string | number) => string,
): string[] {
  return [
    'Timing',
    ...phases.map((phase) => line(phase.phase, `${phase.ms} ms`)),
    line('total', `${totalMs} ms`),
  ];
}

export function verdictLine(
  invariants: readonly InvariantResult[],
  staleAccepted: number | null,
): string {
  const failed = invariants.filter((invariant) => !invariant.ok).length;
  return failed === 0
    ? `OK: all ${invariants.length} invariants hold; stale accepted = ${staleAccepted}`
    : `FAILED: ${failed} of ${invariants.length} invariants do not hold`;
}
