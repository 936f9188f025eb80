/**
 * What the dashboard's charts share: inline SVG drawn with presentation attributes only (fill=,
 * stroke=, x=, …). The Content-Security-Policy allows no inline style (`style-src 'self'`), so no
 * `style=` attribute and no `<style>` element ever appears; every text goes through `html`, so a
 * rejection code or a rollout id is shown as text.
 */
import { html, type Html } from '../html.js';

/** The plot area inside a chart of `width` × `height` user units, with room for the axes. */
export interface Frame {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

export const AXIS_COLOR = '#6b7480';
export const GRID_COLOR = '#d8dde3';
export const COMMITTED_COLOR = '#137333';

/** Colours of the known rejection codes; another code takes one of OTHER_COLORS by its name. */
const CODE_COLORS: Record<string, string> = {
  stale_fence: '#b3261e',
  not_holder: '#e8710a',
  lease_expired: '#9a6700',
  stale_revision: '#8430ce',
  policy_mismatch: '#1967d2',
  scope_deleted: '#5f6368',
};
const OTHER_COLORS = ['#c5221f', '#f29900', '#a142f4', '#12b5cb', '#e52592', '#7cb342'];

export function codeColor(code: string): string {
  const known = CODE_COLORS[code];
  if (known !== undefined) return known;
  let hash = 0;
  for (const char of code) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return OTHER_COLORS[hash % OTHER_COLORS.length]!;
}

/** An `<svg>` that scales to its container; `label` names it for screen readers. */
export function svg(frame: Frame, label: string, body: Html): Html {
  return html`<svg
    class="chart"
    viewBox="0 0 ${frame.width} ${frame.height}"
    width="${frame.width}"
    height="${frame.height}"
    role="img"
    aria-label="${label}"
    font-family="system-ui, sans-serif"
    font-size="11"
  >
    ${body}
  </svg>`;
}

/** A text at (x, y) in the axes' colour; `turn` writes it upwards. */
function label(x: number, y: number, text: string, anchor: string, turn = false): Html {
  return html`<text
    x="${x}"
    y="${y}"
    text-anchor="${anchor}"
    fill="${AXIS_COLOR}"
    ${turn ? html`transform="rotate(-90 ${x} ${y})"` : null}
  >
    ${text}
  </text>`;
}

/** A line from (x1, y1) to (x2, y2). */
function rule(x1: number, y1: number, x2: number, y2: number, color: string): Html {
  return html`<line x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" stroke="${color}" />`;
}

/** The two axis lines, and the y axis's title written upwards beside it. */
export function axes(frame: Frame, yTitle: string, xTitle: string): Html {
  const { width, height, left, right, top, bottom } = frame;
  return html`${rule(left, height - bottom, width - right, height - bottom, AXIS_COLOR)}
  ${rule(left, top, left, height - bottom, AXIS_COLOR)}
  ${label(12, top + (height - top - bottom) / 2, yTitle, 'middle', true)}
  ${label(left + (width - left - right) / 2, height - 4, xTitle, 'middle')}`;
}

/** A horizontal grid line at `y` with its value written left of the axis. */
export function yTick(frame: Frame, y: number, text: string): Html {
  return html`${rule(frame.left, y, frame.width - frame.right, y, GRID_COLOR)}
  ${label(frame.left - 4, y + 4, text, 'end')}`;
}

/** A label under the x axis at `x`. */
export function xTick(frame: Frame, x: number, text: string, anchor = 'middle'): Html {
  return label(x, frame.height - frame.bottom + 14, text, anchor);
}

/** A legend entry: a small square of the series' colour, then its name. */
export function legendEntry(color: string, name: string): Html {
  return html`<li>
    <svg width="10" height="10" aria-hidden="true">
      <rect width="10" height="10" fill="${color}" />
    </svg>
    ${name}
  </li>`;
}

/** A number for an SVG attribute: two decimals at most. */
export function at(value: number): number {
  return Math.round(value * 100) / 100;
}
