/**
 * The conformance suite over HTTP on stores of the list that run over HTTP (test/helpers/stores.ts):
 * two `fencegate serve` processes on one store — a SQLite file, a PostgreSQL schema, a key prefix on
 * the 3-member etcd cluster — behaving as one. One file per store family calls this.
 */
import { describe } from 'vitest';
import type { TestStoreKind } from '../helpers/stores.js';
import { defineHttpConformanceSuite } from './http-conformance.js';

export function describeHttpConformance(kinds: readonly TestStoreKind[]): void {
  for (const kind of kinds) {
    describe(kind.name, () => {
      const stores = kind.factory('http_conformance');
      defineHttpConformanceSuite({
        name: `http on ${kind.name} (fencegate serve + FencegateClient)`,
        storeUrl: () => stores.freshUrl(),
        cleanup: () => stores.cleanup(),
      });
    });
  }
}
