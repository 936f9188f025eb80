/**
 * etcd for the tests: each fresh store is a new key prefix on the etcd of the test run, a single
 * member or the 3-member cluster the global setup started.
 */
import { randomUUID } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import { inject } from 'vitest';
import { EtcdStore } from '../../../src/store/etcd/etcd-store.js';
import { prefixEnd } from '../../../src/store/etcd/etcd-keys.js';
import { parseEtcdUrl } from '../../../src/store/etcd/etcd-url.js';
import type { BehindTheStore, StoreFactory, StoreOptions, TestStoreKind } from '../stores.js';
import { skipStore } from '../store-filter.js';
import { planOnEtcd } from './etcd-plan.js';

/** The etcd URL of the test run: 'single' member or the 3-member 'cluster'. */
export function etcdTestUrl(which: 'single' | 'cluster'): string {
  const url = inject(which === 'single' ? 'etcdUrl' : 'etcdClusterUrl');
  if (url === null) throw new Error(inject('etcdProblem') ?? 'no etcd for the tests');
  return url;
}

/** What the tests of etcd lack on this machine, or null when the global setup has etcd. */
function etcdMissing(): string | null {
  return inject('etcdUrl') === null ? (inject('etcdProblem') ?? 'no etcd for the tests') : null;
}

const ETCD_INSTALL =
  'apt-get install etcd-server etcd-client (or set FENCEGATE_TEST_ETCD_URL=etcd://host:port)';

/**
 * For a file of etcd tests: true when FENCEGATE_STORES leaves it out, or this
 * machine has no etcd and they must be skipped.
 */
export function skipWithoutEtcd(): boolean {
  return skipStore(ETCD);
}

/** A key prefix no other test uses: `label-<8 hex>`. */
export function uniquePrefix(label: string): string {
  return `${label.replace(/_/g, '-')}-${randomUUID().slice(0, 8)}`;
}

function etcdFactory(name: string, which: 'single' | 'cluster', label: string): StoreFactory {
  const base = uniquePrefix(label);
  let count = 0;
  const freshUrl = () => `${etcdTestUrl(which)}?prefix=${base}-${++count}`;
  // A cutover chunk on etcd is at most what one Txn holds, whatever `cutoverChunk` asks.
  const open = (url: string, { warmConnections: _, ...options }: StoreOptions) =>
    EtcdStore.open({ url, ...options });
  return {
    name,
    freshUrl,
    open: async (options = {}) => {
      const url = freshUrl();
      return { store: await open(url, options), url };
    },
    reopen: (url, options = {}) => open(url, options),
    // A new prefix costs nothing.
    recycle: () => Promise.resolve(),
    cleanup: () => Promise.resolve(),
  };
}

const behind: BehindTheStore = {
  planCutover: planOnEtcd,
  /**
   * The moved scopes are the cutover's step keys (written in the Txn that audits the move). A Txn
   * the child sent before it died is applied within the server's request timeout or never; the
   * child is gone once the store's revision has stood still for a while.
   */
  watchCutover: (url) => {
    const target = parseEtcdUrl(url);
    const client = new Etcd3({ hosts: target.hosts.map((host) => `http://${host}`) });
    const steps = Buffer.from(`${target.prefix}/cs/`);
    const count = () =>
      client.kv.range({ key: steps, range_end: prefixEnd(steps), count_only: true });
    return Promise.resolve({
      childUrl: url,
      cutoverEntries: async () => Number((await count()).count),
      childGone: async () => {
        let revision = '';
        for (let still = 0; still < 10;) {
          const now = (await count()).header.revision;
          still = now === revision ? still + 1 : 0;
          revision = now;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      },
      close: () => {
        client.close();
        return Promise.resolve();
      },
    });
  },
};

export const ETCD: TestStoreKind = {
  name: 'etcd',
  family: 'etcd',
  everyArea: true,
  overHttp: false,
  // Each run is a few hundred etcd round trips. Every run of the suite draws a new seed, so the
  // runs of successive builds add up; FENCEGATE_MODEL_RUNS asks for a longer one.
  modelRuns: 40,
  missing: etcdMissing,
  install: ETCD_INSTALL,
  factory: (label) => etcdFactory('etcd', 'single', label),
  behind,
};

export const ETCD_CLUSTER: TestStoreKind = {
  name: 'etcd (three members)',
  family: 'etcd',
  everyArea: false,
  overHttp: true,
  // The single member's runs cover the engine; these add a leader behind the client's member.
  modelRuns: 20,
  missing: etcdMissing,
  install: ETCD_INSTALL,
  factory: (label) => etcdFactory('etcd (three members)', 'cluster', label),
  behind,
};
