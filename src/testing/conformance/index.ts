/**
 * defineStoreConformanceSuite: the one suite every store adapter (and every entry point, through a
 * tenant-bound FencegateApi) must pass. It registers vitest suites; call it at the top level of a
 * test file:
 *
 *   defineStoreConformanceSuite({
 *     name: 'sqlite',
 *     createStore: async () => ({ gate, other, advanceClock }),
 *     destroyStore: async (subject) => { ... },
 *   });
 *
 * Cases are skipped by capability only. Each test gets a fresh subject.
 */
import { describe } from 'vitest';
import { abandonCases } from './abandon.js';
import { acceptanceCases } from './acceptance.js';
import { isolationCases } from './isolation.js';
import { leaseJobCases } from './lease-jobs.js';
import { leaseCases } from './leases.js';
import { operatorCases } from './operator.js';
import { recordCases } from './records.js';
import { recordPageCases } from './record-pages.js';
import { rejectionCases } from './rejections.js';
import { sharedStoreCases } from './shared-store.js';
import { SubjectFixture, type StoreConformanceOptions } from './subject.js';
import { validationCases } from './validation.js';

export type {
  ConformanceCapabilities,
  ConformanceSubject,
  StoreConformanceOptions,
} from './subject.js';

export function defineStoreConformanceSuite(options: StoreConformanceOptions): void {
  describe(`store conformance: ${options.name}`, () => {
    const fixture = new SubjectFixture(options);
    fixture.install();
    leaseCases(fixture);
    leaseJobCases(fixture);
    operatorCases(fixture);
    recordCases(fixture);
    rejectionCases(fixture);
    acceptanceCases(fixture);
    isolationCases(fixture);
    validationCases(fixture);
    sharedStoreCases(fixture);
    recordPageCases(fixture);
    abandonCases(fixture);
  });
}
