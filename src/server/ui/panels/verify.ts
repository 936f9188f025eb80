/**
 * The verify status of the tenant's history and its violations (must be none), as the server's
 * background verifier last found it: the panel replays nothing itself, so a tab left open costs
 * the server no work, and it shows the signed-in tenant's entries and violations only.
 */
import type { TenantVerification } from '../../../audit/tenant-verifications.js';
import { html, type Html } from '../html.js';
import { timeText } from './format.js';

export interface VerifyStatus extends TenantVerification {
  /** When the background verifier last reached the end of the log; null before it first did. */
  lastRunAt: number | null;
  /** seq of the last entry it verified (every tenant's log), or null. */
  lastSeq: number | null;
}

export function verifyPanel(status: VerifyStatus): Html {
  const rows = status.firstViolations.map(
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
  const ok = status.violations === 0;
  return html`<p class="verdict ${ok ? 'ok' : 'bad'}">
      <span class="big">${status.violations}</span> violations in ${status.checked} audit entries
      checked
    </p>
    <p class="muted">
      ${
        status.lastRunAt === null
          ? 'the server is verifying the history for the first time…'
          : `verified in the background through seq ${status.lastSeq ?? 0}, last at ${timeText(status.lastRunAt)} UTC`
      }
    </p>
    ${
      rows.length === 0
        ? null
        : html`<table>
            <thead>
              <tr>
                <th class="num">seq</th>
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
