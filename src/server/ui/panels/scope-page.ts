/** One scope: its authority, its records (values shown as text) and its intents. */
import type { DashboardApi } from '../dashboard-api.js';
import { html, type Html } from '../html.js';
import { jsonText, leaseLeft, timeText } from './format.js';
import { INTENT_HEAD, intentRows } from './intents.js';

const INTENTS_SHOWN = 50;

export async function scopeDetail(api: DashboardApi, name: string, now: number): Promise<Html> {
  const scope = await api.getScope(name);
  if (scope === null) return html`<p class="muted">no scope named <b>${name}</b></p>`;
  const [records, intents] = await Promise.all([
    api.listRecords(name),
    api.listIntents({ scope: name, limit: INTENTS_SHOWN }),
  ]);
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
          <th>revision</th>
          <th>exists</th>
          <th>updated</th>
          <th>value</th>
        </tr>
      </thead>
      <tbody>
        ${
          records.length === 0
            ? html`<tr>
                <td colspan="5" class="muted">no records</td>
              </tr>`
            : records.map(
                (record) =>
                  html`<tr>
                    <td class="name">${record.name}</td>
                    <td class="num">${record.revision}</td>
                    <td>${record.exists ? 'yes' : 'deleted'}</td>
                    <td>${timeText(record.updatedAt)}</td>
                    <td><code>${record.exists ? jsonText(record.value) : ''}</code></td>
                  </tr>`,
              )
        }
      </tbody>
    </table>
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
    </table>`;
}
