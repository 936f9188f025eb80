/**
 * The model-based check on stores of the list (test/helpers/stores.ts): random multi-worker
 * operation sequences with clock jumps against an independent model of SEMANTICS.md. Every run
 * gets a fresh tenant, an empty namespace of one store, so runs stay independent without paying
 * for a new store each time; the whole history, every tenant, must verify at the end.
 * FENCEGATE_MODEL_RUNS replaces each store's run count; a failure prints FENCEGATE_MODEL_SEED and
 * FENCEGATE_MODEL_PATH to replay it. One file per store family (test/model/model-*.test.ts) calls
 * this.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { checkStoreAgainstModel, type ModelSubject } from '../../src/testing/index.js';
import { storeSubjects, type StoreSubject } from '../helpers/store-subject.js';
import type { TestStoreKind } from '../helpers/stores.js';

export function describeModelCheck(kinds: readonly TestStoreKind[]): void {
  describe.each(kinds)('the model check on $name', (kind) => {
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

    it(
      `the store answers like the SEMANTICS model (${kind.modelRuns} runs)`,
      { timeout: 300_000 },
      async () => {
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
          numRuns: kind.modelRuns,
          onSeed: (seed) => {
            console.log(`model check seed ${seed}`);
          },
        });
      },
    );
  });
}
