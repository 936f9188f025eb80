/**
 * gate.rollouts: the operator's commands on progressive rollouts. Every state change is one store
 * transaction, a compare-and-swap on the rollout's revision (core/plan/plan-rollout.ts); the
 * scopes of a step or of the rollback are then moved by the cutover loop, chunk by chunk, and the
 * rollout is marked completed or rolled back once its last cutover has moved everything. A
 * command sent again after an interruption resumes the cutover it left.
 */
import { randomUUID } from 'node:crypto';
import { FencegateError, isFencegateError } from '../errors.js';
import type { Caller } from '../core/grant-token.js';
import type { RolloutAction, RolloutChange } from '../core/plan/plan-rollout.js';
import { holdFieldsOf, type RolloutRow } from '../core/rollout-rows.js';
import { rollbackCutoverId, stepCutoverId } from '../core/rollout-rules.js';
import { refusalError, rolloutNotFound, rolloutStateConflict } from '../core/refusal-messages.js';
import {
  validateListRollouts,
  validateRollback,
  validateRolloutCommand,
  validateStartRollout,
} from '../core/validate-rollout.js';
import { requireName } from '../core/validate.js';
import { requireKnownSources } from '../core/validate-rollout-gates.js';
import type { Store } from '../store/store.js';
import type {
  ListRolloutsQuery,
  Rollout,
  RolloutCommand,
  RolloutReport,
  RolloutRollbackRequest,
  StartRolloutRequest,
} from '../types.js';
import { buildRolloutReport } from './report.js';

/** The operator's rollout commands, as the library, the server and the CLI offer them. */
export interface RolloutsApi {
  /** Starts a rollout and moves its first step; idempotent by rolloutId. */
  start(request: StartRolloutRequest): Promise<Rollout>;
  get(rolloutId: string): Promise<Rollout | null>;
  /** The tenant's rollouts, by id. */
  list(query?: ListRolloutsQuery): Promise<Rollout[]>;
  /** Moves the next step; an interrupted step is resumed instead. */
  advance(command: RolloutCommand): Promise<Rollout>;
  pause(command: RolloutCommand): Promise<Rollout>;
  resume(command: RolloutCommand): Promise<Rollout>;
  /** Ramps to 100 % in one step. */
  promote(command: RolloutCommand): Promise<Rollout>;
  /** Moves every scope the rollout moved or pinned back to fromPolicy with a new fence. */
  rollback(request: RolloutRollbackRequest): Promise<Rollout>;
  report(rolloutId: string): Promise<RolloutReport | null>;
}

/** Reads and tries again of a command that named no revision, while other commands move it. */
const LATEST_ATTEMPTS = 5;

export class Rollouts implements RolloutsApi {
  constructor(
    private readonly store: Store,
    private readonly tenant: string,
    private readonly caller?: Caller,
    private readonly metricSources: ReadonlySet<string> = new Set(),
  ) {}

  async start(request: StartRolloutRequest): Promise<Rollout> {
    const valid = validateStartRollout(request);
    requireKnownSources(valid.gates, this.metricSources);
    const rolloutId = valid.rolloutId ?? randomUUID();
    return await this.#drive(
      await this.#change({ action: 'start', request: { ...valid, rolloutId } }),
    );
  }

  async get(rolloutId: string): Promise<Rollout | null> {
    const [row] = await this.store.readRollouts(this.tenant, requireName(rolloutId, 'rolloutId'));
    return row === undefined ? null : await this.#public(row);
  }

  async list(query: ListRolloutsQuery = {}): Promise<Rollout[]> {
    const { status } = validateListRollouts(query);
    const rows = await this.store.readRollouts(this.tenant);
    const shown = rows.filter((row) => status === undefined || row.status === status);
    return await Promise.all(shown.map((row) => this.#public(row)));
  }

  advance(command: RolloutCommand): Promise<Rollout> {
    return this.#step('advance', validateRolloutCommand(command));
  }

  promote(command: RolloutCommand): Promise<Rollout> {
    return this.#step('promote', validateRolloutCommand(command));
  }

  async pause(command: RolloutCommand): Promise<Rollout> {
    return await this.#public(await this.#command('pause', validateRolloutCommand(command)));
  }

  async resume(command: RolloutCommand): Promise<Rollout> {
    return await this.#drive(await this.#command('resume', validateRolloutCommand(command)));
  }

  async rollback(request: RolloutRollbackRequest): Promise<Rollout> {
    const valid = validateRollback(request);
    let current = await this.#read(valid.rolloutId);
    for (let attempt = 1; ; attempt += 1) {
      // A rollback sent again resumes the one under way.
      if (current.status === 'rolling_back' || current.status === 'rolled_back') {
        return await this.#drive(current);
      }
      const change: RolloutChange = {
        action: 'rollback',
        rolloutId: valid.rolloutId,
        revision: valid.revision ?? current.revision,
        cancelIntents: valid.cancelIntents === true,
      };
      let row: RolloutRow;
      try {
        row = await this.#change(change);
      } catch (error) {
        // One that named no revision rolls back the rollout as it is now (see #atLatest).
        if (valid.revision !== undefined || attempt >= LATEST_ATTEMPTS) throw error;
        if (!isFencegateError(error) || error.code !== 'rollout_conflict') throw error;
        const latest = await this.#read(valid.rolloutId);
        if (latest.revision === current.revision) throw error;
        current = latest;
        continue;
      }
      return await this.#drive(row);
    }
  }

  async report(rolloutId: string): Promise<RolloutReport | null> {
    const [row] = await this.store.readRollouts(this.tenant, requireName(rolloutId, 'rolloutId'));
    if (row === undefined) return null;
    return await buildRolloutReport(this.store, this.tenant, await this.#public(row), row);
  }

  /**
   * Moves the rollout's open cutover to its end and marks it finished when it is, without changing
   * its state otherwise: what the driver does for a step or a rollback a stopped server left.
   */
  async continue(rolloutId: string): Promise<Rollout> {
    return await this.#drive(await this.#read(requireName(rolloutId, 'rolloutId')));
  }

  /** Advance or promote: an interrupted step is resumed first, and the command ends there. */
  async #step(action: 'advance' | 'promote', command: RolloutCommand): Promise<Rollout> {
    const current = await this.#read(command.rolloutId);
    if (!(await this.#cutoverDone(current, currentCutover(current)))) {
      // A command made at an older revision did not see the step under way: it is refused, as
      // the store would refuse it, rather than answered with the step it resumes.
      if (command.revision !== undefined && command.revision !== current.revision) {
        throw refusalError(rolloutStateConflict(current, action, command.revision));
      }
      return await this.#drive(current);
    }
    return await this.#drive(await this.#command(action, command, current));
  }

  async #command(
    action: RolloutAction,
    command: RolloutCommand,
    current?: RolloutRow,
  ): Promise<RolloutRow> {
    const change = (revision: number): Promise<RolloutRow> =>
      this.#change({ action, rolloutId: command.rolloutId, revision });
    if (command.revision !== undefined) return await change(command.revision);
    return await this.#atLatest(
      command.rolloutId,
      current ?? (await this.#read(command.rolloutId)),
      change,
    );
  }

  /**
   * A command that named no revision means "whatever the rollout is now": when another command
   * moved the rollout between the read and the compare-and-swap, it is read again and applied to
   * that state (which may refuse it, e.g. a rollback of a rollout that completed meanwhile).
   */
  async #atLatest(
    rolloutId: string,
    current: RolloutRow,
    change: (revision: number) => Promise<RolloutRow>,
  ): Promise<RolloutRow> {
    let row = current;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await change(row.revision);
      } catch (error) {
        if (!isFencegateError(error) || error.code !== 'rollout_conflict') throw error;
        const latest = await this.#read(rolloutId);
        if (latest.revision === row.revision || attempt >= LATEST_ATTEMPTS) throw error;
        row = latest;
      }
    }
  }

  async #change(change: RolloutChange): Promise<RolloutRow> {
    return await this.store.changeRollout(this.tenant, change);
  }

  async #read(rolloutId: string): Promise<RolloutRow> {
    const [row] = await this.store.readRollouts(this.tenant, rolloutId);
    if (row === undefined) throw refusalError(rolloutNotFound(rolloutId));
    return row;
  }

  /**
   * Moves the rollout's open cutovers to their end (a rollback closes the step it interrupted
   * too: that step moves nothing more), then marks the rollout finished when it is.
   */
  async #drive(row: RolloutRow): Promise<Rollout> {
    const open = [
      currentCutover(row),
      row.step > 0 ? stepCutoverId(row.rolloutId, row.step) : null,
    ];
    for (const cutoverId of new Set(open)) {
      if (cutoverId === null) continue;
      while ((await this.store.moveCutoverChunk(this.tenant, cutoverId, this.caller)) > 0) {
        // Yield between chunks so requests queued behind a long step are served.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    const finished = await this.#change({ action: 'finish', rolloutId: row.rolloutId });
    return await this.#public(finished);
  }

  /** The gates' readings of the current step, from the driver's document. */
  async #gateResults(row: RolloutRow): Promise<Rollout['gateResults']> {
    if ((row.gates ?? []).length === 0) return [];
    const driver = await this.store.readRolloutDriver(this.tenant, row.rolloutId);
    return driver !== null && driver.step === row.step ? driver.gateResults : [];
  }

  async #cutoverDone(row: RolloutRow, cutoverId: string | null): Promise<boolean> {
    if (cutoverId === null) return true;
    const cutover = await this.store.getCutover(this.tenant, cutoverId);
    if (cutover === null)
      throw new FencegateError('internal_error', "a rollout's cutover is missing");
    return cutover.status === 'completed';
  }

  async #public(row: RolloutRow): Promise<Rollout> {
    const cutoverId = currentCutover(row);
    return {
      rolloutId: row.rolloutId,
      fromPolicy: row.fromPolicy,
      toPolicy: row.toPolicy,
      selection: row.selection,
      steps: row.steps,
      controller: row.controller,
      status: row.status,
      step: row.step,
      percent: row.percent,
      revision: row.revision,
      cancelIntents: row.cancelIntents,
      reason: row.reason,
      startedAt: row.startedAt,
      updatedAt: row.updatedAt,
      ...holdFieldsOf(row),
      gateResults: await this.#gateResults(row),
      cutoverId,
      cutoverDone: await this.#cutoverDone(row, cutoverId),
    };
  }
}

/** The cutover that moves the rollout's scopes now, or moved them last. */
function currentCutover(row: RolloutRow): string | null {
  if (row.status === 'rolling_back' || row.status === 'rolled_back') {
    return rollbackCutoverId(row.rolloutId);
  }
  return row.step === 0 ? null : stepCutoverId(row.rolloutId, row.step);
}
