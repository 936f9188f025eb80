/**
 * A scope's history from the audit log, oldest first and a page at a time: every grant with its
 * fence and holder (the fence and holder timeline), every commit, and every refused attempt with
 * the code that refused it.
 */
import type { DashboardApi } from '../dashboard-api.js';
import { html, withQuery, type Html } from '../html.js';
import { timeText } from './format.js';

export const HISTORY_PER_PAGE = 50;

export async function scopeHistory(
  api: DashboardApi,
  scope: string,
  here: string,
  afterSeq: number | undefined,
): Promise<Html> {
  const page = await api.audit({
    scope,
    limit: HISTORY_PER_PAGE,
    ...(afterSeq === undefined ? {} : { afterSeq }),
  });
  const rows = page.items.map(
    (entry) =>
      html`<tr class="${entry.outcome === 'rejected' ? 'bad' : ''}">
        <td class="num">${entry.seq}</td>
        <td>${timeText(entry.at)}</td>
        <td>${entry.kind}</td>
        <td>${entry.outcome}</td>
        <td class="num">${entry.fence ?? entry.currentFence ?? ''}</td>
        <td class="name">${entry.holder ?? ''}</td>
        <td>${entry.operationId ?? ''}</td>
        <td>${entry.reason ?? ''}</td>
      </tr>`,
  );
  return html`<h3>History</h3>
    <table>
      <thead>
        <tr>
          <th class="num">seq</th>
          <th>time (UTC)</th>
          <th>kind</th>
          <th>outcome</th>
          <th class="num" title="the fence presented, or the one granted">fence</th>
          <th>holder</th>
          <th>operationId</th>
          <th>reason</th>
        </tr>
      </thead>
      <tbody>
        ${
          rows.length === 0
            ? html`<tr>
                <td colspan="8" class="muted">no audit entries</td>
              </tr>`
            : rows
        }
      </tbody>
    </table>
    <p class="pages">
      ${afterSeq === undefined ? null : html`<a href="${here}">first entries</a>`}
      ${page.nextAfterSeq === null ? null : html`<a class="next" href="${withQuery(here, { after: String(page.nextAfterSeq) })}">later entries</a>`}
    </p>`;
}
