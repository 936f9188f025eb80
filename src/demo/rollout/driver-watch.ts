/**
 * What the demo reads of its rollout driver's work, from the store: it waits for the rollout to get
 * where the driver should take it, and reads the failed gate's reading and the time from that
 * decision until the rollback's last moved scope was fenced.
 */
import { rollbackCutoverId } from '../../core/rollout-rules.js';
import { fail } from '../../errors.js';
import type { Fencegate } from '../../gate.js';
import type { Rollout } from '../../types.js';
import { ROLLOUT_ID } from './plan.js';
import type { GateReading } from './types.js';

/** The longest the demo waits for the driver: past the 5 % hold's extension, the rollout pauses. */
const DRIVER_WAIT_MS = 90_000;
const POLL_MS = 20;

/**
 * Reads the demo's rollout until `done` says the driver has taken it there; past the wait, the
 * demo goes on and its invariants say what the store holds.
 */
export async function waitForRollout(
  gate: Fencegate,
  done: (rollout: Rollout) => boolean,
): Promise<void> {
  const until = Date.now() + DRIVER_WAIT_MS;
  for (;;) {
    const rollout = await gate.rollouts.get(ROLLOUT_ID);
    if (rollout === null) fail('internal_error', `the rollout ${ROLLOUT_ID} is missing`);
    if (done(rollout) || Date.now() > until) return;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * The reading of the gate that failed (the driver's look that decided), and the time from that
 * look until the rollback's cutover completed, every moved scope fenced, both in store time. No
 * failed gate, no reading; no completed rollback, no time.
 */
export async function gateDecision(
  gate: Fencegate,
): Promise<{ reading: GateReading | null; decisionToFencedMs: number | null }> {
  const rollout = await gate.rollouts.get(ROLLOUT_ID);
  const failed = rollout?.gateResults.find((result) => result.verdict === 'fail');
  if (rollout === undefined || rollout === null || failed === undefined) {
    return { reading: null, decisionToFencedMs: null };
  }
  const reading: GateReading = {
    name: failed.name,
    percent: rollout.percent,
    value: failed.value,
    samples: failed.samples,
    limit: failed.limit,
    at: failed.at,
    reason: rollout.reason,
  };
  const rollback = await gate.store.getCutover(gate.tenant, rollbackCutoverId(ROLLOUT_ID));
  const fencedAt = rollback?.completedAt ?? null;
  return { reading, decisionToFencedMs: fencedAt === null ? null : fencedAt - failed.at };
}
