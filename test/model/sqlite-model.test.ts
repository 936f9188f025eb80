/**
 * The model-based check on SQLite: random multi-worker operation sequences with clock jumps against
 * an independent model of SEMANTICS.md. Every run gets a fresh tenant, an empty namespace of one
 * SQLite file, so runs stay independent without paying for a new file each time.
 * FENCEGATE_MODEL_RUNS raises the run count; a failure prints FENCEGATE_MODEL_SEED and
 * FENCEGATE_MODEL_PATH to replay it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { checkStoreAgainstModel, type ModelSubject } from '../../src/testing/index.js';
import { storeSubjects, type StoreSubject } from '../helpers/store-subject.js';
import { SQLITE } from '../helpers/stores/sqlite.js';

const subjects = storeSubjects(SQLITE, 'model');
let store: StoreSubject;
let runs = 0;

beforeAll(async () => {
  store = await subjects.createStore();
});

afterAll(async () => {
  // The whole history the model runs left behind, every tenant, must verify.
  const result = await verifyStore(store.gate.store);
  expect(result.violations).toEqual([]);
  expect(result.checked).toBeGreaterThan(0);
  await store.dispose();
});

it('the SQLite store answers like the SEMANTICS model', { timeout: 300_000 }, async () => {
  await checkStoreAgainstModel({
    createStore: (): Promise<ModelSubject> => {
      runs += 1;
      return Promise.resolve({
        gate: store.gate.forTenant(`run-${runs}`),
        advanceClock: (ms) => store.advanceClock(ms),
      });
    },
    destroyStore: () => Promise.resolve(),
    numRuns: 1000,
    onSeed: (seed) => {
      console.log(`model check seed ${seed}`);
    },
  });
});
