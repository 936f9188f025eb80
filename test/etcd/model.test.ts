/**
 * The model-based check on etcd (a single member and the 3-member cluster): random multi-worker
 * operation sequences with clock jumps against the independent model of SEMANTICS.md. Every run
 * gets a fresh tenant on one key prefix; the whole history must verify at the end.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { checkStoreAgainstModel, type ModelSubject } from '../../src/testing/index.js';
import { storeSubjects, type StoreSubject } from '../helpers/store-subject.js';
import { ETCD, ETCD_CLUSTER } from '../helpers/stores/etcd.js';

for (const kind of [ETCD, ETCD_CLUSTER]) {
  describe(kind.name, () => {
    const subjects = storeSubjects(kind, 'model');
    let store: StoreSubject | null = null;
    let runs = 0;

    afterAll(async () => {
      if (store === null) return;
      const result = await verifyStore(store.gate.store);
      expect(result.violations).toEqual([]);
      expect(result.checked).toBeGreaterThan(0);
      await store.dispose();
    });

    it('the etcd store answers like the SEMANTICS model', { timeout: 300_000 }, async () => {
      store = await subjects.createStore();
      const subject = store;
      await checkStoreAgainstModel({
        createStore: (): Promise<ModelSubject> => {
          runs += 1;
          return Promise.resolve({
            gate: subject.gate.forTenant(`run-${runs}`),
            advanceClock: (ms) => subject.advanceClock(ms),
          });
        },
        destroyStore: () => Promise.resolve(),
        // Fewer runs than on SQLite: each is a few hundred etcd round trips.
        numRuns: 100,
        onSeed: (seed) => {
          console.log(`model check seed ${seed}`);
        },
      });
    });
  });
}
