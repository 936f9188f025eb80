/** The conformance suite over HTTP (test/server/http-conformance-on.ts) on PostgreSQL. */
import { HTTP_STORES, storesOf } from '../helpers/stores.js';
import { describeHttpConformance } from './http-conformance-on.js';

describeHttpConformance(storesOf('postgres', HTTP_STORES));
