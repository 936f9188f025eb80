/** The model check (test/model/model-check.ts) on SQLite. */
import { storesOf } from '../helpers/stores.js';
import { describeModelCheck } from './model-check.js';

describeModelCheck(storesOf('sqlite'));
