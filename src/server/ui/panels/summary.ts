/** The summary strip: one figure per question, marked when it is not zero (see ../summary.ts). */
import { html, type Html } from '../html.js';
import { RECENT_MINUTES, type SummaryFigures } from '../summary.js';

export function summaryPanel(figures: SummaryFigures): Html {
  const items: [string, number | string, string][] = [
    ['violations', figures.violations, 'verify violations'],
    ['stale_accepted', figures.staleAccepted, 'stale commits accepted (latest cutover)'],
    ['unknown_intents', figures.unknownIntents, 'intents with an unknown outcome'],
    ['needs_attention', figures.needsAttention, 'intents needing attention'],
    ['rejected_10_min', figures.rejectedRecently, `commits rejected, last ${RECENT_MINUTES} min`],
  ];
  return html`<ul class="summary">
    ${items.map(
      ([name, value, label]) =>
        html`<li data-figure="${name}" class="${value === 0 || value === '0' ? 'ok' : 'bad'}">
          <span class="big">${String(value)}</span> ${label}
        </li>`,
    )}
  </ul>`;
}
