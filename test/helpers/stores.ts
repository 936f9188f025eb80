/**
 * The one list of stores the tests run on. Each store is one initializer (test/helpers/stores/*):
 * how to open a fresh, empty store, how to open it again by URL, how to remove what was created,
 * and the few looks behind the store that tests of interrupted work need. Adding a store to the
 * tests is adding its initializer to ALL_STORES.
 *
 * FENCEGATE_STORES=sqlite,postgres,etcd (any of them, comma-separated) keeps only the named stores;
 * a store this machine lacks (no PostgreSQL found or started, no etcd) is left out and reported at
 * the end of the run, or fails the run under CI=true or FENCEGATE_TEST_STRICT=1. Suites that test
 * the store loop over STORES (conformance, conformance over HTTP, the model check) or AREA_STORES
 * (per-area behaviour the store decides); suites that test what sits above the store run on the
 * in-memory reference store (memory-store.ts), or on ONE_STORE when they need a store of this list
 * (a URL for the CLI or another process, a second handle on the same store).
 *
 *   describe.each(AREA_STORES)('… on $name', (kind) => {
 *     const stores = storesFor(kind, 'tokens');
 *     it('…', async () => { const { store } = await stores.open({ clock }); … });
 *   });
 *
 * Call storesFor at the top level of a file or of a describe block: it registers the afterAll
 * that removes what it created.
 */
import { afterAll, it } from 'vitest';
import { skipStore, type StoreFamily } from './store-filter.js';
import type { Clock } from '../../src/core/clock.js';
import type { Store } from '../../src/store/store.js';
import type { CutoverRequest } from '../../src/types.js';
import { ETCD, ETCD_CLUSTER } from './stores/etcd.js';
import { POSTGRES } from './stores/postgres.js';
import { SQLITE } from './stores/sqlite.js';

export interface StoreOptions {
  /** Store time; the store's own clock (host or database) when absent. */
  clock?: Clock;
  /** Batch concurrent commits, as the server runs the store. */
  groupCommit?: boolean;
  /**
   * Whether the store takes its connections from ones the factory keeps across the stores it
   * opens (PostgreSQL: a new server connection costs tens of ms of CPU, a pool's first ~0.2 s).
   * `open` does unless told false (a test of the store's own pool, or one that holds more
   * connections at once than the kept pool has); `reopen` always opens handles of their own.
   */
  warmConnections?: boolean;
  /**
   * The scopes one cutover chunk moves, and the names one page of its listing reads (tests of
   * interrupted cutovers need a few small chunks). On etcd a chunk is at most what one Txn holds.
   */
  cutoverChunk?: number;
}

export interface OpenedStore {
  store: Store;
  /** The store URL (`sqlite:PATH`, `postgres://…?schema=NAME`, `etcd://…?prefix=P`) for other processes. */
  url: string;
}

/** Fresh stores of one kind for one test file. */
export interface StoreFactory {
  /** The store's name, as in test titles. */
  readonly name: string;
  /** The URL of a fresh, empty store that nobody has opened yet (for `fencegate serve`). */
  freshUrl(): string;
  /** A fresh, empty store. */
  open(options?: StoreOptions): Promise<OpenedStore>;
  /** Another handle on the store at `url` (a second pool, client or file handle). */
  reopen(url: string, options?: StoreOptions): Promise<Store>;
  /**
   * Every handle on the store at `url` is closed and nothing needs it any more: `open` may hand it
   * out again, emptied (PostgreSQL empties a migrated schema faster than it migrates a new one).
   */
  recycle(url: string): Promise<void>;
  /** Removes everything the factory created. */
  cleanup(): Promise<void>;
}

/** Watches a store from outside while another process runs a cutover on it. */
export interface CutoverWatcher {
  /** The URL to give the process that runs the cutover (it may carry a name to wait for). */
  childUrl: string;
  /** How many scopes the cutover has moved, as committed in the store. */
  cutoverEntries(): Promise<number>;
  /** Resolves once nothing the killed process sent can still commit. */
  childGone(): Promise<void>;
  close(): Promise<void>;
}

/** What the tests of interrupted work do behind the store's back, each store in its own terms. */
export interface BehindTheStore {
  /** Plans a cutover without moving any scope, as a cutover interrupted right after planning. */
  planCutover(
    url: string,
    tenant: string,
    request: CutoverRequest & { cutoverId: string },
    now: number,
  ): Promise<void>;
  watchCutover(url: string): Promise<CutoverWatcher>;
}

/** One store the tests run on. */
export interface TestStoreKind {
  readonly name: string;
  readonly family: StoreFamily;
  /**
   * Run by the per-area suites (dispatch, cutover, tokens…) as well as by the conformance suite.
   * false for a deployment variant of a store that is already listed (etcd with three members),
   * which the conformance suite alone covers.
   */
  readonly everyArea: boolean;
  /** Run by the conformance suite over HTTP (one deployment per store: etcd's three members). */
  readonly overHttp: boolean;
  /** Runs of the model check (test/model/model-*.test.ts): fewer where a run costs more. */
  readonly modelRuns: number;
  /** What this machine lacks to run the store, or null when it runs. */
  missing(): string | null;
  /** The command that installs what `missing` names. */
  readonly install: string;
  /** A factory of fresh stores; `label` names what it creates (file, schema or key prefix). */
  factory(label: string): StoreFactory;
  readonly behind: BehindTheStore;
}

export const ALL_STORES: readonly TestStoreKind[] = [SQLITE, POSTGRES, ETCD, ETCD_CLUSTER];

/** The selected stores this machine has; each missing one is a skipped group of the run. */
export const STORES: readonly TestStoreKind[] = ALL_STORES.filter((kind) => !skipStore(kind));

/**
 * The selected stores of one family (sqlite, postgres, etcd): the suites over every store keep a
 * file per family, so that the test runner spreads a long suite over its workers.
 */
export function storesOf(
  family: StoreFamily,
  kinds: readonly TestStoreKind[] = STORES,
): readonly TestStoreKind[] {
  const selected = kinds.filter((kind) => kind.family === family);
  // A file with no test fails the run; a store left out is already reported as a skipped group.
  if (selected.length === 0) it.skip(`no ${family} store in this run`, () => undefined);
  return selected;
}

/** The stores every per-area suite runs on. */
export const AREA_STORES: readonly TestStoreKind[] = STORES.filter((kind) => kind.everyArea);

/** The stores the conformance suite over HTTP runs on. */
export const HTTP_STORES: readonly TestStoreKind[] = STORES.filter((kind) => kind.overHttp);

/**
 * The store for suites that test what sits above the store but need a store of this list (a URL
 * for the CLI or another process, a second handle): the first of the list, alone, as a list for
 * describe.each. The conformance suite proves every store answers the same underneath them.
 */
export const ONE_STORE: readonly TestStoreKind[] = AREA_STORES.slice(0, 1);

/** A factory of `kind` for this file or describe block; what it creates goes in its afterAll. */
export function storesFor(kind: TestStoreKind, label: string): StoreFactory {
  const factory = kind.factory(label);
  afterAll(() => factory.cleanup());
  return factory;
}
