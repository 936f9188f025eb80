/** The readable lines of `fencegate rollout`: a rollout's state and its report. */
import { JOB_STATES, type Rollout, type RolloutReport } from '../types.js';

/** One line: id, status, percent and step, versions, selection, revision, current cutover. */
export function rolloutLine(rollout: Rollout): string {
  const selection =
    'prefix' in rollout.selection
      ? `prefix ${rollout.selection.prefix}`
      : `${rollout.selection.scopes.length} listed scopes`;
  const cutover =
    rollout.cutoverId === null
      ? 'no cutover yet'
      : `cutover ${rollout.cutoverId} ${rollout.cutoverDone ? 'done' : 'moving'}`;
  return (
    `${rollout.rolloutId}: ${rollout.status} at ${rollout.percent} % ` +
    `(step ${rollout.step} of ${rollout.steps.length}: ${rollout.steps.join(', ')}), ` +
    `${rollout.fromPolicy} -> ${rollout.toPolicy}, ${selection}, revision ${rollout.revision}, ${cutover}` +
    holdText(rollout)
  );
}

/** For a rollout the server drives: its holds, its gates and their last readings. */
function holdText(rollout: Rollout): string {
  if (rollout.holdSeconds === null) return '';
  const holds = [...new Set(rollout.holdSeconds)];
  const held =
    holds.length === 1 ? `${holds[0]} s per step` : `${rollout.holdSeconds.join(', ')} s`;
  const gates = rollout.gates.map((gate) => {
    const reading = rollout.gateResults.find((result) => result.name === gate.name);
    return reading === undefined
      ? gate.name
      : `${gate.name} ${reading.verdict} (${reading.value ?? '-'} of ${reading.samples})`;
  });
  return (
    `, held ${held}, on failure ${rollout.onFailure}` +
    (gates.length === 0 ? '' : `, gates: ${gates.join('; ')}`)
  );
}

/**
 * The report: the rollout, a table of its steps (scopes moved, commits accepted, scopes pinned at
 * acquire, unknown outcomes and toPolicy jobs on the step's scopes), then the rollback with its
 * stale attempts and how many were accepted, which must be 0.
 */
export function reportText(report: RolloutReport): string {
  const lines = [rolloutLine(report.rollout), ''];
  const header = [
    'step',
    'cutover',
    'percent',
    'status',
    'moved',
    'skipped',
    'commits accepted',
    'pinned',
    'unknown outcomes',
    `${report.rollout.toPolicy} jobs`,
  ];
  const rows = report.steps.map((step, i) => [
    String(i + 1),
    step.cutoverId,
    `${step.percent} %`,
    step.status,
    String(step.moved),
    String(step.skipped),
    String(step.commitsAccepted),
    String(step.pinnedAtAcquire),
    String(step.unknownOutcomes),
    String(step.toPolicyJobs.total),
  ]);
  lines.push(...table([header, ...rows]), '');
  lines.push(`pinned to ${report.rollout.toPolicy} at acquire: ${report.pinnedAtAcquire}`);
  const { rollback } = report;
  if (rollback === null) {
    lines.push('rollback: none');
  } else {
    lines.push(
      `rollback ${rollback.cutoverId}: ${rollback.status}, moved back ${rollback.moved}, ` +
        `skipped ${rollback.skipped.length}, intents cancelled ${rollback.intentsCancelled}`,
      `  stale attempts ${rollback.staleAttempts}, staleAccepted ${rollback.staleAccepted} (must be 0)`,
    );
    if (rollback.skipped.length > 0) lines.push(`  skipped: ${rollback.skipped.join(', ')}`);
  }
  lines.push(`intents with an unknown outcome: ${report.unknownOutcomes}`);
  const states = JOB_STATES.filter((state) => report.toPolicyJobs.byState[state] > 0)
    .map((state) => `${state} ${report.toPolicyJobs.byState[state]}`)
    .join(', ');
  lines.push(
    `${report.rollout.toPolicy} jobs: ${report.toPolicyJobs.total}${states === '' ? '' : ` (${states})`}`,
  );
  return lines.join('\n');
}

/** Columns padded to their widest cell; numbers are right-aligned. */
function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) =>
    row
      .map((cell, column) =>
        /^\d/.test(cell) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!),
      )
      .join('  ')
      .trimEnd(),
  );
}
