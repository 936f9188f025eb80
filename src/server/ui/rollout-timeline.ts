/**
 * A rollout's history as the Rollouts panel draws it, read from its report: the share of the
 * selection ramped to toPolicy over time, and the events on the time axis. Each step's cutover
 * says when it started and finished; a step under way is drawn as far as its cutover has moved
 * (moved of planned), and a rollback brings the share down by the scopes it moved back.
 *
 * Rollout state changes are not in the audit log, so a pause shows only while the rollout is
 * paused (at its last change), and a pause that was resumed leaves no mark.
 */
import type { RolloutReport } from '../../types.js';

export type RolloutEventKind = 'start' | 'step' | 'pause' | 'rollback' | 'complete';

export interface RolloutEvent {
  kind: RolloutEventKind;
  at: number;
  /** What the mark says: `step 2 · 25 %`, `rolled back`, … */
  label: string;
}

export interface TimelinePoint {
  at: number;
  percent: number;
}

export interface RolloutTimeline {
  from: number;
  to: number;
  points: TimelinePoint[];
  events: RolloutEvent[];
}

/** How many scopes the cutover under way lists, when one is running; from its cutover report. */
export type PlannedOf = (cutoverId: string) => number | undefined;

/** The share `moved` of `planned` takes from `before` towards `after`. */
function partWay(
  before: number,
  after: number,
  moved: number,
  planned: number | undefined,
): number {
  if (planned === undefined || planned <= 0) return before;
  return before + (after - before) * Math.min(1, moved / planned);
}

export function rolloutTimeline(
  report: RolloutReport,
  now: number,
  plannedOf: PlannedOf,
): RolloutTimeline {
  const { rollout } = report;
  const finished = rollout.status === 'completed' || rollout.status === 'rolled_back';
  const to = finished ? rollout.updatedAt : Math.max(now, rollout.updatedAt);
  const points: TimelinePoint[] = [{ at: rollout.startedAt, percent: 0 }];
  const events: RolloutEvent[] = [{ kind: 'start', at: rollout.startedAt, label: 'start' }];
  // A step the rollback interrupted moves nothing after the rollback starts.
  const stepsEnd = report.rollback?.startedAt ?? to;
  let percent = 0;
  report.steps.forEach((step, i) => {
    events.push({ kind: 'step', at: step.startedAt, label: `step ${i + 1} · ${step.percent} %` });
    points.push({ at: step.startedAt, percent });
    if (step.completedAt !== null) {
      percent = step.percent;
      points.push({ at: step.completedAt, percent });
    } else {
      percent = partWay(percent, step.percent, step.moved, plannedOf(step.cutoverId));
      points.push({ at: stepsEnd, percent });
    }
  });
  const { rollback } = report;
  if (rollback !== null) {
    events.push({ kind: 'rollback', at: rollback.startedAt, label: 'rollback' });
    points.push({ at: rollback.startedAt, percent });
    // The scopes it leaves (taken over, deleted, moved otherwise) stay where they are.
    const listed = rollback.moved + rollback.skipped.length;
    const planned = rollback.completedAt === null ? plannedOf(rollback.cutoverId) : listed;
    percent = partWay(percent, 0, rollback.moved, planned);
    points.push({ at: rollback.completedAt ?? to, percent });
    if (rollback.completedAt !== null) {
      events.push({ kind: 'complete', at: rollback.completedAt, label: 'rolled back' });
    }
  }
  if (rollout.status === 'paused') {
    events.push({ kind: 'pause', at: rollout.updatedAt, label: 'paused' });
  }
  if (rollout.status === 'completed') {
    events.push({ kind: 'complete', at: rollout.updatedAt, label: 'completed' });
  }
  points.push({ at: to, percent });
  return { from: rollout.startedAt, to, points, events };
}
