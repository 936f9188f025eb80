/** Commits and rejected commits per minute, by reason (from the audit log, see ../activity.ts). */
import type { ActivityView } from '../activity.js';
import { html, type Html } from '../html.js';

export function activityPanel(view: ActivityView): Html {
  // Counts are right-aligned, so their headers are too: each sits over its own column.
  const head = view.reasons.map((reason) => html`<th class="num">${reason}</th>`);
  const rows = view.minutes.map(
    (minute) =>
      html`<tr>
        <td>${new Date(minute.minute).toISOString().slice(11, 16)}</td>
        <td class="num">${minute.committed}</td>
        ${view.reasons.map((reason) => {
          const count = minute.rejected[reason] ?? 0;
          return html`<td class="num${count > 0 ? ' warn' : ''}" data-reason="${reason}">
            ${count}
          </td>`;
        })}
      </tr>`,
  );
  return html`<table>
      <thead>
        <tr>
          <th rowspan="2">minute (UTC)</th>
          <th rowspan="2" class="num">committed</th>
          ${view.reasons.length === 0 ? null : html`<th colspan="${view.reasons.length}">rejected, by reason</th>`}
        </tr>
        <tr>
          ${head}
        </tr>
      </thead>
      <tbody>
        ${rows}
      </tbody>
    </table>
    ${view.caughtUp ? null : html`<p class="muted">reading older history…</p>`}`;
}
