/**
 * What the conformance suite runs against. The subject is tenant-bound (FencegateApi with the
 * operator and dispatcher surface, FencegateOpsApi), not a raw Store, so the same suite runs over
 * the library facade and over HTTP. A subject in the store's own process also hands over the Store
 * itself, for the Store methods no tenant-bound API has (tokens, every tenant's audit, counts).
 */
import { afterEach, beforeEach, expect } from 'vitest';
import type { FencegateApi, FencegateOpsApi } from '../../api.js';
import { verifyStore } from '../../audit/verify.js';
import type { RolloutsApi } from '../../rollout/rollouts.js';
import type { Store } from '../../store/store.js';

/** A tenant-bound handle: the library's Fencegate or the HTTP client. */
export type ConformanceGate = FencegateApi &
  FencegateOpsApi & {
    /** The rollout commands, where the entry point offers them (the rollout cases need them). */
    rollouts?: RolloutsApi;
  };

/** The Store under a subject, with the tenant names of `gate` and `other` on it. */
export interface ConformanceStore {
  store: Store;
  tenant: string;
  otherTenant: string;
}

export interface ConformanceSubject {
  /** Tenant A. */
  gate: ConformanceGate;
  /** Tenant B on the same store, for the isolation cases. */
  other: ConformanceGate;
  /** Moves the store clock forward (the clock that judges leases). */
  advanceClock(ms: number): Promise<void>;
  /**
   * Another handle for tenant A through a separate connection to the same store; required when
   * `capabilities.sharedAcrossProcesses` is true.
   */
  connectAgain?(): Promise<ConformanceGate>;
  /** The Store itself; required when `capabilities.storeInProcess` is true. */
  store?: ConformanceStore;
}

export interface ConformanceCapabilities {
  /** Several connections (processes) share one store: runs the cross-connection cases. */
  sharedAcrossProcesses?: boolean;
  /**
   * leaseExpiresAt is exactly store time + ttlMs. Stores that round leases up (etcd: whole
   * seconds) set false; the cases then judge expiry by the granted leaseExpiresAt only.
   */
  exactLeaseExpiry?: boolean;
  /**
   * The subject hands over its Store (`subject.store`): runs the cases of the Store methods no
   * tenant-bound API has (tokens, every tenant's audit, open-intent counts, the jobs ledger's
   * rows), and verifies every tenant's history after each case, not only the two tenants'.
   */
  storeInProcess?: boolean;
  /**
   * The subject's gate offers `rollouts` (the library's Fencegate and the HTTP client do): runs
   * the rollout cases. True by default with the Store in process.
   */
  rollouts?: boolean;
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
  storeInProcess: boolean;
  rollouts: boolean;
}

/** Gives each test a fresh subject through beforeEach/afterEach. */
export class SubjectFixture {
  readonly capabilities: ResolvedCapabilities;
  #current: ConformanceSubject | null = null;

  constructor(private readonly options: StoreConformanceOptions) {
    this.capabilities = {
      sharedAcrossProcesses: options.capabilities?.sharedAcrossProcesses ?? false,
      exactLeaseExpiry: options.capabilities?.exactLeaseExpiry ?? true,
      storeInProcess: options.capabilities?.storeInProcess ?? false,
      rollouts: options.capabilities?.rollouts ?? options.capabilities?.storeInProcess ?? false,
    };
  }

  /**
   * Registers the hooks; call inside the suite's describe. After every test, before the subject is
   * destroyed, both tenants' audit histories are verified: whatever a case did, the store must
   * have kept every invariant (over HTTP this runs GET /v1/verify through the client). With the
   * Store in process, the history of every tenant is verified as well.
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
        if (subject.store !== undefined) {
          const whole = await verifyStore(subject.store.store);
          expect(whole.violations, 'verify of every tenant after the test').toEqual([]);
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

  /** The subject's Store; only the cases under `storeInProcess` ask for it. */
  get store(): ConformanceStore {
    const store = this.subject.store;
    if (store === undefined) {
      throw new Error('a subject with the storeInProcess capability must provide store');
    }
    return store;
  }
}
