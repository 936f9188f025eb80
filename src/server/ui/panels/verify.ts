/** The verify status of the tenant's history and its violations (must be none). */
import type { DashboardApi } from '../dashboard-api.js';
import { html, type Html } from '../html.js';

const VIOLATIONS_SHOWN = 50;

export async function verifyPanel(api: DashboardApi): Promise<Html> {
  const report = await api.verify();
  const rows = report.violations.slice(0, VIOLATIONS_SHOWN).map(
    (violation) =>
      html`<tr>
        <td class="num">${violation.seq}</td>
        <td class="name">${violation.scope ?? ''}</td>
        <td>${violation.kind}</td>
        <td>${violation.expected ?? ''}</td>
        <td>${violation.found ?? ''}</td>
        <td>${violation.message}</td>
      </tr>`,
  );
  return html`<p class="verdict ${report.ok ? 'ok' : 'bad'}">
      <span class="big">${report.violations.length}</span> violations in ${report.checked} audit
      entries checked
    </p>
    ${
      rows.length === 0
        ? null
        : html`<table>
            <thead>
              <tr>
                <th>seq</th>
                <th>scope</th>
                <th>kind</th>
                <th>expected</th>
                <th>found</th>
                <th>message</th>
              </tr>
            </thead>
            <tbody>
              ${rows}
            </tbody>
          </table>`
    }`;
}
