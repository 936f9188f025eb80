/**
 * A dispatcher that polls once a minute, delivering to a receiver, whose sleeps are observed: a
 * test sees when it starts sleeping and for how long (real timers), so it can show that a commit
 * wakes it rather than the poll.
 */
import { abortableSleep, Dispatcher, type DispatchApi } from '../../src/dispatch/dispatcher.js';
import { webhookEffector } from '../../src/dispatch/webhook-effector.js';

export const MINUTE = 60_000;

export interface ObservedSleep {
  /** Each sleep's requested length in ms, in order. */
  naps: number[];
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Resolves when the dispatcher starts its next sleep. */
  nextNap: () => Promise<void>;
}

export function observedSleep(): ObservedSleep {
  const naps: number[] = [];
  let onNap: (() => void) | null = null;
  return {
    naps,
    sleep: (ms, signal) => {
      naps.push(ms);
      onNap?.();
      return abortableSleep(ms, signal);
    },
    nextNap: () => new Promise<void>((resolve) => (onNap = resolve)),
  };
}

/** Target `hook` posts to `receiverUrl`; the poll interval is a minute. */
export function sleepyDispatcher(
  api: DispatchApi,
  receiverUrl: string,
  naps: ObservedSleep,
  dispatcherId: string,
): Dispatcher {
  return new Dispatcher({
    api,
    dispatcherId,
    effectors: {
      hook: webhookEffector({ type: 'webhook', url: receiverUrl, timeoutMs: 5000, headers: {} }),
    },
    pollIntervalMs: MINUTE,
    sleep: naps.sleep,
  });
}
