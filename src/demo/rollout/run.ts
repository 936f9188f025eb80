/**
 * The rollout incident, end to end, as a library function: 10,000 workflows pinned to v7, v8
 * ramped to 5 % and then 25 % by the rollout driver (as `fencegate serve` runs it, in this process
 * against the demo's store), v8 dropping handoff facts at 25 %, the handoff check reporting those
 * jobs failed, the rollout's gate failing on them and the driver rolling back by itself while 50
 * v8 jobs hold grants on moved scopes; then those jobs' late commits, and the required
 * observations checked from the store.
 */
import { performance } from 'node:perf_hooks';
import { stepCutoverId } from '../../core/rollout-rules.js';
import { fail } from '../../errors.js';
import { RolloutDriver } from '../../rollout/driver.js';
import type { ScopeState } from '../../types.js';
import { batchSizeFor } from '../batches.js';
import { Phases } from '../phases.js';
import { createWorkflows, registerPolicies, requireEmptyTenant } from '../setup.js';
import { readScopes } from '../store-view.js';
import { gateDecision, waitForRollout } from './driver-watch.js';
import { checkHandoffs, type StepHealth } from './handoff-check.js';
import { checkRollout } from './invariants.js';
import {
  DEFAULT_IN_FLIGHT,
  DEMO_DRIVER_INTERVAL_MS,
  HANDOFF_GATE,
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
/** The ramp's steps the demo takes: the gate fails at the second. */
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

  // The driver holds each step, checks the gate and acts; the demo's jobs and check run meanwhile.
  const driver = new RolloutDriver({
    store: gate.store,
    tenant: gate.tenant,
    holder: `demo-rollout-driver-${process.pid}`,
    intervalMs: options.driverIntervalMs ?? DEMO_DRIVER_INTERVAL_MS,
  }).start();
  const health: StepHealth[] = [];
  let held: InFlightJob[] = [];
  try {
    for (let step = 1; step <= STEPS_TAKEN; step += 1) {
      const percent = STEPS[step - 1]!;
      if (step === 1) {
        await phases.run(`start the ramp: v8 at ${percent} %, gate ${HANDOFF_GATE}`, 1, () =>
          gate.rollouts.start(rampRequest('v8 compaction, progressive', workflows, action)),
        );
      } else {
        await phases.run(
          `the gate passes at ${STEPS[step - 2]} %: the driver ramps to ${percent} %`,
          1,
          () =>
            waitForRollout(
              gate,
              (r) => r.status !== 'running' || (r.step >= step && r.cutoverDone),
            ),
        );
      }
      const cutover = await gate.store.getCutover(gate.tenant, stepCutoverId(ROLLOUT_ID, step));
      if (cutover === null) {
        const rollout = await gate.rollouts.get(ROLLOUT_ID);
        fail(
          'internal_error',
          `the driver did not start step ${step}: the rollout is ${rollout?.status} (${rollout?.reason ?? 'no reason'})`,
        );
      }
      const moved = cutover.fences.map(({ scope }) => scope);
      // The jobs of the last step taken are where some are still running when the gate fails.
      const inFlight =
        step === STEPS_TAKEN ? pickInFlight(seed, moved, inFlightCount) : new Set<string>();
      held = held.concat(
        await phases.run(
          `v8 jobs on the ${moved.length} scopes at ${percent} %`,
          moved.length,
          (t) => runV8Jobs(gate, moved, inFlight, percent, batch, t),
        ),
      );
      health.push(
        await phases.run(`handoff check of v8's writes at ${percent} %`, 1, () =>
          checkHandoffs(gate, seed, cutover.cutoverId, percent),
        ),
      );
    }
    // The check's failures reach the gate at the driver's next look; it acts, no operator call.
    await phases.run(
      `the gate trips: the driver ${action === 'rollback' ? 'rolls back' : 'pauses'}`,
      1,
      () => waitForRollout(gate, (r) => r.status !== 'running' && r.status !== 'rolling_back'),
    );
  } finally {
    await driver.stop();
  }
  const { decisionToFencedMs, reading } = await gateDecision(gate);
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
      action,
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
    trigger: reading === null ? null : 'gate',
    gate: reading,
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
