/**
 * In-process news that intents were committed. The library announces it after a commit that
 * added intents, and a dispatcher working on the same Store object wakes at once instead of
 * waiting for its next poll. Keyed by the Store object, so handles of every tenant on one store
 * share it. Across processes, PostgreSQL carries the same news by LISTEN/NOTIFY
 * (`Store.watchIntents`); elsewhere the dispatcher's poll is what finds them.
 */
export type IntentListener = (tenant: string) => void;

const listenersByStore = new WeakMap<object, Set<IntentListener>>();

/** Tells every listener on `store` that `tenant` has new intents. */
export function announceIntents(store: object, tenant: string): void {
  const listeners = listenersByStore.get(store);
  if (listeners === undefined) return;
  for (const listener of listeners) {
    try {
      listener(tenant);
    } catch {
      // A listener only wakes a loop; its failure must not fail the commit that announced.
    }
  }
}

/** Calls `listener` on each announcement on `store`; returns the function that stops it. */
export function onIntents(store: object, listener: IntentListener): () => void {
  let listeners = listenersByStore.get(store);
  if (listeners === undefined) {
    listeners = new Set();
    listenersByStore.set(store, listeners);
  }
  // A wrapper, so the same function subscribed twice is two subscriptions.
  const entry: IntentListener = (tenant) => listener(tenant);
  listeners.add(entry);
  return () => {
    listeners.delete(entry);
  };
}
