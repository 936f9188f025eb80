/**
 * The model-run commands: workers acquire, renew, release, take over, read and commit with what
 * they last learned (which goes stale as others act), an operator cancels and deletes, the store
 * clock jumps. Every command runs against the model and the store and compares the answers and
 * the touched scope's state.
 */
import type { AsyncCommand } from 'fast-check';
import type { FencegateApi } from '../../api.js';
import type { CommitResult, Grant, RecordState } from '../../types.js';
import { compareAnswer, diverge, matchesRefusal, same, settle } from './compare.js';
import type {
  ModelCommitOutcome,
  ModelCommitRequest,
  ModelGrant,
  SemanticsModel,
} from './semantics-model.js';

export const WORKERS = ['w0', 'w1', 'w2'] as const;
export const SCOPES = ['m/s0', 'm/s1'] as const;
export const NAMES = ['r0', 'r1'] as const;
export const TASKS_PER_WORKER = 2;

/**
 * What one worker believes: the fences it was granted, the revisions each of its tasks read (two
 * tasks of one holder race on the same records, as in A5), its last commit.
 */
export interface WorkerKnowledge {
  fences: Map<string, number>;
  reads: Map<string, { revision: number; exists: boolean }>[];
  lastCommit: ModelCommitRequest | null;
  /** The scope of the worker's latest grant: where it usually commits. */
  lastGranted: string | null;
}

export interface ModelWorld {
  model: SemanticsModel;
  workers: WorkerKnowledge[];
  /** Source of unique values and operation ids within a run. */
  counter: number;
}

export interface RealWorld {
  gate: FencegateApi;
  advanceClock(ms: number): Promise<void>;
}

export type ModelCommand = AsyncCommand<ModelWorld, RealWorld, false>;

const key = (scope: string, name: string): string => `${scope}/${name}`;

function worker(world: ModelWorld, index: number): WorkerKnowledge {
  const known = world.workers[index];
  if (known === undefined) throw new Error(`no worker ${index}`);
  return known;
}

function taskReads(
  world: ModelWorld,
  w: number,
  task: number,
): Map<string, { revision: number; exists: boolean }> {
  const reads = worker(world, w).reads[task];
  if (reads === undefined) throw new Error(`no task ${task}`);
  return reads;
}

function learnGrant(known: WorkerKnowledge, grant: Grant): void {
  known.fences.set(grant.scope, grant.fence);
  known.lastGranted = grant.scope;
}

function toModelGrant(grant: Grant): ModelGrant {
  return {
    scope: grant.scope,
    fence: grant.fence,
    holder: grant.holder,
    leaseExpiresAt: grant.leaseExpiresAt,
    policyVersion: grant.policyVersion,
    reacquired: grant.reacquired,
  };
}

function recordView(record: {
  exists: boolean;
  value: unknown;
  revision: number;
  incarnation: number;
}): unknown {
  return {
    exists: record.exists,
    value: record.exists ? record.value : null,
    revision: record.revision,
    incarnation: record.incarnation,
  };
}

/** Compares one scope's authority and records with the model. */
export async function compareScope(
  world: ModelWorld,
  real: RealWorld,
  scope: string,
): Promise<void> {
  const expected = world.model.scopes.get(scope);
  const actual = await real.gate.getScope(scope);
  if (expected === undefined) {
    if (actual !== null) diverge(`scope ${scope}`, null, actual);
  } else {
    if (actual === null) diverge(`scope ${scope}`, expected, null);
    same(
      `scope ${scope}`,
      {
        fence: expected.fence,
        holder: expected.holder,
        policyVersion: expected.policy,
        status: expected.status,
        leaseExpiresAt: expected.holder === null ? 'n/a' : expected.expiresAt,
      },
      {
        fence: actual.fence,
        holder: actual.holder,
        policyVersion: actual.policyVersion,
        status: actual.status,
        leaseExpiresAt: actual.holder === null ? 'n/a' : actual.leaseExpiresAt,
      },
    );
  }
  const records = await real.gate.listRecords(scope);
  same(
    `records of ${scope}`,
    world.model
      .recordsOf(scope)
      .map(([name, record]) => ({ name, ...(recordView(record) as object) })),
    records.map((record) => ({ name: record.name, ...(recordView(record) as object) })),
  );
}

abstract class Command implements ModelCommand {
  check(): boolean {
    return true;
  }
  abstract run(world: ModelWorld, real: RealWorld): Promise<void>;
  abstract toString(): string;
}

export class Acquire extends Command {
  constructor(
    readonly w: number,
    readonly scope: string,
    readonly ttlMs: number,
    readonly policy: string | null,
  ) {
    super();
  }
  async run(world: ModelWorld, real: RealWorld): Promise<void> {
    const holder = WORKERS[this.w] ?? 'w?';
    const expected = world.model.acquire(this.scope, holder, this.ttlMs, this.policy);
    const actual = await settle(() =>
      real.gate.acquire({
        scope: this.scope,
        holder,
        ttlMs: this.ttlMs,
        ...(this.policy === null ? {} : { policyVersion: this.policy }),
      }),
    );
    const grant = compareAnswer(String(this), expected, actual, toModelGrant);
    if (grant !== null) learnGrant(worker(world, this.w), grant);
    await compareScope(world, real, this.scope);
  }
  toString(): string {
    return `acquire(${WORKERS[this.w]}, ${this.scope}, ttl ${this.ttlMs}, policy ${this.policy})`;
  }
}

export class Renew extends Command {
  constructor(
    readonly w: number,
    readonly scope: string,
    readonly ttlMs: number,
  ) {
    super();
  }
  async run(world: ModelWorld, real: RealWorld): Promise<void> {
    const holder = WORKERS[this.w] ?? 'w?';
    const fence = worker(world, this.w).fences.get(this.scope) ?? 1;
    const expected = world.model.renew(this.scope, holder, fence, this.ttlMs);
    const actual = await settle(() =>
      real.gate.renew({ scope: this.scope, holder, fence, ttlMs: this.ttlMs }),
    );
    compareAnswer(`${String(this)} at fence ${fence}`, expected, actual, toModelGrant);
    await compareScope(world, real, this.scope);
  }
  toString(): string {
    return `renew(${WORKERS[this.w]}, ${this.scope}, ttl ${this.ttlMs})`;
  }
}

export class Release extends Command {
  constructor(
    readonly w: number,
    readonly scope: string,
  ) {
    super();
  }
  async run(world: ModelWorld, real: RealWorld): Promise<void> {
    const holder = WORKERS[this.w] ?? 'w?';
    const fence = worker(world, this.w).fences.get(this.scope) ?? 1;
    const expected = world.model.release(this.scope, holder, fence);
    const actual = await settle(() => real.gate.release({ scope: this.scope, holder, fence }));
    compareAnswer(`${String(this)} at fence ${fence}`, expected, actual, (value) => value);
    await compareScope(world, real, this.scope);
  }
  toString(): string {
    return `release(${WORKERS[this.w]}, ${this.scope})`;
  }
}

export class Takeover extends Command {
  constructor(
    readonly w: number,
    readonly scope: string,
    readonly ttlMs: number | null,
    readonly policy: string | null,
  ) {
    super();
  }
  async run(world: ModelWorld, real: RealWorld): Promise<void> {
    const holder = WORKERS[this.w] ?? 'w?';
    const expected = world.model.takeover(this.scope, holder, this.ttlMs, this.policy);
    const actual = await settle(() =>
      real.gate.takeover(this.scope, {
        holder,
        ...(this.ttlMs === null ? {} : { ttlMs: this.ttlMs }),
        ...(this.policy === null ? {} : { policyVersion: this.policy }),
      }),
    );
    const grant = compareAnswer(String(this), expected, actual, toModelGrant);
    if (grant !== null) learnGrant(worker(world, this.w), grant);
    await compareScope(world, real, this.scope);
  }
  toString(): string {
    return `takeover(${WORKERS[this.w]}, ${this.scope}, ttl ${this.ttlMs}, policy ${this.policy})`;
  }
}

export class Cancel extends Command {
  constructor(readonly scope: string) {
    super();
  }
  async run(world: ModelWorld, real: RealWorld): Promise<void> {
    const expected = world.model.cancel(this.scope);
    const actual = await settle(() => real.gate.cancel(this.scope));
    compareAnswer(String(this), expected, actual, (value) => value);
    await compareScope(world, real, this.scope);
  }
  toString(): string {
    return `cancel(${this.scope})`;
  }
}

export class DeleteScope extends Command {
  constructor(readonly scope: string) {
    super();
  }
  async run(world: ModelWorld, real: RealWorld): Promise<void> {
    const expected = world.model.deleteScope(this.scope);
    const actual = await settle(() => real.gate.deleteScope(this.scope));
    compareAnswer(String(this), expected, actual, (value) => value);
    await compareScope(world, real, this.scope);
  }
  toString(): string {
    return `deleteScope(${this.scope})`;
  }
}

export class Read extends Command {
  constructor(
    readonly w: number,
    readonly task: number,
    readonly scope: string,
    readonly name: string,
  ) {
    super();
  }
  async run(world: ModelWorld, real: RealWorld): Promise<void> {
    const actual: RecordState = await real.gate.getRecord(this.scope, this.name);
    const expected = world.model.record(this.scope, this.name);
    same(String(this), recordView(expected), recordView(actual));
    taskReads(world, this.w, this.task).set(key(this.scope, this.name), {
      revision: actual.revision,
      exists: actual.exists,
    });
  }
  toString(): string {
    return `read(${WORKERS[this.w]} task ${this.task}, ${this.scope}, ${this.name})`;
  }
}

export interface CommitSpec {
  /** Commit to the scope of the worker's latest grant, when it has one. */
  ownScope: boolean;
  task: number;
  writes: { name: string; remove: boolean }[];
  dependency: { scope: string; name: string } | null;
  effect: number | null;
  policy: string | null;
}

function projectCommit(result: CommitResult): unknown {
  if (result.outcome === 'committed') {
    return {
      outcome: 'committed',
      operationId: result.operationId,
      scope: result.scope,
      fence: result.fence,
      records: result.records.map((record) => ({
        name: record.name,
        revision: record.revision,
        incarnation: record.incarnation,
        deleted: record.fingerprint === null,
      })),
      intents: result.intents,
      replayed: result.replayed,
    };
  }
  return { outcome: 'rejected', operationId: result.operationId, replayed: result.replayed };
}

function compareCommit(what: string, expected: ModelCommitOutcome, actual: CommitResult): void {
  if (expected.outcome === 'committed') {
    same(what, { ...expected, replayed: false }, projectCommit(actual));
    return;
  }
  if (actual.outcome !== 'rejected') diverge(what, expected, actual);
  if (!matchesRefusal(expected.refusal, actual.error.code, actual.error.details)) {
    diverge(what, expected.refusal, actual.error);
  }
  same(
    what,
    { outcome: 'rejected', operationId: expected.operationId, replayed: false },
    projectCommit(actual),
  );
}

export class Commit extends Command {
  constructor(
    readonly w: number,
    readonly scope: string,
    readonly spec: CommitSpec,
  ) {
    super();
  }

  #request(world: ModelWorld): ModelCommitRequest {
    const known = worker(world, this.w);
    world.counter += 1;
    const n = world.counter;
    const scope = this.spec.ownScope && known.lastGranted !== null ? known.lastGranted : this.scope;
    const request: ModelCommitRequest = {
      scope,
      fence: known.fences.get(scope) ?? 1,
      operationId: `op-${n}`,
      taskId: `${WORKERS[this.w]}-task${this.spec.task}`,
      reads: [],
      writes: [],
      intents: [],
    };
    if (this.spec.policy !== null) request.policyVersion = this.spec.policy;
    const dependency = this.spec.dependency;
    if (dependency !== null) {
      const read = taskReads(world, this.w, this.spec.task).get(
        key(dependency.scope, dependency.name),
      );
      request.reads.push({ ...dependency, revision: read?.revision ?? 0 });
    }
    for (const write of this.spec.writes) {
      const read = taskReads(world, this.w, this.spec.task).get(key(scope, write.name)) ?? {
        revision: 0,
        exists: false,
      };
      // Only a record the worker saw existing is deleted: deleting what it saw absent is not a
      // case SEMANTICS.md decides.
      request.writes.push(
        write.remove && read.exists
          ? { name: write.name, expectRevision: read.revision, delete: true }
          : { name: write.name, expectRevision: read.revision, value: { by: WORKERS[this.w], n } },
      );
    }
    if (this.spec.effect !== null) {
      request.intents.push({
        effectKey: `fx-${this.spec.effect}`,
        target: 'model',
        payload: { n },
      });
    }
    return request;
  }

  async run(world: ModelWorld, real: RealWorld): Promise<void> {
    const request = this.#request(world);
    const what = `${String(this)} as ${JSON.stringify(request)}`;
    const expected = world.model.commit(request);
    const actual = await real.gate.commit(request);
    compareCommit(what, expected, actual);
    world.model.operations.set(request.operationId, {
      request,
      answer: actual,
      committed: actual.outcome === 'committed',
    });
    const known = worker(world, this.w);
    known.lastCommit = request;
    if (actual.outcome === 'committed') {
      for (const record of actual.records) {
        taskReads(world, this.w, this.spec.task).set(key(request.scope, record.name), {
          revision: record.revision,
          exists: record.fingerprint !== null,
        });
      }
    }
    await compareScope(world, real, request.scope);
  }

  toString(): string {
    return `commit(${WORKERS[this.w]}, ${this.scope}, ${JSON.stringify(this.spec)})`;
  }
}

/** Sends the worker's last commit again: the stored outcome comes back, replayed. */
export class Retry extends Command {
  constructor(readonly w: number) {
    super();
  }
  async run(world: ModelWorld, real: RealWorld): Promise<void> {
    const request = worker(world, this.w).lastCommit;
    if (request === null) return;
    const replay = world.model.replay(request);
    if (replay === null || replay.conflict)
      diverge(`${String(this)}: model lost the operation`, request, null);
    const actual = await real.gate.commit(request);
    same(
      `${String(this)} of ${request.operationId}`,
      { ...(replay.stored.answer as object), replayed: true },
      actual,
    );
    same(
      `getOperation(${request.operationId})`,
      replay.stored.answer,
      await real.gate.getOperation(request.operationId),
    );
    await compareScope(world, real, request.scope);
  }
  toString(): string {
    return `retry(${WORKERS[this.w]})`;
  }
}

/** Reuses the worker's last operationId for another request: operation_id_conflict. */
export class Conflict extends Command {
  constructor(readonly w: number) {
    super();
  }
  async run(world: ModelWorld, real: RealWorld): Promise<void> {
    const last = worker(world, this.w).lastCommit;
    if (last === null) return;
    const request = { ...last, taskId: `${last.taskId ?? 'task'}-other` };
    const replay = world.model.replay(request);
    if (replay === null || !replay.conflict)
      diverge(`${String(this)}: expected a conflict`, request, null);
    const actual = await settle(() => real.gate.commit(request));
    if (actual.ok || actual.code !== 'operation_id_conflict') {
      diverge(String(this), 'operation_id_conflict', actual);
    }
    await compareScope(world, real, request.scope);
  }
  toString(): string {
    return `conflict(${WORKERS[this.w]})`;
  }
}

export class AdvanceClock extends Command {
  constructor(readonly ms: number) {
    super();
  }
  async run(world: ModelWorld, real: RealWorld): Promise<void> {
    world.model.now += this.ms;
    await real.advanceClock(this.ms);
  }
  toString(): string {
    return `advanceClock(${this.ms})`;
  }
}
