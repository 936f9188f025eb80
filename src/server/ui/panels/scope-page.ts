/**
 * One scope: its authority, its records a page at a time (names and revisions; a record's value is
 * read only when its own page is opened, so a large scope costs one page of names per view), its
 * intents and its history (scope-history.ts).
 */
import type { DashboardApi } from '../dashboard-api.js';
import { html, nameLink, pathSegment, withQuery, type Html } from '../html.js';
import { leaseLeft, timeText } from './format.js';
import { INTENT_HEAD, intentRows } from './intents.js';
import { scopeHistory } from './scope-history.js';

const INTENTS_SHOWN = 50;
export const RECORDS_PER_PAGE = 25;

export async function scopeDetail(
  api: DashboardApi,
  name: string,
  now: number,
  cursor: string | undefined,
  historyAfter?: number,
): Promise<Html> {
  const scope = await api.getScope(name);
  if (scope === null) return html`<p class="muted">no scope named <b>${name}</b></p>`;
  const here = `/ui/scopes/${pathSegment(name) ?? ''}`;
  const [page, intents, history] = await Promise.all([
    api.listRecordsPage(name, {
      limit: RECORDS_PER_PAGE,
      ...(cursor === undefined ? {} : { cursor }),
    }),
    api.listIntents({ scope: name, limit: INTENTS_SHOWN }),
    scopeHistory(api, name, here, historyAfter),
  ]);
  const records = page.items;
  return html`<dl class="facts">
      <dt>holder</dt>
      <dd>${scope.holder ?? 'none'}</dd>
      <dt>fence</dt>
      <dd>${scope.fence}</dd>
      <dt>lease left</dt>
      <dd>${scope.holder === null ? '—' : leaseLeft(scope.leaseExpiresAt, now)}</dd>
      <dt>policy</dt>
      <dd>${scope.policyVersion ?? 'none'}</dd>
      <dt>status</dt>
      <dd>${scope.status}</dd>
      <dt>updated</dt>
      <dd>${timeText(scope.updatedAt)}</dd>
    </dl>
    <h3>Records</h3>
    <table>
      <thead>
        <tr>
          <th>name</th>
          <th class="num">revision</th>
          <th>exists</th>
          <th>updated</th>
        </tr>
      </thead>
      <tbody>
        ${
          records.length === 0
            ? html`<tr>
                <td colspan="4" class="muted">no records</td>
              </tr>`
            : records.map(
                (record) =>
                  html`<tr>
                    <td class="name">${nameLink(`${here}/records`, record.name)}</td>
                    <td class="num">${record.revision}</td>
                    <td>${record.exists ? 'yes' : 'deleted'}</td>
                    <td>${timeText(record.updatedAt)}</td>
                  </tr>`,
              )
        }
      </tbody>
    </table>
    <p class="pages">
      ${cursor === undefined ? null : html`<a href="${here}">first page</a>`}
      ${page.nextCursor === null ? null : html`<a class="next" href="${withQuery(here, { cursor: page.nextCursor })}">next page</a>`}
    </p>
    <h3>Intents</h3>
    <table>
      <thead>
        ${INTENT_HEAD}
      </thead>
      <tbody>
        ${
          intents.items.length === 0
            ? html`<tr>
                <td colspan="8" class="muted">no intents</td>
              </tr>`
            : intentRows(intents.items)
        }
      </tbody>
    </table>
    ${history}`;
}

/** One record of a scope, with its value: what the scope page links each record name to. */
export async function recordDetail(api: DashboardApi, scope: string, name: string): Promise<Html> {
  const record = await api.getRecord(scope, name);
  const back = `/ui/scopes/${pathSegment(scope) ?? ''}`;
  if (record.revision === 0) {
    return html`<p><a href="${back}">← scope ${scope}</a></p>
      <p class="muted">record <b>${name}</b> never existed in this scope</p>`;
  }
  return html`<p><a href="${back}">← scope ${scope}</a></p>
    <dl class="facts">
      <dt>record</dt>
      <dd class="name">${name}</dd>
      <dt>revision</dt>
      <dd>${record.revision}</dd>
      <dt>exists</dt>
      <dd>${record.exists ? 'yes' : 'deleted'}</dd>
      <dt>updated</dt>
      <dd>${timeText(record.updatedAt)}</dd>
    </dl>
    ${record.exists ? html`<pre class="value"><code>${JSON.stringify(record.value, null, 2)}</code></pre>` : null}`;
}
