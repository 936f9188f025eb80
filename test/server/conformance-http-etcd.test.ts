/** The conformance suite over HTTP (test/server/http-conformance-on.ts) on the 3-member etcd cluster. */
import { HTTP_STORES, storesOf } from '../helpers/stores.js';
import { describeHttpConformance } from './http-conformance-on.js';

describeHttpConformance(storesOf('etcd', HTTP_STORES));
