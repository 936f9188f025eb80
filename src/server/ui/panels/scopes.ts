/** Scopes with holder, fence, lease time left, policy version and status; paged, filtered by prefix. */
import { html, nameLink, withQuery, type Html } from '../html.js';
import type { DashboardApi } from '../dashboard-api.js';
import { leaseLeft } from './format.js';

export const SCOPES_PER_PAGE = 25;

export interface ScopesQuery {
  prefix?: string;
  cursor?: string;
}

export async function scopesPanel(
  api: DashboardApi,
  query: ScopesQuery,
  now: number,
): Promise<Html> {
  const page = await api.listScopes({
    limit: SCOPES_PER_PAGE,
    ...(query.prefix === undefined || query.prefix === '' ? {} : { prefix: query.prefix }),
    ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
  });
  const rows = page.items.map(
    (scope) =>
      html`<tr>
        <td class="name">${nameLink('/ui/scopes', scope.scope)}</td>
        <td>${scope.holder ?? html`<span class="muted">none</span>`}</td>
        <td class="num">${scope.fence}</td>
        <td>
          ${scope.holder === null ? html`<span class="muted">—</span>` : leaseLeft(scope.leaseExpiresAt, now)}
        </td>
        <td>${scope.policyVersion ?? html`<span class="muted">none</span>`}</td>
        <td class="status-${scope.status}">${scope.status}</td>
      </tr>`,
  );
  const next =
    page.nextCursor === null
      ? null
      : html`<a
          class="next"
          href="${withQuery('/ui', { prefix: query.prefix, cursor: page.nextCursor })}"
          >next page</a
        >`;
  const first =
    query.cursor === undefined
      ? null
      : html`<a href="${withQuery('/ui', { prefix: query.prefix })}">first page</a>`;
  return html`<table>
      <thead>
        <tr>
          <th>scope</th>
          <th>holder</th>
          <th class="num">fence</th>
          <th>lease left</th>
          <th>policy</th>
          <th>status</th>
        </tr>
      </thead>
      <tbody>
        ${
          rows.length === 0
            ? html`<tr>
                <td colspan="6" class="muted">no scopes</td>
              </tr>`
            : rows
        }
      </tbody>
    </table>
    <p class="paging">${first} ${next}</p>`;
}
