/** The demo's printed summary: plain text tables, widths fixed so runs line up. */
import { JOB_STATES } from '../types.js';
import type { IncidentDemoResult } from './demo-types.js';
import { invariantLines, labelled, reasons, timingLines, verdictLine } from './table-parts.js';

const LABEL = 46;

function row(label: string, ...cells: (string | number)[]): string {
  return `  ${label.padEnd(LABEL)}${cells.map((cell) => String(cell).padStart(13)).join('')}`;
}

const line = labelled(LABEL);

export function formatDemoTable(result: IncidentDemoResult, storeLabel: string): string {
  const { store, report, answers } = result;
  const out: string[] = [];
  out.push(
    `fencegate demo: policy cutover incident (seed ${result.seed}, ${result.workflows} workflows, ${result.jobs} v7 jobs, ${storeLabel})`,
    '',
    row('v7 compaction jobs by state (jobs ledger)', 'at cutover', 'after drain'),
  );
  for (const state of JOB_STATES) {
    const before = result.jobsAtCutover[state];
    const after = report.oldJobs.byState[state];
    if (before > 0 || after > 0) out.push(row(`  ${state}`, before, after));
  }
  const total = (byState: Record<string, number>): number =>
    Object.values(byState).reduce((sum, n) => sum + n, 0);
  out.push(row('  total', total(result.jobsAtCutover), report.oldJobs.total), '');

  out.push(row('commit attempts after the cutover (audit)', 'attempted', 'accepted', 'rejected'));
  out.push(
    row(
      `  resumed running v7 jobs (old fence)`,
      store.resumed.attempted,
      store.resumed.accepted,
      store.resumed.rejected,
    ),
    row(
      '  delayed old-generation commits',
      store.delayed.attempted,
      store.delayed.accepted,
      store.delayed.rejected,
    ),
    row('  v8 controller compactions', result.jobs, store.v8Commits, result.jobs - store.v8Commits),
    '',
    line(
      'stale attempts (report)',
      `${report.staleAttempts}  (${reasons(report.staleRejectedByReason)})`,
    ),
    line('stale accepted (report)', report.staleAccepted),
    line('v8 commits (report liveCommits)', `${report.liveCommits} on ${store.v8Scopes} scopes`),
    line(
      'v8 commits delivered twice (same operationId)',
      `${store.retried.operations}: ${store.retried.committedEntries} audited 'committed', ${answers.replayed} answered replayed`,
    ),
    line('v7 worker acquiring a fresh lease', store.freshAcquireRefusal ?? 'not audited'),
    line(
      'v7 candidates that dropped handoff facts',
      `${answers.v7CandidatesDroppingFacts} of ${answers.v7Candidates} (none landed)`,
    ),
    line(
      'handoff facts preserved',
      `${store.handoffFacts.preserved}/${store.handoffFacts.required} in ${store.handoffFacts.workflowsComplete}/${result.jobs} workflows`,
    ),
    line(
      'workflows outside the cutover untouched',
      `${store.unaffected.untouched}/${store.unaffected.total}`,
    ),
    line(
      'audit history verified',
      `${store.auditVerified.checked} entries, ${store.auditVerified.violations} violations`,
    ),
    '',
    ...invariantLines(result.invariants),
  );
  out.push('', `Cutover report (gate.cutoverReport('${result.cutoverId}'))`);
  out.push(
    ...JSON.stringify(report, null, 2)
      .split('\n')
      .map((text) => `  ${text}`),
  );
  out.push(
    '',
    ...timingLines(result.phases, result.totalMs, line),
    '',
    verdictLine(result.invariants, report.staleAccepted),
    '',
  );
  return out.join('\n');
}
