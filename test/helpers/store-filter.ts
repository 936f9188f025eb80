/**
 * FENCEGATE_STORES: which stores a run tests, as a comma-separated list of sqlite, postgres and
 * etcd (all of them when unset). The store list (test/helpers/stores.ts) keeps only these, and the
 * files that test one store alone (test/postgres, test/etcd) are skipped when it is left out.
 */
import { STORE_KINDS } from '../../src/store/registry.js';
import { skipForMissing } from './missing.js';

/** The store kinds of the registry (src/store/registry.ts): one list for the library and the tests. */
const STORE_FAMILIES: readonly string[] = STORE_KINDS.map((kind) => kind.name);
export type StoreFamily = string;

/** The stores `filter` names, all when it is unset or empty; an unknown name is refused. */
export function parseStoreFilter(filter: string | undefined): StoreFamily[] {
  if (filter === undefined || filter.trim() === '') return [...STORE_FAMILIES];
  const names = filter.split(',').map((name) => name.trim().toLowerCase());
  const unknown = names.filter((name) => !STORE_FAMILIES.includes(name));
  if (unknown.length > 0) {
    throw new Error(
      `FENCEGATE_STORES names unknown store(s) ${unknown.map((name) => `"${name}"`).join(', ')}: ` +
        `use a comma-separated list of ${STORE_FAMILIES.join(', ')}`,
    );
  }
  return STORE_FAMILIES.filter((family) => names.includes(family));
}

/** Whether this run tests `family` (FENCEGATE_STORES names it, or is unset). */
export function storeSelected(family: StoreFamily): boolean {
  return parseStoreFilter(process.env.FENCEGATE_STORES).includes(family);
}

/**
 * For a store of the tests: true when FENCEGATE_STORES leaves it out, or this machine lacks what
 * it needs (recorded as a skipped group, refused under CI=true or FENCEGATE_TEST_STRICT=1).
 */
export function skipStore(kind: {
  readonly family: StoreFamily;
  missing(): string | null;
  readonly install: string;
}): boolean {
  if (!storeSelected(kind.family)) return true;
  return skipForMissing(`tests on ${kind.family}`, kind.missing(), kind.install);
}
