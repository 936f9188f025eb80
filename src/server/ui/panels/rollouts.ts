/**
 * The tenant's active and recently finished rollouts: per rollout a chart of the share ramped to
 * toPolicy over time with its events on the time axis (see ../rollout-timeline.ts), its state, and
 * the counts of its report (scopes moved, and after a rollback the stale attempts and how many
 * were accepted, which must be 0). Below each chart are the rollout's gates, each its driver's
 * readings of the current step drawn against its limit on the same time axis; a rollout without
 * gates shows none.
 */
import type {
  Rollout,
  RolloutGate,
  RolloutGateReading,
  RolloutReport,
  RolloutStatus,
} from '../../../types.js';
import type { DashboardApi } from '../dashboard-api.js';
import { html, type Html } from '../html.js';
import {
  rolloutTimeline,
  type RolloutEventKind,
  type RolloutTimeline,
  type TimelinePoint,
} from '../rollout-timeline.js';
import { at, AXIS_COLOR, axes, svg, xTick, yTick, type Frame } from './chart.js';
import { timeText } from './format.js';

/** Finished rollouts are shown this long after their last change. */
export const RECENT_MS = 24 * 3_600_000;
const ROLLOUTS_SHOWN = 5;

const ACTIVE: readonly RolloutStatus[] = ['running', 'paused', 'rolling_back'];
const RAMP_COLOR = '#0b57d0';
const EVENT_COLORS: Record<RolloutEventKind, string> = {
  start: AXIS_COLOR,
  step: RAMP_COLOR,
  pause: '#9a6700',
  rollback: '#b3261e',
  complete: '#137333',
};
const FRAME: Frame = { width: 640, height: 210, left: 60, right: 12, top: 34, bottom: 34 };
const GATE_FRAME: Frame = { width: 640, height: 90, left: 60, right: 12, top: 8, bottom: 22 };

/** One of a gate's readings as drawn: its value against the limit it was held to. */
export interface GatePoint {
  at: number;
  value: number;
  /** The limit at this reading; null while it is not known (a baseline not read yet). */
  limit: number | null;
  /** Drawn red: over its limit, or a failed reading. */
  over: boolean;
}

/** A gate's readings over the rollout's time and the limit they must stay within. */
export interface GateChart {
  name: string;
  /** A limit that never changes (`max`; 0 for verify violations), drawn across the whole axis. */
  fixedLimit: number | null;
  points: GatePoint[];
  /** The latest reading, value or not; null before the driver's first look at the step. */
  last: RolloutGateReading | null;
}

/**
 * The limit a reading is drawn against: the gate's `max` (0 for verify violations), `maxRatio` ×
 * the reading's baseline, or for a significance test the baseline itself.
 */
function limitOf(gate: RolloutGate, reading: RolloutGateReading): number | null {
  if (gate.max !== undefined) return gate.max;
  if (gate.metric === 'verify_violations') return 0;
  if (reading.limit !== null) return reading.limit;
  if (reading.baseline === null) return null;
  return gate.maxRatio === undefined ? reading.baseline : gate.maxRatio * reading.baseline;
}

/**
 * Each gate's readings of the current step (the report's `gateSeries`), those with a value as
 * points against their limit. A significance test is red only where it failed: its line is the
 * baseline, which the new version may exceed by chance.
 */
export function gateCharts(report: RolloutReport): GateChart[] {
  return report.rollout.gates.map((gate) => {
    const readings = report.gateSeries.find((series) => series.name === gate.name)?.readings ?? [];
    const points = readings.flatMap((reading) => {
      if (reading.value === null) return [];
      const limit = limitOf(gate, reading);
      const over =
        reading.verdict === 'fail' ||
        (gate.confidence === undefined && limit !== null && reading.value > limit);
      return [{ at: reading.at, value: reading.value, limit, over }];
    });
    const fixedLimit = gate.max ?? (gate.metric === 'verify_violations' ? 0 : null);
    return { name: gate.name, fixedLimit, points, last: readings.at(-1) ?? null };
  });
}

/** Active rollouts first, then those finished within RECENT_MS, each group newest change first. */
export function shownRollouts(rollouts: readonly Rollout[], now: number): Rollout[] {
  const active = rollouts.filter((r) => ACTIVE.includes(r.status));
  const recent = rollouts.filter(
    (r) => !ACTIVE.includes(r.status) && r.updatedAt >= now - RECENT_MS,
  );
  const newest = (a: Rollout, b: Rollout) => b.updatedAt - a.updatedAt;
  return [...active.sort(newest), ...recent.sort(newest)];
}

function timeOfDay(ms: number): string {
  return timeText(ms).slice(11);
}

/** Time to x and value to y over one frame. */
function scales(frame: Frame, timeline: RolloutTimeline, top: number) {
  const span = Math.max(timeline.to - timeline.from, 1000);
  const plotWidth = frame.width - frame.left - frame.right;
  const plotHeight = frame.height - frame.top - frame.bottom;
  return {
    x: (time: number) => at(frame.left + ((time - timeline.from) / span) * plotWidth),
    y: (value: number) => at(frame.height - frame.bottom - (value / top) * plotHeight),
  };
}

function timeTicks(frame: Frame, timeline: RolloutTimeline): Html {
  return html`${xTick(frame, frame.left, timeOfDay(timeline.from), 'start')}
  ${xTick(frame, frame.width - frame.right, timeOfDay(timeline.to), 'end')}`;
}

function line(points: string, color: string, dashed = false): Html {
  return html`<polyline
    points="${points}"
    fill="none"
    stroke="${color}"
    stroke-width="2"
    stroke-dasharray="${dashed ? '4 3' : 'none'}"
  />`;
}

function rampChart(rollout: Rollout, timeline: RolloutTimeline): Html {
  const { x, y } = scales(FRAME, timeline, 100);
  const ramp = timeline.points.map((p: TimelinePoint) => `${x(p.at)},${y(p.percent)}`).join(' ');
  const marks = timeline.events.map((event, i) => {
    const ex = x(event.at);
    // Labels alternate between two rows so that marks close in time stay readable.
    const row = i % 2 === 0 ? 12 : 26;
    // A label at either end of the axis is written inwards, so that it is not cut off.
    const anchor =
      ex > FRAME.width - FRAME.right - 40 ? 'end' : ex < FRAME.left + 40 ? 'start' : 'middle';
    return html`<g data-event="${event.kind}">
      <line
        x1="${ex}"
        y1="${row + 3}"
        x2="${ex}"
        y2="${FRAME.height - FRAME.bottom}"
        stroke="${EVENT_COLORS[event.kind]}"
        stroke-dasharray="3 3"
      />
      <text x="${ex}" y="${row}" text-anchor="${anchor}" fill="${EVENT_COLORS[event.kind]}">
        ${event.label}
      </text>
      <title>${timeText(event.at)} UTC: ${event.label}</title>
    </g>`;
  });
  return svg(
    FRAME,
    `rollout ${rollout.rolloutId}: share ramped to ${rollout.toPolicy} over time`,
    html`${[0, 50, 100].map((value) => yTick(FRAME, y(value), `${value} %`))}
    ${axes(FRAME, `on ${rollout.toPolicy}`, 'time (UTC)')} ${timeTicks(FRAME, timeline)}
    ${line(ramp, RAMP_COLOR)} ${marks}`,
  );
}

const OVER_COLOR = '#b3261e';
const UNDER_COLOR = '#137333';

/** A number as a chart writes it: three significant digits at most. */
function shortNumber(value: number): string {
  return String(Number(value.toPrecision(3)));
}

/** What the gate's latest reading says, beside its name. */
function lastReading(last: RolloutGateReading | null): string {
  if (last === null) return 'not read yet';
  const value = last.value === null ? 'no value' : shortNumber(last.value);
  const limit = last.limit === null ? '' : ` / limit ${shortNumber(last.limit)}`;
  return `${last.verdict}: ${value}${limit}, ${last.samples} sample${last.samples === 1 ? '' : 's'}`;
}

/**
 * One gate's readings on the rollout's time axis, a point each, joined by a line that is red
 * where it rises over the limit; the limit is a dashed line (across the axis when fixed, else
 * through each reading's limit).
 */
export function gateChart(gate: GateChart, timeline: RolloutTimeline): Html {
  const limits = gate.points.flatMap((p) => (p.limit === null ? [] : [p.limit]));
  if (gate.fixedLimit !== null) limits.push(gate.fixedLimit);
  const top = Math.max(...limits, ...gate.points.map((p) => p.value), 0) * 1.1 || 1;
  const { x, y } = scales(GATE_FRAME, timeline, top);
  const shownLimit = gate.fixedLimit ?? limits.at(-1) ?? null;
  const limitPoints =
    gate.fixedLimit !== null
      ? `${x(timeline.from)},${y(gate.fixedLimit)} ${x(timeline.to)},${y(gate.fixedLimit)}`
      : gate.points
          .filter((p) => p.limit !== null)
          .map((p) => `${x(p.at)},${y(p.limit!)}`)
          .join(' ');
  const segments = gate.points.slice(1).map((p, i) => {
    const from = gate.points[i]!;
    return html`<line
      x1="${x(from.at)}"
      y1="${y(from.value)}"
      x2="${x(p.at)}"
      y2="${y(p.value)}"
      stroke="${p.over || from.over ? OVER_COLOR : UNDER_COLOR}"
      stroke-width="1.5"
    />`;
  });
  const bad = gate.points.at(-1)?.over === true;
  // A limit close to 0 is labelled alone: the two labels would overlap.
  const zeroShown = shownLimit === null || y(0) - y(shownLimit) >= 12;
  return html`<div class="gate" data-gate="${gate.name}">
    ${svg(
      GATE_FRAME,
      `gate ${gate.name}: its readings against its limit`,
      html`${zeroShown ? yTick(GATE_FRAME, y(0), '0') : null}
      ${shownLimit === null ? null : yTick(GATE_FRAME, y(shownLimit), `limit ${shortNumber(shownLimit)}`)}
      ${axes(GATE_FRAME, '', '')} ${timeTicks(GATE_FRAME, timeline)}
      ${limitPoints === '' ? null : html`<g data-limit="${shownLimit}">${line(limitPoints, AXIS_COLOR, true)}</g>`}
      ${segments}
      ${gate.points.map(
        (p) =>
          html`<circle
            data-reading="${p.over ? 'over' : 'within'}"
            cx="${x(p.at)}"
            cy="${y(p.value)}"
            r="3"
            fill="${p.over ? OVER_COLOR : UNDER_COLOR}"
          >
            <title>
              ${timeText(p.at)} UTC: ${p.value}${p.limit === null ? '' : ` (limit ${p.limit})`}
            </title>
          </circle>`,
      )}`,
    )}
    <span class="gate-name">
      <b class="${bad ? 'bad' : 'ok'}">${gate.name}</b>
      <span class="muted">${lastReading(gate.last)}</span>
    </span>
  </div>`;
}

function gatesSection(gates: readonly GateChart[], timeline: RolloutTimeline): Html {
  return html`<div class="gates">
    <h3>Gates</h3>
    ${
      gates.length === 0
        ? html`<p class="muted">no gates</p>`
        : gates.map((gate) => gateChart(gate, timeline))
    }
  </div>`;
}

function counts(report: RolloutReport): Html {
  const moved = report.steps.reduce((sum, step) => sum + step.moved, 0);
  const { rollback } = report;
  return html`<dl class="facts">
    <dt>moved to ${report.rollout.toPolicy}</dt>
    <dd data-count="moved">${moved}</dd>
    <dt>moved back</dt>
    <dd data-count="moved-back">${rollback === null ? '—' : rollback.moved}</dd>
    <dt>stale attempts</dt>
    <dd data-count="staleAttempts">${rollback === null ? '—' : rollback.staleAttempts}</dd>
    <dt>stale accepted</dt>
    <dd data-count="staleAccepted" class="${(rollback?.staleAccepted ?? 0) === 0 ? 'ok' : 'bad'}">
      ${rollback === null ? '—' : rollback.staleAccepted}
    </dd>
  </dl>`;
}

export function rolloutCard(
  report: RolloutReport,
  timeline: RolloutTimeline,
  gates: readonly GateChart[],
): Html {
  const { rollout } = report;
  return html`<article class="rollout" data-rollout="${rollout.rolloutId}">
    <header>
      <b>${rollout.rolloutId}</b> ${rollout.fromPolicy} → ${rollout.toPolicy}
      <span class="rollout-status status-${rollout.status}">${rollout.status}</span>
      at ${rollout.percent} % (step ${rollout.step} of ${rollout.steps.length}:
      ${rollout.steps.join(', ')})
    </header>
    ${rollout.reason === null ? null : html`<p class="muted reason">${rollout.reason}</p>`}
    ${rampChart(rollout, timeline)} ${counts(report)}
    <ol class="events">
      ${timeline.events.map(
        (event) => html`<li data-event="${event.kind}">${timeOfDay(event.at)} ${event.label}</li>`,
      )}
    </ol>
    ${gatesSection(gates, timeline)}
  </article>`;
}

/** The cutovers still moving scopes, with how many scopes each lists. */
async function plannedOfRunning(
  api: DashboardApi,
  reports: readonly RolloutReport[],
): Promise<Map<string, number>> {
  const running = reports.flatMap((report) =>
    [...report.steps, ...(report.rollback === null ? [] : [report.rollback])]
      .filter((part) => part.completedAt === null)
      .map((part) => part.cutoverId),
  );
  const planned = new Map<string, number>();
  for (const cutoverId of running) {
    const cutover = await api.cutoverReport(cutoverId);
    if (cutover !== null) planned.set(cutoverId, cutover.scopes);
  }
  return planned;
}

export async function rolloutsPanel(api: DashboardApi, now: number): Promise<Html> {
  const all = shownRollouts(await api.rollouts.list(), now);
  const shown = all.slice(0, ROLLOUTS_SHOWN);
  const reports = (await Promise.all(shown.map((r) => api.rollouts.report(r.rolloutId)))).filter(
    (report): report is RolloutReport => report !== null,
  );
  const planned = await plannedOfRunning(api, reports);
  return html`${
    reports.length === 0 ? html`<p class="muted">no active or recently finished rollouts</p>` : null
  }
  ${reports.map((report) =>
    rolloutCard(
      report,
      rolloutTimeline(report, now, (id) => planned.get(id)),
      gateCharts(report),
    ),
  )}
  ${
    all.length > shown.length
      ? html`<p class="muted">${all.length - shown.length} more: GET /v1/rollouts</p>`
      : null
  }`;
}
