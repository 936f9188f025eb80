/**
 * The driver lease of a rollout with holds (docs/rollout.md, "The driver"): one document per
 * rollout, taken and renewed in store time by a compare-and-swap, so of several servers on one
 * store exactly one drives a rollout at a time. A new holder raises the fence; a driver's change of
 * the rollout and its gates' readings name holder and fence, and apply only while both still hold.
 */
import { addGateReadings } from '../gate-series.js';
import { refusalError, rolloutDriverLost } from '../refusal-messages.js';
import {
  readRollout,
  readRolloutDriver,
  rolloutDriverKey,
  rolloutKey,
  rolloutPut,
  rolloutRef,
  type RolloutDriverRow,
} from '../rollout-rows.js';
import type { RolloutGateResult } from '../../types.js';
import { readOnly, refused, type Snapshot, type Transition } from './transition.js';

/** Who a driver's write says it comes from. */
export interface DriverClaim {
  holder: string;
  fence: number;
}

/**
 * Takes or renews the driver lease of an active rollout for `ttlMs`; null when another holder's
 * lease has not run out, or the rollout is gone or finished.
 */
export function planClaimDriver(
  snapshot: Snapshot,
  rolloutId: string,
  holder: string,
  ttlMs: number,
): Transition<RolloutDriverRow | null> {
  const rolloutRefOf = rolloutRef(rolloutKey(rolloutId));
  const driverRef = rolloutRef(rolloutDriverKey(rolloutId));
  const rollout = readRollout(snapshot, rolloutId);
  const current = readRolloutDriver(snapshot, rolloutId);
  const expect = [rolloutRefOf, driverRef];
  if (rollout === null || rollout.status === 'completed' || rollout.status === 'rolled_back') {
    return readOnly(expect, null);
  }
  if (current !== null && current.holder !== holder && current.expiresAt > snapshot.now) {
    return readOnly(expect, null);
  }
  // The same holder keeps its fence even when its lease ran out before it renewed (a look longer
  // than the lease): no other holder took the rollout since, or the holder would differ.
  const renewing = current !== null && current.holder === holder;
  const row: RolloutDriverRow = {
    kind: 'driver',
    holder,
    expiresAt: snapshot.now + ttlMs,
    fence: renewing ? current.fence : (current?.fence ?? 0) + 1,
    step: current?.step ?? 0,
    gateResults: current?.gateResults ?? [],
    gateSeries: current?.gateSeries ?? [],
  };
  return {
    expect,
    put: [rolloutPut(rolloutDriverKey(rolloutId), row)],
    audit: [],
    answer: { ok: true, value: row },
  };
}

/** Whether `claim` still holds the rollout's driver lease at the snapshot's time. */
export function driverHolds(snapshot: Snapshot, rolloutId: string, claim: DriverClaim): boolean {
  const current = readRolloutDriver(snapshot, rolloutId);
  return (
    current !== null &&
    current.holder === claim.holder &&
    current.fence === claim.fence &&
    current.expiresAt > snapshot.now
  );
}

/**
 * Stores the gates' readings of `step`, if `claim` still drives the rollout: as the last ones, and
 * added to each gate's series of that step (a new step starts new series).
 */
export function planRecordGates(
  snapshot: Snapshot,
  rolloutId: string,
  claim: DriverClaim,
  step: number,
  gateResults: RolloutGateResult[],
): Transition<void> {
  const driverRef = rolloutRef(rolloutDriverKey(rolloutId));
  const current = readRolloutDriver(snapshot, rolloutId);
  if (current === null || !driverHolds(snapshot, rolloutId, claim)) {
    return refused([driverRef], [], refusalError(rolloutDriverLost(rolloutId, claim.holder)));
  }
  const previous = current.step === step ? (current.gateSeries ?? []) : [];
  const gateSeries = addGateReadings(previous, gateResults);
  return {
    expect: [driverRef],
    put: [rolloutPut(rolloutDriverKey(rolloutId), { ...current, step, gateResults, gateSeries })],
    audit: [],
    answer: { ok: true, value: undefined },
  };
}

/** The driver document of a rollout, read alone. */
export function planReadDriver(
  snapshot: Snapshot,
  rolloutId: string,
): Transition<RolloutDriverRow | null> {
  return readOnly(
    [rolloutRef(rolloutDriverKey(rolloutId))],
    readRolloutDriver(snapshot, rolloutId),
  );
}
