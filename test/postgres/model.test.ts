/**
 * The model-based check on PostgreSQL: random multi-worker operation sequences with clock jumps
 * against a fresh (emptied) schema per run and the independent model of SEMANTICS.md.
 * FENCEGATE_MODEL_RUNS raises the run count; a failure prints the seed and path that replay it.
 */
import { it } from 'vitest';
import { checkStoreAgainstModel } from '../../src/testing/index.js';
import { storeSubjects } from '../helpers/store-subject.js';
import { POSTGRES } from '../helpers/stores/postgres.js';

const subjects = storeSubjects(POSTGRES, 'model');

it('the PostgreSQL store answers like the SEMANTICS model', { timeout: 300_000 }, async () => {
  await checkStoreAgainstModel({
    createStore: subjects.createStore,
    destroyStore: subjects.destroyStore,
    onSeed: (seed) => {
      console.log(`model check seed ${seed}`);
    },
  });
});
