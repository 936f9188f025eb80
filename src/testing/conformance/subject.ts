/**
 * What the conformance suite runs against. The subject is tenant-bound (FencegateApi), not a raw
 * Store, so the same suite runs over the library facade and over HTTP.
 */
import { afterEach, beforeEach, expect } from 'vitest';
import type { FencegateApi, FencegateOpsApi } from '../../api.js';

export interface ConformanceSubject {
  /** Tenant A. */
  gate: FencegateApi;
  /** Tenant B on the same store, for the isolation cases. */
  other: FencegateApi;
  /** Tenant A's policies, cutovers and jobs ledger; the jobs ledger cases are skipped without it. */
  ops?: FencegateOpsApi;
  /** Moves the store clock forward (the clock that judges leases). */
  advanceClock(ms: number): Promise<void>;
  /**
   * Another handle for tenant A through a separate connection to the same store; required when
   * `capabilities.sharedAcrossProcesses` is true.
   */
  connectAgain?(): Promise<FencegateApi>;
}

export interface ConformanceCapabilities {
  /** Several connections (processes) share one store: runs the cross-connection cases. */
  sharedAcrossProcesses?: boolean;
  /**
   * leaseExpiresAt is exactly store time + ttlMs. Stores that round leases up (etcd: whole
   * seconds) set false; the cases then judge expiry by the granted leaseExpiresAt only.
   */
  exactLeaseExpiry?: boolean;
}

export interface StoreConformanceOptions {
  /** Shown in the suite title, e.g. 'sqlite'. */
  name: string;
  /** A fresh, empty store for one test. */
  createStore(): Promise<ConformanceSubject>;
  destroyStore(subject: ConformanceSubject): Promise<void>;
  capabilities?: ConformanceCapabilities;
}

export interface ResolvedCapabilities {
  sharedAcrossProcesses: boolean;
  exactLeaseExpiry: boolean;
}

/** Gives each test a fresh subject through beforeEach/afterEach. */
export class SubjectFixture {
  readonly capabilities: ResolvedCapabilities;
  #current: ConformanceSubject | null = null;

  constructor(private readonly options: StoreConformanceOptions) {
    this.capabilities = {
      sharedAcrossProcesses: options.capabilities?.sharedAcrossProcesses ?? false,
      exactLeaseExpiry: options.capabilities?.exactLeaseExpiry ?? true,
    };
  }

  /**
   * Registers the hooks; call inside the suite's describe. After every test, before the subject is
   * destroyed, both tenants' audit histories are verified: whatever a case did, the store must
   * have kept every invariant (over HTTP this runs GET /v1/verify through the client).
   */
  install(): void {
    beforeEach(async () => {
      this.#current = await this.options.createStore();
    });
    afterEach(async () => {
      const subject = this.#current;
      this.#current = null;
      if (subject === null) return;
      try {
        for (const [tenant, api] of [
          ['gate', subject.gate],
          ['other', subject.other],
        ] as const) {
          const report = await api.verify();
          expect(report.violations, `verify of the ${tenant} tenant after the test`).toEqual([]);
          expect(report.ok).toBe(true);
        }
      } finally {
        await this.options.destroyStore(subject);
      }
    });
  }

  get subject(): ConformanceSubject {
    if (this.#current === null)
      throw new Error('the conformance subject exists only inside a test');
    return this.#current;
  }
}
