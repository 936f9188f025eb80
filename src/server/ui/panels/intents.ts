/**
 * Intents by status, the ones that need a person first (unknown: a delivery without a verdict;
 * needs_attention: given up), each with its attempts and last error.
 */
import { INTENT_STATUSES, type Intent, type IntentStatus } from '../../../types.js';
import type { DashboardApi } from '../dashboard-api.js';
import { html, nameLink, type Html } from '../html.js';
import { jsonText, timeText } from './format.js';

const FIRST: readonly IntentStatus[] = ['unknown', 'needs_attention'];
export const STATUS_ORDER: readonly IntentStatus[] = [
  ...FIRST,
  ...INTENT_STATUSES.filter((status) => !FIRST.includes(status)),
];
const PER_STATUS = 10;

export function intentRows(intents: readonly Intent[]): Html {
  return html`${intents.map(
    (intent) =>
      html`<tr>
        <td class="name">${intent.effectKey}</td>
        <td class="name">${nameLink('/ui/scopes', intent.scope)}</td>
        <td>${intent.target}</td>
        <td class="status-${intent.status}">${intent.status}</td>
        <td class="num">${intent.attempts}</td>
        <td>${intent.lastError ?? ''}</td>
        <td>${timeText(intent.updatedAt)}</td>
        <td><code>${jsonText(intent.payload)}</code></td>
      </tr>`,
  )}`;
}

export const INTENT_HEAD = html`<tr>
  <th>effectKey</th>
  <th>scope</th>
  <th>target</th>
  <th>status</th>
  <th class="num">attempts</th>
  <th>last error</th>
  <th>updated</th>
  <th>payload</th>
</tr>`;

export async function intentsPanel(api: DashboardApi): Promise<Html> {
  const pages = await Promise.all(
    STATUS_ORDER.map(async (status) => ({
      status,
      page: await api.listIntents({ status, limit: PER_STATUS }),
    })),
  );
  const counts = pages.map(
    ({ status, page }) =>
      html`<li class="status-${status}">
        ${status}: <b>${page.items.length}${page.nextCursor === null ? '' : '+'}</b>
      </li>`,
  );
  const rows = pages.flatMap(({ page }) => page.items);
  return html`<ul class="counts">
      ${counts}
    </ul>
    <table>
      <thead>
        ${INTENT_HEAD}
      </thead>
      <tbody>
        ${
          rows.length === 0
            ? html`<tr>
                <td colspan="8" class="muted">no intents</td>
              </tr>`
            : intentRows(rows)
        }
      </tbody>
    </table>`;
}
