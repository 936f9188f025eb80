/**
 * The conformance suite over HTTP on every store of the list that runs over HTTP
 * (test/helpers/stores.ts): two `fencegate serve` processes on one store — a SQLite file, a
 * PostgreSQL schema, a key prefix on the 3-member etcd cluster — behaving as one.
 */
import { describe } from 'vitest';
import { HTTP_STORES } from '../helpers/stores.js';
import { defineHttpConformanceSuite } from './http-conformance.js';

for (const kind of HTTP_STORES) {
  describe(kind.name, () => {
    const stores = kind.factory('http_conformance');
    defineHttpConformanceSuite({
      name: `http on ${kind.name} (fencegate serve + FencegateClient)`,
      storeUrl: () => stores.freshUrl(),
      cleanup: () => stores.cleanup(),
    });
  });
}
