/** The model check (test/model/model-check.ts) on PostgreSQL. */
import { storesOf } from '../helpers/stores.js';
import { describeModelCheck } from './model-check.js';

describeModelCheck(storesOf('postgres'));
