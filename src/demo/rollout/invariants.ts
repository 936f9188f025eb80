/**
 * The rollout demo's required observations, judged from a RolloutStoreView: what the store
 * recorded, never what the demo counted while it ran. The demo's own state only says what was
 * attempted (which scopes held in-flight jobs, the snapshot of the scopes before the ramp).
 */
import { fingerprint } from '../../core/canonical.js';
import type { ScopeState } from '../../types.js';
import type { AttemptCounts, InvariantResult } from '../demo-types.js';
import { canonicalFacts, initialMemory, missingFacts } from '../handoff-facts.js';
import { scopeOf, v8OperationId } from '../plan.js';
import { verdict } from '../verdict.js';
import { HANDOFF_GATE, POLICY_V7, POLICY_V8, STEPS, workflowOf, type GateAction } from './plan.js';
import type { RolloutStoreView } from './store-view.js';
import { FRESH_V8_WORKER } from './v8-jobs.js';
import type { RolloutObservations, StepSummary } from './types.js';

export interface RolloutAttempts {
  seed: number;
  workflows: number;
  /** What the gate's failure was to do (the rollout's onFailure). */
  action: GateAction;
  /** The scopes whose v8 job was in flight when the gate failed. */
  inFlight: readonly string[];
  /** The scopes as the store listed them before the rollout started. */
  before: ReadonlyMap<string, ScopeState>;
  /** The handoff check's reading of each step. */
  steps: readonly StepSummary[];
  /** The scope of the v8-only worker's fresh acquire after the driver acted. */
  freshAcquireScope: string;
}

class RolloutChecker {
  readonly invariants: InvariantResult[] = [];
  readonly #view: RolloutStoreView;
  readonly #attempts: RolloutAttempts;
  /** The fence the ramp gave each moved scope. */
  readonly #moved = new Map<string, number>();

  constructor(view: RolloutStoreView, attempts: RolloutAttempts) {
    this.#view = view;
    this.#attempts = attempts;
    for (const step of view.steps) for (const [scope, fence] of step) this.#moved.set(scope, fence);
  }

  get moved(): number {
    return this.#moved.size;
  }

  defectSeen(): void {
    const [first, ...later] = this.#attempts.steps;
    const offenders: string[] = [];
    if (first === undefined || first.v8Writes === 0 || first.damaged > 0) {
      offenders.push(`at ${first?.percent} %: ${first?.damaged} of ${first?.v8Writes} damaged`);
    }
    const last = later.at(-1);
    if (last === undefined || last.damaged === 0) {
      offenders.push(`at ${last?.percent} %: no damaged workflow to act on`);
    }
    this.invariants.push(
      verdict(
        'v8 kept every handoff fact at the first step and dropped some at the last: seen in the store',
        offenders,
        this.#attempts.steps
          .map((s) => `${s.percent} %: ${s.damaged} of ${s.v8Writes} v8 writes damaged`)
          .join('; '),
      ),
    );
  }

  /** The rollout's gate, not an operator, stopped the ramp: its reading and the driver's reason. */
  gateActed(): void {
    const rollout = this.#view.report?.rollout ?? null;
    const failed = rollout?.gateResults.find((result) => result.verdict === 'fail');
    const percent = STEPS[this.#attempts.steps.length - 1];
    const acted = this.#attempts.action === 'rollback' ? 'rolled back' : 'paused';
    const status = this.#attempts.action === 'rollback' ? 'rolled_back' : 'paused';
    const offenders: string[] = [];
    if (rollout === null) offenders.push('no rollout');
    else {
      if (failed?.name !== HANDOFF_GATE) {
        offenders.push(`no failed reading of gate ${HANDOFF_GATE}`);
      } else if (failed.value === null || failed.limit === null || failed.value <= failed.limit) {
        offenders.push(`gate ${HANDOFF_GATE} failed at ${failed.value}, limit ${failed.limit}`);
      }
      if (rollout.percent !== percent) offenders.push(`stopped at ${rollout.percent} %`);
      if (!(rollout.reason ?? '').startsWith(`gate ${HANDOFF_GATE} failed`)) {
        offenders.push(`reason: ${rollout.reason ?? 'none'}`);
      }
      if (rollout.status !== status) offenders.push(`rollout ${rollout.status}`);
    }
    this.invariants.push(
      verdict(
        `the gate ${HANDOFF_GATE} failed at ${percent} % on v8's failed jobs, and the driver ${acted} the rollout by itself`,
        offenders,
        `a share of ${failed?.value?.toFixed(3)} of ${failed?.samples} v8 jobs failed (limit ${failed?.limit}); ${rollout?.status}: ${rollout?.reason}`,
      ),
    );
  }

  inFlightRefused(): { counts: AttemptCounts; reasons: Record<string, number> } {
    const counts: AttemptCounts = { attempted: 0, accepted: 0, rejected: 0 };
    const reasons: Record<string, number> = {};
    const offenders: string[] = [];
    for (const scope of this.#attempts.inFlight) {
      const operationId = v8OperationId(workflowOf(scope));
      const entries = this.#view.commitsByOperation.get(operationId) ?? [];
      const moveFence = this.#moved.get(scope) ?? Infinity;
      const current = this.#view.scopes.get(scope)?.fence ?? 0;
      if (entries.length !== 1)
        offenders.push(`${operationId}: ${entries.length} audited attempts`);
      for (const entry of entries) {
        counts.attempted += 1;
        const fence = entry.fence ?? 0;
        if (entry.outcome === 'committed') {
          counts.accepted += 1;
          offenders.push(`${operationId}: ACCEPTED with fence ${fence}`);
        } else {
          counts.rejected += 1;
          reasons[entry.reason ?? 'unknown'] = (reasons[entry.reason ?? 'unknown'] ?? 0) + 1;
        }
        // The job was granted after the move, and its fence is older than the scope's now.
        if (fence <= moveFence || fence >= current) {
          offenders.push(`${operationId}: fence ${fence} not between ${moveFence} and ${current}`);
        }
      }
    }
    this.invariants.push(
      verdict(
        `the ${this.#attempts.inFlight.length} in-flight v8 jobs resume and commit: 0 accepted`,
        offenders,
        `${counts.attempted} attempted with fences granted after the move, ${counts.accepted} accepted, ${counts.rejected} rejected`,
      ),
    );
    return { counts, reasons };
  }

  movedScopesBack(): RolloutObservations['movedBack'] {
    const offenders: string[] = [];
    let back = 0;
    const rollback = this.#view.rollback ?? new Map<string, number>();
    for (const [scope, moveFence] of this.#moved) {
      const state = this.#view.scopes.get(scope);
      const fence = rollback.get(scope);
      if (fence === undefined) offenders.push(`${scope}: not moved back`);
      else if (state === undefined || state.fence !== fence || fence <= moveFence) {
        offenders.push(`${scope}: fence ${state?.fence}, move ${moveFence}, rollback ${fence}`);
      } else if (state.policyVersion !== POLICY_V7.version || state.holder !== null) {
        offenders.push(`${scope}: on ${state.policyVersion} held by ${state.holder}`);
      } else back += 1;
    }
    for (const scope of rollback.keys()) {
      if (!this.#moved.has(scope)) offenders.push(`${scope}: moved back but never moved`);
    }
    this.invariants.push(
      verdict(
        `every scope the ramp moved is back on ${POLICY_V7.version}, unheld, with a fence above the move's`,
        offenders,
        `${back}/${this.#moved.size} on ${POLICY_V7.version} at the rollback's fence`,
      ),
    );
    return { back, total: this.#moved.size };
  }

  inFlightMemoryKept(): void {
    const offenders: string[] = [];
    for (const scope of this.#attempts.inFlight) {
      const workflow = workflowOf(scope);
      const record = this.#view.memory[workflow];
      const original = fingerprint(initialMemory(this.#attempts.seed, workflow));
      if (record?.revision !== 1 || record.fingerprint !== original) {
        offenders.push(`${scope}: memory at revision ${record?.revision}`);
      }
    }
    this.invariants.push(
      verdict(
        "the in-flight jobs' workflows keep their memory as v7 wrote it",
        offenders,
        `${this.#attempts.inFlight.length} records at revision 1 with their original fingerprint`,
      ),
    );
  }

  untouched(): RolloutObservations['untouched'] {
    const offenders: string[] = [];
    let untouched = 0;
    let total = 0;
    for (let workflow = 0; workflow < this.#attempts.workflows; workflow++) {
      const scope = scopeOf(workflow);
      if (this.#moved.has(scope)) continue;
      total += 1;
      const was = this.#attempts.before.get(scope);
      const now = this.#view.scopes.get(scope);
      const record = this.#view.memory[workflow];
      const same =
        was !== undefined &&
        now !== undefined &&
        now.fence === was.fence &&
        now.holder === was.holder &&
        now.policyVersion === POLICY_V7.version &&
        was.policyVersion === POLICY_V7.version &&
        record?.revision === 1 &&
        record.fingerprint === fingerprint(initialMemory(this.#attempts.seed, workflow));
      if (same) untouched += 1;
      else offenders.push(`${scope} changed`);
    }
    this.invariants.push(
      verdict(
        'scopes the ramp never moved are untouched (fence, policy, records)',
        offenders,
        `${untouched}/${total} at their fence, on ${POLICY_V7.version}, memory at revision 1 unchanged`,
      ),
    );
    return { untouched, total };
  }

  freshV8AcquireRefused(): string | null {
    const scope = this.#attempts.freshAcquireScope;
    const entry = this.#view.refusedAcquires.find((e) => e.holder === FRESH_V8_WORKER);
    const reason = entry?.reason ?? null;
    this.invariants.push(
      verdict(
        `a v8-only worker's fresh acquire on a moved-back scope is refused with policy_mismatch`,
        reason === 'policy_mismatch' ? [] : [`${scope}: audited answer ${reason ?? 'none'}`],
        `${scope}: ${reason}`,
      ),
    );
    return reason;
  }

  damagedWorkflows(): number {
    let damaged = 0;
    for (const scope of this.#moved.keys()) {
      const workflow = workflowOf(scope);
      const record = this.#view.memory[workflow];
      if (missingFacts(canonicalFacts(this.#attempts.seed, workflow), record?.value).length > 0) {
        damaged += 1;
      }
    }
    return damaged;
  }

  report(inFlightAttempts: number, damaged: number): void {
    const report = this.#view.report;
    const rollback = report?.rollback ?? null;
    const offenders: string[] = [];
    const inFlight = this.#attempts.inFlight.length;
    if (report === null) offenders.push('no report');
    else if (rollback === null) offenders.push(`no rollback (rollout ${report.rollout.status})`);
    else {
      const moved = report.steps.reduce((sum, step) => sum + step.moved, 0);
      if (report.rollout.status !== 'rolled_back') offenders.push(`${report.rollout.status}`);
      if (moved !== this.#moved.size) offenders.push(`steps moved ${moved}`);
      if (rollback.status !== 'completed') offenders.push(`rollback ${rollback.status}`);
      if (rollback.moved !== this.#moved.size) offenders.push(`moved back ${rollback.moved}`);
      if (rollback.skipped.length > 0) offenders.push(`skipped ${rollback.skipped.length}`);
      if (rollback.staleAccepted !== 0) offenders.push(`staleAccepted ${rollback.staleAccepted}`);
      if (rollback.staleAttempts !== inFlightAttempts) {
        offenders.push(`staleAttempts ${rollback.staleAttempts}, expected ${inFlightAttempts}`);
      }
      // Failed: the in-flight jobs refused, and those whose write the handoff check found damaged.
      const jobs = report.toPolicyJobs.byState;
      if (jobs.failed !== inFlight + damaged) {
        offenders.push(`${jobs.failed} failed v8 jobs, expected ${inFlight} + ${damaged}`);
      }
      if (jobs.succeeded + jobs.failed !== report.toPolicyJobs.total) {
        offenders.push(`v8 jobs ${JSON.stringify(jobs)}`);
      }
    }
    this.invariants.push(
      verdict(
        'the rollout report: rolled back, every moved scope moved back, staleAccepted 0',
        offenders,
        `moved back ${rollback?.moved}, skipped ${rollback?.skipped.length}, staleAttempts ${rollback?.staleAttempts}, staleAccepted ${rollback?.staleAccepted}; ${POLICY_V8.version} jobs ${report?.toPolicyJobs.byState.succeeded} succeeded, ${report?.toPolicyJobs.byState.failed} failed`,
      ),
    );
  }

  auditVerified(): void {
    const { ok, checked, violations } = this.#view.verified;
    this.invariants.push(
      verdict(
        'the audit history verifies (fences, holders, revisions, stale attempts)',
        ok ? [] : [`${violations} violations`],
        `${checked} audit entries checked, no violation`,
      ),
    );
  }
}

export function checkRollout(
  view: RolloutStoreView,
  attempts: RolloutAttempts,
): { moved: number; observations: RolloutObservations; invariants: InvariantResult[] } {
  const check = new RolloutChecker(view, attempts);
  check.defectSeen();
  check.gateActed();
  const inFlight = check.inFlightRefused();
  const movedBack = check.movedScopesBack();
  check.inFlightMemoryKept();
  const untouched = check.untouched();
  const freshV8Acquire = check.freshV8AcquireRefused();
  const damagedWorkflows = check.damagedWorkflows();
  check.report(inFlight.counts.attempted, damagedWorkflows);
  check.auditVerified();
  return {
    moved: check.moved,
    observations: {
      inFlightCommits: inFlight.counts,
      rejectedByReason: inFlight.reasons,
      movedBack,
      untouched,
      freshV8Acquire,
      damagedWorkflows,
      auditVerified: view.verified,
    },
    invariants: check.invariants,
  };
}
