/** Cutovers, newest first, with their progress and drain-and-reconcile report. */
import type { CutoverReport, CutoverSummary, Policy } from '../../../types.js';
import type { DashboardApi } from '../dashboard-api.js';
import { html, type Html } from '../html.js';
import { timeText } from './format.js';

const CUTOVERS_SHOWN = 5;

function counts(record: Record<string, number>): Html {
  const entries = Object.entries(record).filter(([, n]) => n > 0);
  if (entries.length === 0) return html`<span class="muted">none</span>`;
  return html`${entries.map(([key, n], i) => html`${i > 0 ? ', ' : ''}${key} ${n}`)}`;
}

function cutoverCard(cutover: CutoverSummary, report: CutoverReport | null): Html {
  const running = cutover.finishedAt === null;
  const staleAccepted = report?.staleAccepted ?? 0;
  return html`<article class="cutover" data-cutover="${cutover.cutoverId}">
    <header>
      <b>${cutover.cutoverId}</b> → policy <b>${cutover.toPolicy}</b>, controller ${cutover.holder}
      <span class="${running ? 'warn' : 'ok'}">${running ? 'running' : 'completed'}</span>
    </header>
    <p>
      <progress
        max="${Math.max(cutover.scopes, 1)}"
        value="${cutover.scopes === 0 ? 1 : cutover.moved}"
      ></progress>
      <span class="progress">${cutover.moved} / ${cutover.scopes} scopes moved</span>
    </p>
    <p class="muted">
      started
      ${timeText(cutover.startedAt)}${running ? '' : ` · finished ${timeText(cutover.finishedAt)}`}
    </p>
    ${
      report === null
        ? null
        : html`<div class="report">
            <div class="stale-accepted ${staleAccepted === 0 ? 'ok' : 'bad'}">
              <span class="big">${staleAccepted}</span> stale accepted
            </div>
            <dl>
              <dt>stale attempts</dt>
              <dd>${report.staleAttempts}</dd>
              <dt>refused, by reason</dt>
              <dd>${counts(report.staleRejectedByReason)}</dd>
              <dt>old jobs</dt>
              <dd>${report.oldJobs.total} (${counts(report.oldJobs.byState)})</dd>
              <dt>live commits</dt>
              <dd>${report.liveCommits}</dd>
            </dl>
          </div>`
    }
  </article>`;
}

function policyList(policies: readonly Policy[]): Html {
  if (policies.length === 0) return html`<p class="muted">no policies registered</p>`;
  return html`<p class="policies">
    policies:
    ${policies.map(
      (policy, i) =>
        html`${i > 0 ? ' · ' : ''}<b>${policy.version}</b>${policy.description === null ? '' : html` <span class="description">${policy.description}</span>`}`,
    )}
  </p>`;
}

export async function cutoversPanel(api: DashboardApi): Promise<Html> {
  const [page, policies] = await Promise.all([
    api.listCutovers({ limit: CUTOVERS_SHOWN }),
    api.listPolicies(),
  ]);
  const reports = await Promise.all(page.items.map((c) => api.cutoverReport(c.cutoverId)));
  return html`${policyList(policies)}
  ${page.items.length === 0 ? html`<p class="muted">no cutovers</p>` : null}
  ${page.items.map((cutover, i) => cutoverCard(cutover, reports[i] ?? null))}
  ${page.nextCursor === null ? null : html`<p class="muted">older cutovers: GET /v1/cutovers</p>`}`;
}
