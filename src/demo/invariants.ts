/**
 * The incident's required observations (ACCEPTANCE.md B1-B5 and the seed's acceptance tests),
 * judged from a StoreView: what the store recorded, never what the demo counted while running.
 */
import { fingerprint } from '../core/canonical.js';
import { JOB_STATES, type JobState } from '../types.js';
import type { AttemptCounts, InvariantResult, StoreObservations } from './demo-types.js';
import { canonicalFacts, initialMemory, missingFacts } from './handoff-facts.js';
import {
  CONTROLLER,
  POLICY_V7,
  POLICY_V8,
  scopeOf,
  v7OperationId,
  v8JobId,
  v8OperationId,
  type IncidentPlan,
  type V7Job,
} from './plan.js';
import type { StoreView } from './store-view.js';
import { verdict } from './verdict.js';

function zeroByState(): Record<JobState, number> {
  return Object.fromEntries(JOB_STATES.map((state) => [state, 0])) as Record<JobState, number>;
}

class Checker {
  readonly invariants: InvariantResult[] = [];
  readonly #view: StoreView;
  readonly #plan: IncidentPlan;
  /** The fence and audit seq the cutover gave each scope. */
  readonly #cutover = new Map<string, { fence: number; seq: number }>();
  readonly #reasons: Record<string, number> = {};

  constructor(view: StoreView, plan: IncidentPlan) {
    this.#view = view;
    this.#plan = plan;
    for (const [scope, entries] of view.cutoverEntries) {
      const entry = entries[0]!;
      this.#cutover.set(scope, { fence: entry.currentFence ?? 0, seq: entry.seq });
    }
  }

  cutoverMovedEachScopeOnce(): void {
    const offenders: string[] = [];
    const affected = new Set(this.#plan.jobs.map((job) => job.scope));
    for (const job of this.#plan.jobs) {
      const entries = this.#view.cutoverEntries.get(job.scope) ?? [];
      const scope = this.#view.scopes.get(job.scope);
      const fence = this.#cutover.get(job.scope)?.fence;
      if (entries.length !== 1) offenders.push(`${job.scope}: ${entries.length} cutover entries`);
      else if (entries[0]!.outcome !== 'granted') offenders.push(`${job.scope}: not granted`);
      else if (scope === undefined || scope.fence !== fence) {
        offenders.push(`${job.scope}: fence ${scope?.fence} is not the cutover's ${fence}`);
      } else if (scope.holder !== CONTROLLER || scope.policyVersion !== POLICY_V8.version) {
        offenders.push(`${job.scope}: held by ${scope.holder} under ${scope.policyVersion}`);
      }
    }
    for (const scope of this.#view.cutoverEntries.keys()) {
      if (!affected.has(scope)) offenders.push(`${scope}: moved but not affected`);
    }
    this.invariants.push(
      verdict(
        `B1 the cutover moved each of the ${affected.size} affected scopes exactly once, to ${POLICY_V8.version} under ${CONTROLLER}`,
        offenders,
        `${this.#view.cutoverEntries.size} scopes, one cutover entry each, fence+1, held by ${CONTROLLER}`,
      ),
    );
  }

  /** Each stale job made one audited attempt with a fence older than the cutover's; none landed. */
  staleAttempts(name: string, jobs: readonly V7Job[]): AttemptCounts {
    const counts: AttemptCounts = { attempted: 0, accepted: 0, rejected: 0 };
    const offenders: string[] = [];
    for (const job of jobs) {
      const entries = this.#view.commitsByOperation.get(v7OperationId(job.workflow)) ?? [];
      const cutoverFence = this.#cutover.get(job.scope)?.fence ?? 0;
      if (entries.length !== 1) offenders.push(`${job.jobId}: ${entries.length} audited attempts`);
      for (const entry of entries) {
        counts.attempted += 1;
        if (entry.outcome === 'committed') {
          counts.accepted += 1;
          offenders.push(`${job.jobId}: ACCEPTED with fence ${entry.fence}`);
        } else {
          counts.rejected += 1;
          const reason = entry.reason ?? 'unknown';
          this.#reasons[reason] = (this.#reasons[reason] ?? 0) + 1;
        }
        if ((entry.fence ?? 0) >= cutoverFence) {
          offenders.push(`${job.jobId}: fence ${entry.fence} is not older than ${cutoverFence}`);
        }
      }
    }
    this.invariants.push(
      verdict(
        `${name}: 0 of ${jobs.length} accepted`,
        offenders,
        `${counts.attempted} attempted with old fences, ${counts.accepted} accepted, ${counts.rejected} rejected`,
      ),
    );
    return counts;
  }

  freshAcquireRefused(): string | null {
    const job = this.#plan.freshAcquire;
    const after = this.#cutover.get(job.scope)?.seq ?? Infinity;
    const entry = this.#view.refusedAcquires.find((e) => e.seq > after && e.holder === job.worker);
    const reason = entry?.reason ?? null;
    const scope = this.#view.scopes.get(job.scope);
    const offenders: string[] = [];
    if (reason !== 'policy_mismatch') offenders.push(`audited answer: ${reason ?? 'none'}`);
    if (scope?.holder !== CONTROLLER) offenders.push(`${job.scope} is held by ${scope?.holder}`);
    this.invariants.push(
      verdict(
        `B4 a v7 worker's fresh acquire after the cutover is refused with policy_mismatch`,
        offenders,
        `${job.worker} on ${job.scope}: ${reason}; ${CONTROLLER} keeps the scope`,
      ),
    );
    return reason;
  }

  /** The v8 controller's accepted commits after the cutover, one per affected scope. */
  controllerCommits(): { commits: number; scopes: number } {
    const offenders: string[] = [];
    let commits = 0;
    let scopes = 0;
    for (const job of this.#plan.jobs) {
      const cutover = this.#cutover.get(job.scope);
      const accepted = (this.#view.commitsByScope.get(job.scope) ?? []).filter(
        (e) => e.outcome === 'committed' && e.seq > (cutover?.seq ?? Infinity),
      );
      commits += accepted.length;
      if (accepted.length > 0) scopes += 1;
      const entry = accepted[0];
      if (accepted.length !== 1 || entry === undefined) {
        offenders.push(`${job.scope}: ${accepted.length} accepted commits`);
      } else if (
        entry.fence !== cutover?.fence ||
        entry.holder !== CONTROLLER ||
        entry.policyVersion !== POLICY_V8.version
      ) {
        offenders.push(
          `${job.scope}: accepted ${entry.holder}/${entry.policyVersion}@${entry.fence}`,
        );
      }
    }
    this.invariants.push(
      verdict(
        `B1/B2 the v8 controller committed exactly once on every affected scope, with the cutover's fence`,
        offenders,
        `${commits} commits on ${scopes} scopes, each under ${CONTROLLER}, ${POLICY_V8.version}, the cutover fence`,
      ),
    );
    return { commits, scopes };
  }

  retriedOnce(): StoreObservations['retried'] {
    const offenders: string[] = [];
    let committedEntries = 0;
    let storedCommitted = 0;
    const retried = [...this.#plan.retried];
    retried.forEach((workflow, i) => {
      const operationId = v8OperationId(workflow);
      const entries = (this.#view.commitsByOperation.get(operationId) ?? []).filter(
        (e) => e.outcome === 'committed',
      );
      committedEntries += entries.length;
      const stored = this.#view.retriedOperations[i];
      if (stored?.outcome === 'committed') storedCommitted += 1;
      if (entries.length !== 1)
        offenders.push(`${operationId}: ${entries.length} committed entries`);
      if (stored?.outcome !== 'committed')
        offenders.push(`${operationId}: stored ${stored?.outcome}`);
    });
    this.invariants.push(
      verdict(
        `B5 a v8 commit delivered twice under one operationId compacts once`,
        offenders,
        `${retried.length} operations delivered twice: ${committedEntries} audit entries 'committed', ${storedCommitted} stored outcomes 'committed'`,
      ),
    );
    return { operations: retried.length, committedEntries, storedCommitted };
  }

  handoffFacts(): StoreObservations['handoffFacts'] {
    const offenders: string[] = [];
    let preserved = 0;
    let required = 0;
    let workflowsComplete = 0;
    for (const job of this.#plan.jobs) {
      const record = this.#view.memory[job.workflow];
      const canonical = canonicalFacts(this.#plan.seed, job.workflow);
      const missing = record?.exists === true ? missingFacts(canonical, record.value) : canonical;
      required += canonical.length;
      preserved += canonical.length - missing.length;
      if (missing.length === 0) workflowsComplete += 1;
      else offenders.push(`${job.scope}: missing ${missing.map((f) => f.key).join(', ')}`);
      // The record is exactly what the controller's accepted commit wrote: nothing landed after.
      const accepted = (this.#view.commitsByScope.get(job.scope) ?? []).filter(
        (e) => e.outcome === 'committed',
      );
      const written = accepted.at(-1)?.records?.[0];
      if (
        written === undefined ||
        record?.fingerprint !== written.fingerprint ||
        record.revision !== written.resulting
      ) {
        offenders.push(`${job.scope}: record is not the v8 controller's write`);
      }
    }
    this.invariants.push(
      verdict(
        'every required handoff fact survives in every affected workflow',
        offenders,
        `${preserved}/${required} facts in ${workflowsComplete} workflows, each record the v8 controller's write`,
      ),
    );
    return { preserved, required, workflowsComplete };
  }

  unaffectedUntouched(): StoreObservations['unaffected'] {
    const affected = new Set(this.#plan.jobs.map((job) => job.workflow));
    const offenders: string[] = [];
    let untouched = 0;
    let total = 0;
    for (let workflow = 0; workflow < this.#plan.workflows; workflow++) {
      if (affected.has(workflow)) continue;
      total += 1;
      const record = this.#view.memory[workflow];
      const scope = this.#view.scopes.get(scopeOf(workflow));
      const same =
        record?.revision === 1 &&
        record.fingerprint === fingerprint(initialMemory(this.#plan.seed, workflow)) &&
        scope?.policyVersion === POLICY_V7.version &&
        scope.holder === null;
      if (same) untouched += 1;
      else offenders.push(`${scopeOf(workflow)} changed`);
    }
    this.invariants.push(
      verdict(
        'workflows outside the cutover are untouched',
        offenders,
        `${untouched}/${total} still on ${POLICY_V7.version}, memory at revision 1 with its original fingerprint`,
      ),
    );
    return { untouched, total };
  }

  jobsLedger(): { old: Record<JobState, number>; controller: Record<JobState, number> } {
    const old = zeroByState();
    const controller = zeroByState();
    const offenders: string[] = [];
    const byId = new Map(this.#view.jobs.map((job) => [job.jobId, job]));
    for (const job of this.#view.jobs) {
      if (job.policyVersion === POLICY_V7.version) old[job.state] += 1;
      else if (job.policyVersion === POLICY_V8.version) controller[job.state] += 1;
    }
    for (const job of this.#plan.jobs) {
      const state = byId.get(job.jobId)?.state;
      const expected = job.fate === 'idle' ? job.state : 'failed';
      if (state !== expected)
        offenders.push(`${job.jobId}: ${state ?? 'absent'}, expected ${expected}`);
      const v8 = byId.get(v8JobId(job.workflow))?.state;
      if (v8 !== 'succeeded') offenders.push(`${v8JobId(job.workflow)}: ${v8 ?? 'absent'}`);
    }
    this.invariants.push(
      verdict(
        'jobs ledger reconciled: stale v7 jobs failed, v8 controller jobs succeeded',
        offenders,
        `v7 ${describe(old)}; v8 ${describe(controller)}`,
      ),
    );
    return { old, controller };
  }

  report(staleAttempts: number): void {
    const report = this.#view.report;
    const jobs = this.#plan.jobs.length;
    const offenders: string[] = [];
    if (report === null) offenders.push('no report');
    else {
      if (report.status !== 'completed') offenders.push(`status ${report.status}`);
      if (report.scopes !== jobs) offenders.push(`scopes ${report.scopes}, expected ${jobs}`);
      if (report.staleAccepted !== 0) offenders.push(`staleAccepted ${report.staleAccepted}`);
      if (report.staleAttempts !== staleAttempts) {
        offenders.push(`staleAttempts ${report.staleAttempts}, expected ${staleAttempts}`);
      }
      if (report.oldJobs.total !== jobs) offenders.push(`oldJobs ${report.oldJobs.total}`);
      if (report.liveCommits !== jobs) offenders.push(`liveCommits ${report.liveCommits}`);
    }
    this.invariants.push(
      verdict(
        'the cutover report is completed and shows staleAccepted: 0',
        offenders,
        `completed, ${report?.scopes} scopes, ${report?.staleAttempts} stale attempts, staleAccepted ${report?.staleAccepted}, ${report?.liveCommits} live commits`,
      ),
    );
  }

  auditVerified(): void {
    const { ok, checked, violations } = this.#view.verified;
    this.invariants.push(
      verdict(
        'the audit history verifies (fences, holders, revisions, stale attempts after the cutover)',
        ok ? [] : [`${violations} violations`],
        `${checked} audit entries checked, no violation`,
      ),
    );
  }

  get staleRejectedByReason(): Record<string, number> {
    return { ...this.#reasons };
  }
}

function describe(byState: Record<JobState, number>): string {
  return JOB_STATES.filter((state) => byState[state] > 0)
    .map((state) => `${byState[state]} ${state}`)
    .join(', ');
}

export function checkIncident(
  view: StoreView,
  plan: IncidentPlan,
): { observations: StoreObservations; invariants: InvariantResult[] } {
  const check = new Checker(view, plan);
  check.cutoverMovedEachScopeOnce();
  const resumed = check.staleAttempts(
    'B1 resumed running v7 jobs commit with their old fence',
    plan.resumed,
  );
  const delayed = check.staleAttempts('B2 delayed old-generation commits', plan.delayed);
  const v8 = check.controllerCommits();
  const freshAcquireRefusal = check.freshAcquireRefused();
  const retried = check.retriedOnce();
  const handoffFacts = check.handoffFacts();
  const unaffected = check.unaffectedUntouched();
  const ledger = check.jobsLedger();
  check.report(resumed.attempted + delayed.attempted);
  check.auditVerified();
  return {
    observations: {
      resumed,
      delayed,
      staleRejectedByReason: check.staleRejectedByReason,
      freshAcquireRefusal,
      v8Commits: v8.commits,
      v8Scopes: v8.scopes,
      retried,
      handoffFacts,
      unaffected,
      oldJobsByState: ledger.old,
      controllerJobsByState: ledger.controller,
      auditVerified: view.verified,
    },
    invariants: check.invariants,
  };
}
