/**
 * The rollout incident, end to end, as a library function: 10,000 workflows pinned to v7, v8
 * ramped to 5 % and then 25 %, v8 dropping handoff facts at 25 %, the operator's rollback while
 * 50 v8 jobs hold grants on moved scopes, and those jobs' late commits; then the required
 * observations checked from the store.
 */
import { performance } from 'node:perf_hooks';
import { stepCutoverId } from '../../core/rollout-rules.js';
import { fail } from '../../errors.js';
import type { ScopeState } from '../../types.js';
import { batchSizeFor } from '../batches.js';
import { Phases } from '../phases.js';
import { createWorkflows, registerPolicies, requireEmptyTenant } from '../setup.js';
import { readScopes } from '../store-view.js';
import { inspectStep, type StepHealth } from './inspect-step.js';
import { checkRollout } from './invariants.js';
import {
  DEFAULT_IN_FLIGHT,
  pickInFlight,
  POLICY_V7,
  rampRequest,
  POLICY_V8,
  ROLLOUT_ID,
  STEPS,
  WORKFLOWS_PER_IN_FLIGHT,
} from './plan.js';
import { loadRolloutView } from './store-view.js';
import type { RolloutDemoOptions, RolloutDemoResult, StepSummary } from './types.js';
import { acquireFreshV8Lease, resumeInFlight, runV8Jobs, type InFlightJob } from './v8-jobs.js';

export const DEFAULT_ROLLOUT_WORKFLOWS = 10_000;
export const DEFAULT_ROLLOUT_SEED = 8;
/** The ramp's steps the demo takes before the operator acts. */
const STEPS_TAKEN = 2;

/** The most in-flight jobs a run of `workflows` can hold (the 25 % step moves about a fifth). */
export function maxInFlight(workflows: number): number {
  return Math.floor(workflows / WORKFLOWS_PER_IN_FLIGHT);
}

function summary(health: StepHealth): StepSummary {
  const { cutoverId, percent, v8Writes, damaged, factsLost } = health;
  return { cutoverId, percent, moved: health.moved.length, v8Writes, damaged, factsLost };
}

export async function runRolloutDemo(options: RolloutDemoOptions): Promise<RolloutDemoResult> {
  const { gate } = options;
  const workflows = options.workflows ?? DEFAULT_ROLLOUT_WORKFLOWS;
  const inFlightCount = options.inFlight ?? Math.min(DEFAULT_IN_FLIGHT, maxInFlight(workflows));
  const seed = options.seed ?? DEFAULT_ROLLOUT_SEED;
  const action = options.action ?? 'rollback';
  const batch = options.batchSize ?? batchSizeFor(gate.store);
  if (inFlightCount < 1 || inFlightCount > maxInFlight(workflows)) {
    throw new RangeError(`in-flight jobs must be between 1 and a tenth of the workflows`);
  }
  const phases = new Phases(options.onProgress);
  const started = performance.now();

  await requireEmptyTenant(gate);
  await phases.run(`create ${workflows} workflows under v7`, workflows, async (tick) => {
    await registerPolicies(gate, [POLICY_V7, POLICY_V8]);
    await createWorkflows(gate, { seed, workflows }, batch, tick);
  });
  const before: Map<string, ScopeState> = await readScopes(gate);

  // The ramp: each step moves its scopes, v8 jobs run on them, the operator reads the result.
  const health: StepHealth[] = [];
  let held: InFlightJob[] = [];
  for (let step = 1; step <= STEPS_TAKEN; step += 1) {
    const percent = STEPS[step - 1]!;
    await phases.run(`ramp v8 to ${percent} %`, 1, async () => {
      if (step === 1) {
        await gate.rollouts.start(rampRequest('v8 compaction, progressive'));
      } else await gate.rollouts.advance({ rolloutId: ROLLOUT_ID });
    });
    const cutover = await gate.store.getCutover(gate.tenant, stepCutoverId(ROLLOUT_ID, step));
    if (cutover === null) fail('internal_error', `step ${step} of ${ROLLOUT_ID} has no cutover`);
    const moved = cutover.fences.map(({ scope }) => scope);
    // The jobs of the last step taken are where some are still running when the operator acts.
    const inFlight =
      step === STEPS_TAKEN ? pickInFlight(seed, moved, inFlightCount) : new Set<string>();
    held = held.concat(
      await phases.run(`v8 jobs on the ${moved.length} scopes at ${percent} %`, moved.length, (t) =>
        runV8Jobs(gate, moved, inFlight, percent, batch, t),
      ),
    );
    health.push(
      await phases.run(`operator inspects v8's writes at ${percent} %`, 1, () =>
        inspectStep(gate, seed, cutover.cutoverId, percent),
      ),
    );
  }

  // The operator acts on what the last inspection found; the rollback is timed from the call.
  let decisionToFencedMs: number | null = null;
  await phases.run(
    action === 'rollback' ? 'operator rolls back' : 'operator pauses',
    1,
    async () => {
      const start = performance.now();
      if (action === 'rollback') {
        await gate.rollouts.rollback({ rolloutId: ROLLOUT_ID, reason: 'v8 drops handoff facts' });
        decisionToFencedMs = Math.round(performance.now() - start);
      } else await gate.rollouts.pause({ rolloutId: ROLLOUT_ID, reason: 'v8 drops handoff facts' });
    },
  );
  const resumed = await phases.run(`${held.length} in-flight v8 jobs resume and commit`, 1, () =>
    resumeInFlight(gate, held, batch),
  );
  const freshAcquireScope = health[0]?.moved[0];
  if (freshAcquireScope === undefined) fail('invalid_request', 'the first step moved no scope');
  const freshAnswer = await phases.run('a v8 worker asks for a fresh lease', 1, () =>
    acquireFreshV8Lease(gate, freshAcquireScope),
  );

  const checked = await phases.run('check invariants from the store', 1, async () => {
    const view = await loadRolloutView(gate, workflows, STEPS_TAKEN, freshAcquireScope);
    const result = checkRollout(view, {
      seed,
      workflows,
      inFlight: held.map((job) => job.scope),
      before,
      steps: health.map(summary),
      freshAcquireScope,
    });
    return { view, ...result };
  });
  const rollback = checked.view.report?.rollback ?? null;
  return {
    ok: checked.invariants.every((invariant) => invariant.ok),
    seed,
    workflows,
    tenant: gate.tenant,
    rolloutId: ROLLOUT_ID,
    action,
    steps: health.map(summary),
    moved: checked.moved,
    inFlight: held.length,
    decisionToFencedMs,
    staleAttempts: rollback?.staleAttempts ?? null,
    staleAccepted: rollback?.staleAccepted ?? null,
    report: checked.view.report,
    store: checked.observations,
    answers: {
      inFlightRejected: resumed.filter((result) => result.outcome === 'rejected').length,
      freshV8Acquire: freshAnswer,
    },
    invariants: checked.invariants,
    phases: phases.timings,
    totalMs: Math.round(performance.now() - started),
  };
}
