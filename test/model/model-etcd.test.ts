/** The model check (test/model/model-check.ts) on etcd, one member and three. */
import { storesOf } from '../helpers/stores.js';
import { describeModelCheck } from './model-check.js';

describeModelCheck(storesOf('etcd'));
