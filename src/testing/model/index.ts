/**
 * checkStoreAgainstModel: random sequences of lease, operator and commit operations from several
 * workers (with random store-clock jumps) run against a store and against an independent model of
 * SEMANTICS.md; any divergence fails with the seed and path that replay it.
 *
 *   await checkStoreAgainstModel({ createStore, destroyStore });   // inside a test
 *
 * Runs: FENCEGATE_MODEL_RUNS when set, else `numRuns`, else 200. Replay: FENCEGATE_MODEL_SEED and
 * FENCEGATE_MODEL_PATH (printed by a failure). The store clock must be a manual clock that
 * advanceClock moves exactly, and leases must expire exactly at store time + ttlMs.
 */
import type { AsyncCommand, Parameters } from 'fast-check';
import type { FencegateApi } from '../../api.js';
import type { AuditEntry, Intent } from '../../types.js';
import {
  SCOPES,
  TASKS_PER_WORKER,
  WORKERS,
  compareScope,
  type ModelWorld,
  type RealWorld,
} from './commands.js';
import { diverge, same } from './compare.js';
import { loadWithFastCheck } from '../optional-peer.js';
import { SemanticsModel } from './semantics-model.js';

export { ModelDivergence } from './compare.js';

export interface ModelSubject {
  gate: FencegateApi;
  advanceClock(ms: number): Promise<void>;
}

export interface ModelCheckOptions<S extends ModelSubject = ModelSubject> {
  /** A fresh, empty store for one run. */
  createStore(): Promise<S>;
  destroyStore(subject: S): Promise<void>;
  /** Runs unless FENCEGATE_MODEL_RUNS is set; 200 by default. */
  numRuns?: number;
  seed?: number;
  path?: string;
  /** Most commands per run; 80 by default. */
  maxCommands?: number;
  /** Called with the seed before the runs start, e.g. to log it. */
  onSeed?: (seed: number) => void;
}

const CALIBRATION_SCOPE = 'model/clock';
const CALIBRATION_TTL = 1_000;

function envNumber(name: string): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`${name} must be an integer, got ${text}`);
  return value;
}

/** Learns the store's time from a grant, so the model and the store share one clock. */
async function calibrate(real: RealWorld): Promise<number> {
  const grant = await real.gate.acquire({
    scope: CALIBRATION_SCOPE,
    holder: 'model',
    ttlMs: CALIBRATION_TTL,
  });
  if (grant.leaseExpiresAt === null) throw new Error('calibration grant has no expiry');
  return grant.leaseExpiresAt - CALIBRATION_TTL;
}

async function allIntents(gate: FencegateApi): Promise<Intent[]> {
  const items: Intent[] = [];
  let cursor: string | null = null;
  do {
    const page = await gate.listIntents(
      cursor === null ? { limit: 1000 } : { limit: 1000, cursor },
    );
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return items;
}

async function allAudit(gate: FencegateApi): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  let after = 0;
  for (;;) {
    const page = await gate.audit({ afterSeq: after, limit: 1000 });
    entries.push(...page.items);
    const last = page.items.at(-1);
    if (page.nextAfterSeq === null || last === undefined) return entries;
    after = Math.max(page.nextAfterSeq, last.seq);
  }
}

/** After a run: every scope, intent and stored outcome equals the model; the audit log is sound. */
async function compareWorld(world: ModelWorld, real: RealWorld): Promise<void> {
  for (const scope of SCOPES) await compareScope(world, real, scope);

  const intents = (await allIntents(real.gate))
    .map((intent) => [
      intent.effectKey,
      intent.scope,
      intent.status,
      intent.fence,
      intent.operationId,
    ])
    .sort();
  const expectedIntents = [...world.model.intents.entries()]
    .map(([effectKey, intent]) => [
      effectKey,
      intent.scope,
      intent.status,
      intent.fence,
      intent.operationId,
    ])
    .sort();
  same('intents', expectedIntents, intents);

  for (const [operationId, stored] of world.model.operations) {
    same(`getOperation(${operationId})`, stored.answer, await real.gate.getOperation(operationId));
  }

  const audit = await allAudit(real.gate);
  for (let i = 1; i < audit.length; i += 1) {
    if ((audit[i]?.seq ?? 0) <= (audit[i - 1]?.seq ?? 0))
      diverge('audit seq order', 'increasing', audit.slice(i - 1, i + 1));
  }
  const committed = audit.filter(
    (entry) => entry.kind === 'commit' && entry.outcome === 'committed',
  );
  same('committed audit entries', world.model.committedCount, committed.length);
  for (const entry of committed) {
    if (entry.fence !== entry.currentFence)
      diverge('a commit accepted with a stale fence', entry.currentFence, entry);
  }
  for (const scope of SCOPES) {
    // Every grant and revocation moves the fence up: never down, never the same value twice.
    const fences = audit
      .filter(
        (entry) =>
          entry.scope === scope &&
          (entry.outcome === 'granted' ||
            ((entry.kind === 'cancel' || entry.kind === 'delete') && entry.outcome === 'ok')),
      )
      .map((entry) => entry.currentFence ?? 0);
    for (let i = 1; i < fences.length; i += 1) {
      if ((fences[i] ?? 0) <= (fences[i - 1] ?? 0))
        diverge(`fences of ${scope}`, 'strictly increasing', fences);
    }
  }
}

export async function checkStoreAgainstModel<S extends ModelSubject>(
  options: ModelCheckOptions<S>,
): Promise<void> {
  const numRuns = envNumber('FENCEGATE_MODEL_RUNS') ?? options.numRuns ?? 200;
  const seed =
    options.seed ?? envNumber('FENCEGATE_MODEL_SEED') ?? Math.floor(Math.random() * 0x7fffffff);
  const path = options.path ?? process.env.FENCEGATE_MODEL_PATH;
  options.onSeed?.(seed);

  const [{ fc, commandArbitrary }, { assertProperty }] = await loadWithFastCheck(
    () => Promise.all([import('./arbitraries.js'), import('../property.js')]),
    'checkStoreAgainstModel',
  );
  const property = fc.asyncProperty(
    fc.commands([commandArbitrary()], { maxCommands: options.maxCommands ?? 80, size: 'max' }),
    async (commands) => {
      const subject = await options.createStore();
      try {
        const real: RealWorld = {
          gate: subject.gate,
          advanceClock: (ms) => subject.advanceClock(ms),
        };
        const model = new SemanticsModel(await calibrate(real));
        const world: ModelWorld = {
          model,
          workers: WORKERS.map(() => ({
            fences: new Map(),
            reads: Array.from({ length: TASKS_PER_WORKER }, () => new Map()),
            lastCommit: null,
            lastGranted: null,
          })),
          counter: 0,
        };
        await fc.asyncModelRun(() => ({ model: world, real }), commands);
        await compareWorld(world, real);
      } finally {
        await options.destroyStore(subject);
      }
    },
  );
  const parameters: Parameters<[Iterable<AsyncCommand<ModelWorld, RealWorld, false>>]> = {
    numRuns,
    seed,
  };
  if (path !== undefined && path !== '') parameters.path = path;
  await assertProperty(
    property,
    parameters,
    (failedSeed, failedPath) =>
      `FENCEGATE_MODEL_SEED=${failedSeed} FENCEGATE_MODEL_PATH=${failedPath}`,
    'the store diverged from the SEMANTICS model',
  );
}
