/**
 * The rollout driver of `fencegate serve` (docs/rollout.md, "The driver"): for every rollout with
 * holds it holds each step for its hold in store time, checks the gates over it, then starts the
 * next step, or rolls back or pauses as the rollout says. Every server may run one; a rollout is
 * driven by the one holding its driver lease in the store (plan-rollout-driver.ts), and each of
 * the driver's changes names that lease, so a server whose lease was taken over changes nothing.
 * Everything it decides from is read from the store at each look: a server killed mid-hold or
 * mid-rollback leaves nothing behind that the next driver needs.
 */
import {
  decideGate,
  externalCounts,
  lookPhase,
  type GateCounts,
  type GatePhase,
} from '../core/gate-rules.js';
import type { DriverClaim } from '../core/plan/plan-rollout-driver.js';
import type { RolloutDriverRow, RolloutRow } from '../core/rollout-rows.js';
import { stepCutoverId } from '../core/rollout-rules.js';
import { isFencegateError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { RolloutGateResult } from '../types.js';
import { measureGates, TenantReplays, type GateWindow, type ReadSource } from './gate-metrics.js';
import { Rollouts } from './rollouts.js';

export const DEFAULT_DRIVER_LEASE_MS = 15_000;
export const DEFAULT_DRIVER_INTERVAL_MS = 1000;

export interface RolloutDriverOptions {
  store: Store;
  /** This server's name in the driver leases; unique per process. */
  holder: string;
  leaseMs?: number;
  intervalMs?: number;
  /**
   * Drives only this tenant's rollouts (a demo's driver on a store others may use); every
   * tenant's when absent, as `fencegate serve` runs it.
   */
  tenant?: string;
  /** Reads a named external metric (metric-sources.ts); none configured when absent. */
  readSource?: ReadSource;
  /** Told of each change the driver makes (advance, pause, rollback, resumed moves). */
  onAction?: (action: DriverAction) => void;
  /** Told of a look that failed (the store unreachable, say); the next look tries again. */
  onError?: (error: unknown) => void;
}

export interface DriverAction {
  tenant: string;
  rolloutId: string;
  action: 'advance' | 'pause' | 'rollback' | 'resume_moves';
  reason?: string;
}

export class RolloutDriver {
  readonly #options: RolloutDriverOptions;
  readonly #replays = new TenantReplays();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(options: RolloutDriverOptions) {
    this.#options = options;
  }

  /** Looks now and every intervalMs; one look at a time. */
  start(): this {
    const look = () => {
      this.#running = this.#running.then(() => (this.#stopped ? undefined : this.tick()));
    };
    look();
    this.#timer = setInterval(look, this.#options.intervalMs ?? DEFAULT_DRIVER_INTERVAL_MS);
    this.#timer.unref();
    return this;
  }

  /** Stops looking; resolves once the look under way has ended. Leases run out by themselves. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#running;
  }

  /** One look at every tenant's driven rollouts; never throws. */
  async tick(): Promise<void> {
    const { store } = this.#options;
    try {
      const only = this.#options.tenant;
      if (only !== undefined) {
        for (const row of await store.readRollouts(only)) {
          if (this.#stopped) return;
          await this.#look(only, row);
        }
        return;
      }
      if (store.nextRolloutTenant === undefined) return;
      for (let tenant = await store.nextRolloutTenant(''); tenant !== null;) {
        for (const row of await store.readRollouts(tenant)) {
          if (this.#stopped) return;
          await this.#look(tenant, row);
        }
        tenant = await store.nextRolloutTenant(tenant);
      }
    } catch (error) {
      this.#options.onError?.(error);
    }
  }

  async #look(tenant: string, row: RolloutRow): Promise<void> {
    if (row.holdSeconds === undefined || row.holdSeconds === null) return;
    if (row.status !== 'running' && row.status !== 'rolling_back') return;
    const { store, holder } = this.#options;
    const lease = await store.claimRolloutDriver(
      tenant,
      row.rolloutId,
      holder,
      this.#options.leaseMs ?? DEFAULT_DRIVER_LEASE_MS,
    );
    if (lease === null) return;
    // A look may take longer than the lease (a slow metric source, a first replay of a long
    // history): the lease is renewed while it lasts, so no other server takes the rollout over
    // mid-look and each server's look, refused in turn, never records anything.
    const leaseMs = this.#options.leaseMs ?? DEFAULT_DRIVER_LEASE_MS;
    const keep = setInterval(() => {
      store.claimRolloutDriver(tenant, row.rolloutId, holder, leaseMs).catch(() => undefined);
    }, leaseMs / 3);
    keep.unref();
    try {
      await this.#drive(tenant, row, lease);
    } catch (error) {
      // An operator (or another driver) changed the rollout since it was read: look again later.
      if (isFencegateError(error) && error.code === 'rollout_conflict') return;
      throw error;
    } finally {
      clearInterval(keep);
    }
  }

  /** Renews the lease before the look's writes; false when another server took it over. */
  async #stillDriving(
    tenant: string,
    rolloutId: string,
    lease: RolloutDriverRow,
  ): Promise<boolean> {
    const { store, holder } = this.#options;
    const leaseMs = this.#options.leaseMs ?? DEFAULT_DRIVER_LEASE_MS;
    const kept = await store.claimRolloutDriver(tenant, rolloutId, holder, leaseMs);
    return kept !== null && kept.fence === lease.fence;
  }

  async #drive(tenant: string, row: RolloutRow, lease: RolloutDriverRow): Promise<void> {
    const { store } = this.#options;
    const claim: DriverClaim = { holder: lease.holder, fence: lease.fence };
    const rollouts = new Rollouts(store, tenant);
    const step = await store.getCutover(tenant, stepCutoverId(row.rolloutId, row.step));
    const moving =
      row.status === 'rolling_back' || step?.status !== 'completed' || row.percent >= 100;
    if (moving) {
      // A rollback, a step or a completion a stopped server left: finish it.
      this.#told(tenant, row.rolloutId, 'resume_moves');
      await rollouts.continue(row.rolloutId);
      return;
    }
    // The last step below 100 % has no next one: the operator promotes or rolls back.
    if (row.step >= row.steps.length || step.completedAt === null) return;
    const holdSeconds = row.holdSeconds![row.step - 1] ?? 0;
    const holdEnd = step.completedAt + holdSeconds * 1000;
    const extensionEnd = holdEnd + (row.holdExtensionSeconds ?? holdSeconds) * 1000;
    const now = await store.now();
    // The previous look at this step, from the readings it recorded: the hold's end is looked at once.
    const previous = lease.step === row.step ? lease.gateResults : [];
    const lastLookAt = previous[0]?.at ?? null;
    const phase = lookPhase({ now, holdEnd, extensionEnd, lastLookAt });
    const results = await this.#gateResults(
      tenant,
      row,
      { from: step.completedAt, to: now, afterSeq: step.startSeq },
      phase,
      previous,
    );
    if (!(await this.#stillDriving(tenant, row.rolloutId, lease))) return;
    await store.recordRolloutGates(tenant, row.rolloutId, claim, row.step, results);
    const failed = results.find((result) => result.verdict === 'fail');
    if (failed !== undefined) {
      await this.#fail(
        tenant,
        row,
        claim,
        `gate ${failed.name} failed at step ${row.step}: ${describe(failed)}`,
      );
      return;
    }
    if (phase === 'during') return;
    const pending = results.find((result) => result.verdict === 'pending');
    if (pending !== undefined) {
      if (now < extensionEnd) return;
      // Never a pass on no evidence: past the extension the rollout waits for its operator.
      await this.#change(
        tenant,
        row,
        claim,
        'pause',
        `gate ${pending.name} had too few samples at step ${row.step}: ${describe(pending)}`,
      );
      return;
    }
    await this.#change(tenant, row, claim, 'advance');
    await rollouts.continue(row.rolloutId);
  }

  /** Each gate's reading at this look; `previous`: the last look's at this step, if any. */
  async #gateResults(
    tenant: string,
    row: RolloutRow,
    window: GateWindow,
    phase: GatePhase,
    previous: readonly RolloutGateResult[],
  ): Promise<RolloutGateResult[]> {
    const gates = row.gates ?? [];
    if (gates.length === 0) return [];
    const counts = await measureGates(
      this.#options.store,
      tenant,
      row,
      window,
      this.#options.readSource ?? (() => Promise.resolve(null)),
      this.#replays,
    );
    return gates.map((gate) => {
      let gateCounts = counts.get(gate.name) as GateCounts;
      if (gate.metric === 'external') {
        const before = previous.find((result) => result.name === gate.name) ?? null;
        gateCounts = externalCounts(gateCounts.reading ?? null, before);
      }
      return decideGate(gate, gateCounts, phase, window.to);
    });
  }

  async #fail(tenant: string, row: RolloutRow, claim: DriverClaim, reason: string): Promise<void> {
    const action = row.onFailure ?? 'rollback';
    await this.#change(tenant, row, claim, action, reason);
    if (action === 'rollback')
      await new Rollouts(this.#options.store, tenant).continue(row.rolloutId);
  }

  async #change(
    tenant: string,
    row: RolloutRow,
    claim: DriverClaim,
    action: 'advance' | 'pause' | 'rollback',
    reason?: string,
  ): Promise<void> {
    await this.#options.store.changeRollout(tenant, {
      action,
      rolloutId: row.rolloutId,
      revision: row.revision,
      driver: claim,
      ...(reason === undefined ? {} : { reason }),
    });
    this.#told(tenant, row.rolloutId, action, reason);
  }

  #told(tenant: string, rolloutId: string, action: DriverAction['action'], reason?: string): void {
    this.#options.onAction?.({
      tenant,
      rolloutId,
      action,
      ...(reason === undefined ? {} : { reason }),
    });
  }
}

function describe(result: RolloutGateResult): string {
  const parts = [`value ${result.value ?? 'none'} of ${result.samples} samples`];
  if (result.baseline !== null)
    parts.push(`baseline ${result.baseline} of ${result.baselineSamples}`);
  if (result.limit !== null) parts.push(`limit ${result.limit}`);
  if (result.pValue !== null) parts.push(`p ${result.pValue.toPrecision(3)}`);
  return parts.join(', ');
}
