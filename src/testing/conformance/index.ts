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
 * It covers the whole Store through the subject: leases, commits and their rejections in check
 * order, operators, records, operation replay and abandon, dispatch claims and completions,
 * policies, cutovers and their reports, the jobs ledger, audit order, the invariants an adapter
 * keeps (docs/adapters.md) and, with the Store in
 * process, tokens, every tenant's audit and grants bound to the token that made them. After every case, verify must report no violation.
 *
 * Cases are skipped by capability only. Each test gets a fresh subject.
 */
import { describe } from 'vitest';
import { abandonCases } from './abandon.js';
import { acceptanceCases } from './acceptance.js';
import { answerBudgetCases } from './answer-budgets.js';
import { auditOrderCases } from './audit-order.js';
import { commitReleaseCases } from './commit-release.js';
import { cutoverCases } from './cutover.js';
import { dispatchCases } from './dispatch.js';
import { grantTokenCases } from './grant-tokens.js';
import { batchCompletionCases } from './batch-completion.js';
import { claimAtCommitCases } from './claim-at-commit.js';
import { inProcessCases } from './in-process.js';
import { invariantCases } from './invariants.js';
import { isolationCases } from './isolation.js';
import { leaseJobCases } from './lease-jobs.js';
import { leaseCases } from './leases.js';
import { operatorCases } from './operator.js';
import { recordCases } from './records.js';
import { recordPageBudgetCases } from './record-page-budget.js';
import { recordPageCases } from './record-pages.js';
import { rejectionCases } from './rejections.js';
import { rolloutCases } from './rollout.js';
import { rolloutHoldCases } from './rollout-holds.js';
import { sharedStoreCases } from './shared-store.js';
import { SubjectFixture, type StoreConformanceOptions } from './subject.js';
import { validationCases } from './validation.js';

export type {
  ConformanceCapabilities,
  ConformanceGate,
  ConformanceStore,
  ConformanceSubject,
  StoreConformanceOptions,
} from './subject.js';

export function defineStoreConformanceSuite(options: StoreConformanceOptions): void {
  describe(`store conformance: ${options.name}`, () => {
    const fixture = new SubjectFixture(options);
    fixture.install();
    leaseCases(fixture);
    leaseJobCases(fixture);
    commitReleaseCases(fixture);
    operatorCases(fixture);
    recordCases(fixture);
    rejectionCases(fixture);
    acceptanceCases(fixture);
    isolationCases(fixture);
    validationCases(fixture);
    sharedStoreCases(fixture);
    recordPageCases(fixture);
    recordPageBudgetCases(fixture);
    answerBudgetCases(fixture);
    abandonCases(fixture);
    dispatchCases(fixture);
    cutoverCases(fixture);
    rolloutCases(fixture);
    rolloutHoldCases(fixture);
    auditOrderCases(fixture);
    invariantCases(fixture);
    inProcessCases(fixture);
    grantTokenCases(fixture);
    batchCompletionCases(fixture);
    claimAtCommitCases(fixture);
  });
}
