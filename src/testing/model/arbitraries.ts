/**
 * The random model-run commands, weighted toward commits and the lease transitions that make them
 * stale. Loaded with fast-check only when checkStoreAgainstModel runs.
 */
import fc from 'fast-check';
import {
  AdvanceClock,
  Acquire,
  Cancel,
  Commit,
  Conflict,
  DeleteScope,
  NAMES,
  Read,
  Release,
  Renew,
  Retry,
  SCOPES,
  TASKS_PER_WORKER,
  Takeover,
  WORKERS,
  type CommitSpec,
  type ModelCommand,
} from './commands.js';

export { fc };

/** Most workers run the current policy; a few name an old one or none. */
const ACQUIRE_POLICIES = ['v1', 'v1', 'v1', 'v1', 'v1', 'v1', 'v2', null] as const;
const COMMIT_POLICIES = [null, null, null, 'v1', 'v1', 'v2'] as const;
const TTLS = [500, 5_000] as const;
const CLOCK_JUMPS = [1, 250, 499, 500, 2_000, 6_000] as const;

const workerArb = fc.integer({ min: 0, max: WORKERS.length - 1 });
const scopeArb = fc.constantFrom(...SCOPES);
const nameArb = fc.constantFrom(...NAMES);
const taskArb = fc.integer({ min: 0, max: TASKS_PER_WORKER - 1 });
const acquirePolicyArb = fc.constantFrom(...ACQUIRE_POLICIES);
const policyArb = fc.constantFrom('v1', 'v2');
const ttlArb = fc.constantFrom(...TTLS);

/** `value` in `weight` of `weight + nullWeight` cases, else null. */
function sometimes<T>(
  value: fc.Arbitrary<T>,
  weight: number,
  nullWeight: number,
): fc.Arbitrary<T | null> {
  return fc.oneof(
    { arbitrary: value, weight },
    { arbitrary: fc.constant(null), weight: nullWeight },
  );
}

const commitSpecArb: fc.Arbitrary<CommitSpec> = fc.record({
  ownScope: fc.integer({ min: 0, max: 9 }).map((n) => n > 0),
  task: taskArb,
  writes: fc.uniqueArray(fc.record({ name: nameArb, remove: fc.boolean() }), {
    selector: (write) => write.name,
    maxLength: NAMES.length,
  }),
  dependency: sometimes(fc.record({ scope: scopeArb, name: nameArb }), 1, 3),
  effect: sometimes(fc.integer({ min: 0, max: 5 }), 1, 2),
  policy: fc.constantFrom(...COMMIT_POLICIES),
});

/** Every command, weighted toward commits and the lease transitions that make them stale. */
export function commandArbitrary(): fc.Arbitrary<ModelCommand> {
  const command = (weight: number, arbitrary: fc.Arbitrary<ModelCommand>) => ({
    weight,
    arbitrary,
  });
  return fc.oneof(
    command(
      8,
      fc
        .tuple(workerArb, scopeArb, ttlArb, acquirePolicyArb)
        .map(([w, scope, ttl, policy]) => new Acquire(w, scope, ttl, policy)),
    ),
    command(
      4,
      fc.tuple(workerArb, scopeArb, ttlArb).map(([w, scope, ttl]) => new Renew(w, scope, ttl)),
    ),
    command(
      2,
      fc.tuple(workerArb, scopeArb).map(([w, scope]) => new Release(w, scope)),
    ),
    command(
      3,
      fc
        .tuple(workerArb, scopeArb, fc.option(ttlArb), fc.option(policyArb, { freq: 4 }))
        .map(([w, scope, ttl, policy]) => new Takeover(w, scope, ttl, policy)),
    ),
    command(
      2,
      scopeArb.map((scope) => new Cancel(scope)),
    ),
    command(
      1,
      scopeArb.map((scope) => new DeleteScope(scope)),
    ),
    command(
      8,
      fc
        .tuple(workerArb, taskArb, scopeArb, nameArb)
        .map(([w, task, scope, name]) => new Read(w, task, scope, name)),
    ),
    command(
      12,
      fc
        .tuple(workerArb, scopeArb, commitSpecArb)
        .map(([w, scope, spec]) => new Commit(w, scope, spec)),
    ),
    command(
      2,
      workerArb.map((w) => new Retry(w)),
    ),
    command(
      1,
      workerArb.map((w) => new Conflict(w)),
    ),
    command(
      4,
      fc.constantFrom(...CLOCK_JUMPS).map((ms) => new AdvanceClock(ms)),
    ),
  );
}
