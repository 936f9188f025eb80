/** The conformance suite over HTTP (test/server/http-conformance-on.ts) on SQLite. */
import { HTTP_STORES, storesOf } from '../helpers/stores.js';
import { describeHttpConformance } from './http-conformance-on.js';

describeHttpConformance(storesOf('sqlite', HTTP_STORES));
