/**
 * A rollout's state changes, each planned over a snapshot and applied as one store transaction: a
 * compare-and-swap on the rollout's stored revision (and on the tenant's active rollouts), so two
 * operators or two servers never interleave. A step is started here as the cutover
 * `<rolloutId>/step-<n>`; the rollback as the cutover `<rolloutId>/rollback`. Neither is listed
 * here: the change records the cutover with its listing, whose pages the cutover machinery lists
 * in transactions of their own (plan-cutover-listing.ts) before it moves them in chunks
 * (plan-cutover.ts, with the rollout's mover from plan-rollout-moves.ts). So a change reads a few
 * rows whatever the selection's size.
 */
import {
  refusalError,
  rolloutIdConflict,
  rolloutNotFound,
  cutoverOverlap,
  rolloutOverlap,
  rolloutStateConflict,
  rolloutDriverLost,
  cutoverIdConflict,
  unregisteredRolloutPolicy,
} from '../refusal-messages.js';
import {
  ACTIVE_ROLLOUTS_REF,
  RUNNING_CUTOVERS_REF,
  activeRolloutsPut,
  cutoverCursorPut,
  readActiveRollouts,
  readRollout,
  readRunningCutovers,
  rolloutDriverKey,
  rolloutKey,
  rolloutPut,
  rolloutRef,
  type ActiveRollout,
  type CutoverListing,
  type RolloutRow,
} from '../rollout-rows.js';
import {
  overlaps,
  rollbackCutoverId,
  rolloutCutoverFingerprint,
  rolloutFingerprint,
  selectionOf,
  stepCutoverId,
} from '../rollout-rules.js';
import type { RolloutStatus, StartRolloutRequest } from '../../types.js';
import { newCutover } from './plan-cutover.js';
import { driverHolds, type DriverClaim } from './plan-rollout-driver.js';
import { refused, type Put, type Ref, type Snapshot, type Transition } from './transition.js';

export type RolloutAction = 'advance' | 'promote' | 'pause' | 'resume' | 'rollback' | 'finish';

export type RolloutChange =
  | { action: 'start'; request: StartRolloutRequest & { rolloutId: string } }
  | {
      action: RolloutAction;
      rolloutId: string;
      /** The revision the operator read: the change applies only if the rollout is still at it. */
      revision?: number;
      cancelIntents?: boolean;
      /** A driver's change applies only while it holds the rollout's driver lease. */
      driver?: DriverClaim;
      /** Replaces the rollout's reason: why a driver paused or rolled it back. */
      reason?: string;
    };

/** Plans one change; `lastSeq` is the audit position a cutover it starts begins after. */
export function planRolloutChange(
  snapshot: Snapshot,
  change: RolloutChange,
  lastSeq: number,
): Transition<RolloutRow> {
  if (change.action === 'start') return planStart(snapshot, change.request, lastSeq);
  const ref = rolloutRef(rolloutKey(change.rolloutId));
  const rollout = readRollout(snapshot, change.rolloutId);
  if (rollout === null) return refused([ref], [], refusalError(rolloutNotFound(change.rolloutId)));
  const plan = new ChangePlan(snapshot, rollout, lastSeq);
  if (change.driver !== undefined) {
    plan.expect.push(rolloutRef(rolloutDriverKey(change.rolloutId)));
    if (!driverHolds(snapshot, change.rolloutId, change.driver)) {
      return refused(
        plan.expect,
        [],
        refusalError(rolloutDriverLost(change.rolloutId, change.driver.holder)),
      );
    }
  }
  if (change.action === 'finish') return plan.finish();
  const conflict = (expected: number | null) =>
    refused<RolloutRow>(
      [ref],
      [],
      refusalError(rolloutStateConflict(rollout, change.action, expected)),
    );
  if (change.revision !== undefined && change.revision !== rollout.revision) {
    return conflict(change.revision);
  }
  const allowed: Record<Exclude<RolloutAction, 'finish'>, readonly RolloutStatus[]> = {
    advance: ['running'],
    promote: ['running', 'paused'],
    pause: ['running'],
    resume: ['paused'],
    rollback: ['running', 'paused'],
  };
  if (!allowed[change.action].includes(rollout.status)) return conflict(null);
  switch (change.action) {
    case 'advance':
    case 'promote': {
      const ramped = rollout.percent >= 100 || rollout.step >= rollout.steps.length;
      if (change.action === 'advance' && ramped) return conflict(null);
      if (rollout.percent >= 100) return conflict(null);
      if (!plan.stepDone()) return conflict(null);
      const percent = change.action === 'promote' ? 100 : rollout.steps[rollout.step]!;
      return plan.nextStep(percent, change.action === 'promote' ? 'running' : rollout.status);
    }
    case 'pause':
      return plan.changed({ status: 'paused', ...reasonOf(change) });
    case 'resume':
      return plan.changed({ status: 'running' });
    case 'rollback':
      return plan.rollback(change.cancelIntents === true, reasonOf(change));
  }
}

function planStart(
  snapshot: Snapshot,
  request: StartRolloutRequest & { rolloutId: string },
  lastSeq: number,
): Transition<RolloutRow> {
  const ref = rolloutRef(rolloutKey(request.rolloutId));
  const fingerprint = rolloutFingerprint(request);
  const existing = readRollout(snapshot, request.rolloutId);
  if (existing !== null) {
    if (existing.requestFingerprint !== fingerprint) {
      return refused([ref], [], refusalError(rolloutIdConflict(request.rolloutId)));
    }
    return { expect: [ref], put: [], audit: [], answer: { ok: true, value: existing } };
  }
  for (const field of ['fromPolicy', 'toPolicy'] as const) {
    const policyRef = { type: 'policy' as const, version: request[field] };
    if (snapshot.get(policyRef) === null) {
      return refused(
        [ref, policyRef],
        [],
        refusalError(unregisteredRolloutPolicy(field, request[field])),
      );
    }
  }
  const selection = selectionOf(request);
  const active = readActiveRollouts(snapshot);
  const other = active.find((rollout) => overlaps(rollout.selection, selection));
  if (other !== undefined) {
    return refused([ref, ACTIVE_ROLLOUTS_REF], [], refusalError(rolloutOverlap(other.rolloutId)));
  }
  // A plain cutover still moving scopes of the selection would race the steps for them.
  const cutover = readRunningCutovers(snapshot).find((entry) =>
    overlaps(entry.selection, selection),
  );
  if (cutover !== undefined) {
    return refused(
      [ref, ACTIVE_ROLLOUTS_REF, RUNNING_CUTOVERS_REF],
      [],
      refusalError(cutoverOverlap(cutover.cutoverId)),
    );
  }
  const rollout: RolloutRow = {
    kind: 'rollout',
    rolloutId: request.rolloutId,
    requestFingerprint: fingerprint,
    fromPolicy: request.fromPolicy,
    toPolicy: request.toPolicy,
    selection,
    steps: request.steps,
    controller: request.controller ?? null,
    status: 'running',
    step: 0,
    percent: 0,
    revision: 0,
    cancelIntents: false,
    reason: request.reason ?? null,
    startedAt: snapshot.now,
    updatedAt: snapshot.now,
    ...holdFieldsOfRequest(request),
  };
  const plan = new ChangePlan(snapshot, rollout, lastSeq, active);
  plan.expect.push(
    { type: 'policy', version: request.fromPolicy },
    { type: 'policy', version: request.toPolicy },
    RUNNING_CUTOVERS_REF,
  );
  return plan.nextStep(request.steps[0]!, 'running');
}

function reasonOf(change: { reason?: string }): Partial<RolloutRow> {
  return change.reason === undefined ? {} : { reason: change.reason };
}

/** The holds, gates and failure action a start stores; none for a rollout its operator drives. */
function holdFieldsOfRequest(request: StartRolloutRequest): Partial<RolloutRow> {
  const fields: Partial<RolloutRow> = {};
  if (request.holdSeconds !== undefined) {
    fields.holdSeconds =
      typeof request.holdSeconds === 'number'
        ? request.steps.map(() => request.holdSeconds as number)
        : request.holdSeconds;
    fields.holdExtensionSeconds = request.holdExtensionSeconds ?? null;
    fields.gates = request.gates ?? [];
  }
  if (request.onFailure !== undefined) fields.onFailure = request.onFailure;
  return fields;
}

/** One change of one rollout: what it read, and the rows it writes. */
class ChangePlan {
  readonly expect: Ref[];
  readonly active: ActiveRollout[];

  constructor(
    private readonly snapshot: Snapshot,
    private readonly rollout: RolloutRow,
    private readonly lastSeq: number,
    active?: ActiveRollout[],
  ) {
    this.active = active ?? readActiveRollouts(snapshot);
    this.expect = [rolloutRef(rolloutKey(rollout.rolloutId)), ACTIVE_ROLLOUTS_REF];
  }

  /** Whether the cutover of the current step has moved every scope it lists. */
  stepDone(): boolean {
    if (this.rollout.step === 0) return true;
    const ref = {
      type: 'cutover' as const,
      cutoverId: stepCutoverId(this.rollout.rolloutId, this.rollout.step),
    };
    this.expect.push(ref);
    return this.snapshot.get(ref)?.status === 'completed';
  }

  /**
   * The rollout with `fields` changed and its revision moved on, with its active entry. The last
   * active rollout to finish removes the tenant's active rollouts: an acquire of a new scope then
   * reads a key with no row, as in a tenant that never started one, which no store locks and a
   * process that never read it guesses right (postgres-apply-payload.ts).
   */
  changed(fields: Partial<RolloutRow>, cutover: Put[] = []): Transition<RolloutRow> {
    const rollout: RolloutRow = {
      ...this.rollout,
      ...fields,
      revision: this.rollout.revision + 1,
      updatedAt: this.snapshot.now,
    };
    const final = rollout.status === 'completed' || rollout.status === 'rolled_back';
    const others = this.active.filter((entry) => entry.rolloutId !== rollout.rolloutId);
    const entry: ActiveRollout = {
      rolloutId: rollout.rolloutId,
      fromPolicy: rollout.fromPolicy,
      toPolicy: rollout.toPolicy,
      selection: rollout.selection,
      percent: rollout.percent,
      step: rollout.step,
      rollingBack: rollout.status === 'rolling_back',
    };
    const active = final ? others : [...others, entry];
    const put: Put[] = [rolloutPut(rolloutKey(rollout.rolloutId), rollout), ...cutover];
    const stored = this.snapshot.get(ACTIVE_ROLLOUTS_REF) !== null;
    if (active.length > 0) put.push(activeRolloutsPut(active));
    return {
      expect: this.expect,
      put,
      ...(active.length === 0 && stored ? { delete: [ACTIVE_ROLLOUTS_REF] } : {}),
      audit: [],
      answer: { ok: true, value: rollout },
    };
  }

  /**
   * Starts step `step + 1` at `percent`: its cutover will list the selection's scopes the hash
   * admits that are still on fromPolicy (or on none), page by page. The active rollouts take the
   * new percent in this same transaction, so a scope an acquire creates from now on is pinned by
   * it, wherever the listing has come.
   */
  nextStep(percent: number, status: RolloutStatus): Transition<RolloutRow> {
    const { rollout } = this;
    const step = rollout.step + 1;
    const cutoverId = stepCutoverId(rollout.rolloutId, step);
    const cutover = this.#newCutover(cutoverId, step);
    if (cutover === null) return this.#idConflict(cutoverId);
    return this.changed({ status, step, percent }, cutover({ of: 'step', percent, after: '' }));
  }

  /** Starts the rollback: its cutover will list every scope the rollout moved or pinned. */
  rollback(cancelIntents: boolean, fields: Partial<RolloutRow> = {}): Transition<RolloutRow> {
    const cutoverId = rollbackCutoverId(this.rollout.rolloutId);
    const cutover = this.#newCutover(cutoverId, 'rollback', this.rollout.fromPolicy, '');
    if (cutover === null) return this.#idConflict(cutoverId);
    return this.changed(
      { ...fields, status: 'rolling_back', cancelIntents },
      cutover({ of: 'rollback', after: '' }),
    );
  }

  /**
   * Marks the rollout completed once its step at 100 % has moved every scope, or rolled back once
   * the rollback has; a rollout with nothing to finish is answered as it is.
   */
  finish(): Transition<RolloutRow> {
    const { rollout } = this;
    const unchanged = {
      expect: this.expect,
      put: [],
      audit: [],
      answer: { ok: true as const, value: rollout },
    };
    if (rollout.status === 'rolling_back') {
      const ref = { type: 'cutover' as const, cutoverId: rollbackCutoverId(rollout.rolloutId) };
      this.expect.push(ref);
      if (this.snapshot.get(ref)?.status !== 'completed') return unchanged;
      return this.changed({ status: 'rolled_back' });
    }
    if (rollout.status === 'running' && rollout.percent >= 100 && this.stepDone()) {
      return this.changed({ status: 'completed' });
    }
    return unchanged;
  }

  #idConflict(cutoverId: string): Transition<RolloutRow> {
    return refused(this.expect, [], refusalError(cutoverIdConflict(cutoverId)));
  }

  /**
   * The puts of a new cutover of the rollout, listed later by `listing`; null when the id is
   * taken.
   */
  #newCutover(
    cutoverId: string,
    step: number | 'rollback',
    toPolicy = this.rollout.toPolicy,
    holder = this.rollout.controller ?? '',
  ): ((listing: CutoverListing) => Put[]) | null {
    const ref = { type: 'cutover' as const, cutoverId };
    this.expect.push(ref);
    if (this.snapshot.get(ref) !== null) return null;
    const request = {
      cutoverId,
      requestFingerprint: rolloutCutoverFingerprint(this.rollout.rolloutId, step),
      toPolicy,
      holder,
      reason: this.rollout.reason ?? undefined,
    };
    return (listing) => [
      newCutover(this.snapshot, request, this.lastSeq, []),
      cutoverCursorPut(cutoverId, { next: 0, listing }),
    ];
  }
}
