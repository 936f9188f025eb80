/**
 * Commits and rejected commits per minute (from the audit log, see ../activity.ts): one stacked
 * bar per minute, committed at the bottom and each rejection code above it, with a legend. Each
 * part of a bar has a `<title>` with its figure, and a compact table below lists only the minutes
 * that had commits, so a quiet tenant reads "nothing happened" rather than a wall of zeros.
 */
import type { ActivityView, MinuteCounts } from '../activity.js';
import { html, type Html } from '../html.js';
import {
  at,
  axes,
  codeColor,
  COMMITTED_COLOR,
  legendEntry,
  svg,
  xTick,
  yTick,
  type Frame,
} from './chart.js';

const FRAME: Frame = { width: 640, height: 190, left: 44, right: 8, top: 10, bottom: 34 };
const BAR_SHARE = 0.7;

function minuteText(minute: number): string {
  return new Date(minute).toISOString().slice(11, 16);
}

function total(minute: MinuteCounts): number {
  return minute.committed + Object.values(minute.rejected).reduce((a, b) => a + b, 0);
}

/** The y axis's top: the busiest minute rounded up to 1, 2 or 5 times a power of ten. */
function scaleTop(busiest: number): number {
  for (let power = 1; ; power *= 10) {
    for (const factor of [1, 2, 5]) if (factor * power >= busiest) return factor * power;
  }
}

/** Every whole number up to a small top; otherwise the ends and, when whole, the middle. */
function tickValues(top: number): number[] {
  if (top <= 5) return [...Array(top + 1).keys()];
  return Number.isInteger(top / 2) ? [0, top / 2, top] : [0, top];
}

function bars(minutes: MinuteCounts[], reasons: string[], top: number): Html[] {
  const plotWidth = FRAME.width - FRAME.left - FRAME.right;
  const plotHeight = FRAME.height - FRAME.top - FRAME.bottom;
  const slot = plotWidth / minutes.length;
  return minutes.map((minute, i) => {
    const x = FRAME.left + i * slot + (slot * (1 - BAR_SHARE)) / 2;
    const parts: [string, string, number][] = [
      ['committed', COMMITTED_COLOR, minute.committed],
      ...reasons.map((reason): [string, string, number] => [
        reason,
        codeColor(reason),
        minute.rejected[reason] ?? 0,
      ]),
    ];
    let base = FRAME.height - FRAME.bottom;
    const rects = parts
      .filter(([, , count]) => count > 0)
      .map(([series, color, count]) => {
        const height = (count / top) * plotHeight;
        base -= height;
        return html`<rect
          x="${at(x)}"
          y="${at(base)}"
          width="${at(slot * BAR_SHARE)}"
          height="${at(height)}"
          fill="${color}"
          data-series="${series}"
          data-count="${count}"
          ><title>${minuteText(minute.minute)} UTC: ${count} ${series}</title></rect
        >`;
      });
    return html`<g data-minute="${minuteText(minute.minute)}">
      ${rects}${xTick(FRAME, at(FRAME.left + (i + 0.5) * slot), minuteText(minute.minute))}
    </g>`;
  });
}

function chart(view: ActivityView, oldestFirst: MinuteCounts[]): Html {
  const busiest = Math.max(0, ...oldestFirst.map(total));
  const top = scaleTop(busiest);
  const plotHeight = FRAME.height - FRAME.top - FRAME.bottom;
  const ticks = tickValues(top).map((value) =>
    yTick(FRAME, at(FRAME.height - FRAME.bottom - (value / top) * plotHeight), String(value)),
  );
  return svg(
    FRAME,
    `commits per minute, the last ${oldestFirst.length} minutes`,
    html`${ticks}${axes(FRAME, 'commits', 'minute (UTC)')}${bars(oldestFirst, view.reasons, top)}
    ${busiest === 0 ? html`<text x="${FRAME.left + 12}" y="${FRAME.top + 14}" fill="#6b7480">no commits</text>` : null}`,
  );
}

/** The minutes with commits, newest first; counts under right-aligned headers. */
function table(view: ActivityView): Html {
  const busy = view.minutes.filter((minute) => total(minute) > 0);
  if (busy.length === 0) {
    return html`<p class="muted">no commits in the last ${view.minutes.length} minutes</p>`;
  }
  return html`<table class="compact">
    <thead>
      <tr>
        <th>minute (UTC)</th>
        <th class="num">committed</th>
        ${view.reasons.map((reason) => html`<th class="num">${reason}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${busy.map(
        (minute) =>
          html`<tr>
            <td>${minuteText(minute.minute)}</td>
            <td class="num">${minute.committed}</td>
            ${view.reasons.map((reason) => {
              const count = minute.rejected[reason] ?? 0;
              return html`<td class="num${count > 0 ? ' warn' : ''}" data-reason="${reason}">
                ${count}
              </td>`;
            })}
          </tr>`,
      )}
    </tbody>
  </table>`;
}

export function activityPanel(view: ActivityView): Html {
  const oldestFirst = [...view.minutes].reverse();
  return html`${chart(view, oldestFirst)}
    <ul class="legend">
      ${legendEntry(COMMITTED_COLOR, 'committed')}
      ${view.reasons.map((reason) => legendEntry(codeColor(reason), `rejected: ${reason}`))}
    </ul>
    ${table(view)} ${view.caughtUp ? null : html`<p class="muted">reading older history…</p>`}`;
}
