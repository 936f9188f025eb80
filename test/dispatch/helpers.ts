/**
 * Shared setup for the dispatch tests: a Fencegate on a fresh in-memory reference store (the
 * dispatcher sits above the store; the conformance suite proves each store's claims and
 * completions), intents, waiting.
 */
import {
  Dispatcher,
  effectorsFromTargets,
  parseTargets,
  type DispatcherOptions,
  type Effector,
} from '../../src/dispatch/index.js';
import { Fencegate } from '../../src/gate.js';
import type { Store } from '../../src/store/store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { IntentRequest, IntentStatus } from '../../src/types.js';
import { memoryStore } from '../helpers/memory-store.js';

export interface TestGate {
  gate: Fencegate;
  store: Store;
  clock: ManualClock;
}

let counter = 0;

/** A Fencegate on a fresh store whose store time moves only by `clock`. */
export async function openGate(clock = new ManualClock()): Promise<TestGate> {
  const store = memoryStore(clock);
  const gate = await Fencegate.open({ store });
  return { gate, store, clock };
}

/** Acquires `scope` and commits `intents` in one commit; returns the grant's fence. */
export async function commitIntents(
  gate: Fencegate,
  scope: string,
  intents: IntentRequest[],
  operationId = `op-${scope}-${++counter}`,
): Promise<number> {
  const grant = await gate.acquire({ scope, holder: `worker-${scope}`, ttlMs: 60_000 });
  const result = await gate.commit({ scope, fence: grant.fence, operationId, intents });
  if (result.outcome !== 'committed') throw new Error(`commit rejected: ${result.error.code}`);
  return grant.fence;
}

export async function statusOf(gate: Fencegate, effectKey: string): Promise<IntentStatus | null> {
  return (await gate.getIntent(effectKey))?.status ?? null;
}

/** Polls `check` every few ms until it is true: waiting for a state, not deciding an order. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Wraps an effector so each delivery stops after the claim, before it reaches the provider, until
 * the test releases it: a dispatcher paused between claim and delivery.
 */
export function pausingEffector(inner: Effector): {
  effector: Effector;
  /** Resolves when `count` deliveries are paused. */
  paused(count: number): Promise<void>;
  release(): void;
  /** true once released: deliveries from then on pass straight through. */
  readonly released: boolean;
} {
  let waiting = 0;
  let released = false;
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const watchers: { count: number; resolve: () => void }[] = [];
  return {
    effector: {
      async deliver(intent, context) {
        if (!released) {
          waiting += 1;
          for (const w of watchers.filter((w) => waiting >= w.count)) w.resolve();
          await gate;
        }
        return inner.deliver(intent, context);
      },
    },
    paused: (count) =>
      waiting >= count
        ? Promise.resolve()
        : new Promise<void>((resolve) => watchers.push({ count, resolve })),
    release: () => {
      released = true;
      open();
    },
    get released() {
      return released;
    },
  };
}

/** The same intent shape for many keys. */
export function intentsFor(keys: string[], target: string): IntentRequest[] {
  return keys.map((effectKey, i) => ({ effectKey, target, payload: { n: i, note: 'payload' } }));
}

/** One webhook effector for target `crm` at `url`. */
export function webhookTo(url: string, timeoutMs = 2000): Record<string, Effector> {
  return effectorsFromTargets(
    parseTargets({ targets: { crm: { type: 'webhook', url, timeoutMs } } }),
  );
}

/** A dispatcher for rounds driven by the test (runOnce): no jitter, no real sleeping. */
export function roundDispatcher(
  api: DispatcherOptions['api'],
  effectors: Record<string, Effector>,
  extra: Partial<DispatcherOptions> = {},
): Dispatcher {
  return new Dispatcher({
    api,
    dispatcherId: 'dispatcher-1',
    effectors,
    claimTtlMs: 30_000,
    backoff: { initialMs: 1000, maxMs: 4000, jitter: 0 },
    sleep: () => Promise.resolve(),
    ...extra,
  });
}
