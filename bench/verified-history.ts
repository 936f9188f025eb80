/**
 * `fencegate verify` after a benchmark: the history a run wrote must still prove every invariant,
 * or its figures measured something broken. A benchmark verifies each fencegate store it wrote
 * before closing or dropping it, prints the count (`verifyViolations` in its JSON line), and once
 * its figures are printed fails, so the run exits non-zero, on any violation. Raw baselines (plain
 * tables, another version's schema) are not fencegate stores of this tree and are not verified.
 */
import { verifyStore } from '../src/audit/verify.js';
import { openStore } from '../src/store/open.js';
import type { Store } from '../src/store/store.js';

/** Violations `verify` finds in the whole history of `store`, every tenant. */
export async function violationsIn(store: Store): Promise<number> {
  return (await verifyStore(store)).violationCount;
}

/** The same for the store at `url` (a server process's, once it stopped), opened for it alone. */
export async function violationsAt(url: string): Promise<number> {
  const store = await openStore(url);
  try {
    return await violationsIn(store);
  } finally {
    await store.close();
  }
}

/** A run that left violations: `all` must not report it as a row that could not run. */
export class ViolationsFound extends Error {
  override readonly name = 'ViolationsFound';
}

/** Fails the benchmark when `verify` found violations; call it after printing the figures. */
export function requireClean(bench: string, violations: number): void {
  if (violations > 0) {
    throw new ViolationsFound(`${bench}: verify found ${violations} violations after the run`);
  }
}
