/**
 * A fault-injecting Store wrapper: the failures an adapter meets in production (a slow store, a
 * connection lost before or after a commit, a store that is down), injected at the Store boundary so
 * tests can prove what callers see and that nothing is answered from memory.
 *
 *   const store = faultyStore(inner, { rules: [{ method: 'commit', fault: 'lose-reply' }] });
 *   const gate = await Fencegate.open({ store });
 *   await gate.commit(...);            // the inner commit ran; throws outcome_unknown
 *   await gate.getOperation(opId);     // the authoritative outcome
 *
 * Faults:
 *  - `fail-before`: throws store_unavailable; the call never reaches the inner store.
 *  - `lose-reply`:  the inner call runs (a commit commits), then throws outcome_unknown.
 *  - `delay`:       the call waits for `until()` (or `ms`) before it reaches the inner store, or after
 *                   it ran, with `when: 'after'` (a slow reply). Prefer `until` with a PausePoints
 *                   release: tests decide orders explicitly, not by sleeping.
 *  - `unavailable` (plan or `setUnavailable`): every call but close() throws store_unavailable.
 */
import { FencegateError } from '../errors.js';
import type { Store } from '../store/store.js';

/** The methods of a store that can fail: every function member of the Store interface. */
export type StoreMethod = {
  [K in keyof Store]: Store[K] extends (...args: never[]) => unknown ? K : never;
}[keyof Store];

export type Fault =
  | 'fail-before'
  | 'lose-reply'
  | {
      delay: {
        /** Resolves when the call may go on. */
        until?: () => Promise<void>;
        /** A timed delay, for chaos runs; interleaving tests use `until`. */
        ms?: number;
        /** 'before' (default): the request is late; 'after': the reply is late. */
        when?: 'before' | 'after';
      };
    };

export interface FaultRule {
  /** The method to fault, or '*' for every method but close(). */
  method: StoreMethod | '*';
  fault: Fault;
  /** Matching calls let through before the fault applies; 0 by default. */
  skip?: number;
  /** Matching calls the fault applies to; 1 by default, Infinity for every later call. */
  times?: number;
  /** Further filter, e.g. on the tenant or the commit's operationId. */
  when?: (args: readonly unknown[]) => boolean;
}

export interface FaultPlan {
  rules?: FaultRule[];
  /** Start with the whole store unavailable. */
  unavailable?: boolean;
}

export interface FaultCall {
  method: string;
  /** The fault applied to this call, or null when it went through untouched. */
  fault: 'fail-before' | 'lose-reply' | 'delay' | 'unavailable' | null;
}

export interface FaultControls {
  /** The wrapped store. */
  readonly inner: Store;
  /** Every call with the fault applied to it, in call order. */
  readonly calls: readonly FaultCall[];
  /** Adds a rule; rules are tried in the order they were added, the first match applies. */
  inject(rule: FaultRule): void;
  /** Makes every call but close() throw store_unavailable (or stops doing so). */
  setUnavailable(unavailable: boolean): void;
  /** Removes every rule and makes the store available again. */
  heal(): void;
}

/** The wrapped store's own type with the fault controls. */
export type FaultyStore<S extends Store = Store> = S & FaultControls;

interface ActiveRule {
  rule: FaultRule;
  skipped: number;
  applied: number;
}

export function faultyStore<S extends Store>(inner: S, plan: FaultPlan = {}): FaultyStore<S> {
  const rules: ActiveRule[] = [];
  const calls: FaultCall[] = [];
  let unavailable = plan.unavailable ?? false;

  const controls: FaultControls = {
    inner,
    calls,
    inject(rule: FaultRule): void {
      rules.push({ rule, skipped: 0, applied: 0 });
    },
    setUnavailable(value: boolean): void {
      unavailable = value;
    },
    heal(): void {
      rules.length = 0;
      unavailable = false;
    },
  };
  for (const rule of plan.rules ?? []) controls.inject(rule);

  function pickRule(method: string, args: readonly unknown[]): FaultRule | null {
    for (const active of rules) {
      const { rule } = active;
      if (rule.method !== method && !(rule.method === '*' && method !== 'close')) continue;
      if (rule.when !== undefined && !rule.when(args)) continue;
      if (active.applied >= (rule.times ?? 1)) continue;
      if (active.skipped < (rule.skip ?? 0)) {
        active.skipped += 1;
        continue;
      }
      active.applied += 1;
      return rule;
    }
    return null;
  }

  async function call(method: string, args: unknown[]): Promise<unknown> {
    const target = Reflect.get(inner, method) as (...a: unknown[]) => Promise<unknown>;
    const invoke = (): Promise<unknown> => Reflect.apply(target, inner, args);
    if (unavailable && method !== 'close') {
      calls.push({ method, fault: 'unavailable' });
      throw unavailableError(method);
    }
    const rule = pickRule(method, args);
    if (rule === null) {
      calls.push({ method, fault: null });
      return invoke();
    }
    const { fault } = rule;
    if (fault === 'fail-before') {
      calls.push({ method, fault: 'fail-before' });
      throw unavailableError(method);
    }
    if (fault === 'lose-reply') {
      calls.push({ method, fault: 'lose-reply' });
      // Whatever the store answered, success or refusal, never reaches the caller.
      await invoke().catch(() => undefined);
      throw new FencegateError(
        'outcome_unknown',
        `the store connection was lost after ${method} was sent; read the authoritative outcome`,
        { method },
      );
    }
    calls.push({ method, fault: 'delay' });
    const wait = (): Promise<void> =>
      fault.delay.until !== undefined
        ? fault.delay.until()
        : new Promise((resolve) => setTimeout(resolve, fault.delay.ms ?? 0));
    if (fault.delay.when === 'after') {
      const result = await invoke();
      await wait();
      return result;
    }
    await wait();
    return invoke();
  }

  return new Proxy(inner, {
    get(target, property): unknown {
      if (typeof property === 'string' && Object.hasOwn(controls, property)) {
        return Reflect.get(controls, property);
      }
      // The inner store is the receiver: adapters keep their state in private fields.
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      // A look at the store's own queue, answered at once: no store call to fail or delay.
      if (property === 'commitQueueDepths') return (value as () => unknown).bind(target);
      // Runs its caller's writes at once, as the store does: they are this wrapper's calls, each
      // with its own faults, and the caller needs their promises back, not a promise of them.
      if (property === 'together') return (value as () => unknown).bind(target);
      return (...args: unknown[]) => call(property, args);
    },
  }) as FaultyStore<S>;
}

function unavailableError(method: string): FencegateError {
  return new FencegateError('store_unavailable', `the store cannot be reached (${method})`, {
    method,
  });
}
