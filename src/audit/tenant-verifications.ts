/**
 * What the background verifier found, per tenant: entries checked, violations and the first few
 * of them in full. The dashboard's Verify panel shows a tenant only its own part, so one tenant's
 * panel never shows another tenant's violations.
 */
import type { AuditEntry } from '../types.js';
import type { Violation } from './violations.js';

/** Violations kept in full per tenant; beyond it they are counted. */
export const VIOLATIONS_KEPT_PER_TENANT = 50;

export interface TenantVerification {
  /** Entries of the tenant verified since the verifier started (or loaded its checkpoint). */
  checked: number;
  violations: number;
  /** The first VIOLATIONS_KEPT_PER_TENANT of them. */
  firstViolations: readonly Violation[];
}

interface Tally {
  checked: number;
  violations: number;
  firstViolations: Violation[];
}

export class TenantVerifications {
  readonly #byTenant = new Map<string, Tally>();
  // One-entry cache: histories come in long runs of a single tenant.
  #lastTenant: string | null = null;
  #last: Tally | null = null;

  entry(entry: AuditEntry): void {
    this.#of(entry.tenant).checked++;
  }

  violation(violation: Violation): void {
    const tally = this.#of(violation.tenant);
    tally.violations++;
    if (tally.firstViolations.length < VIOLATIONS_KEPT_PER_TENANT)
      tally.firstViolations.push(violation);
  }

  /** The tenant's part; zeros for a tenant with no entry verified. */
  of(tenant: string): TenantVerification {
    const tally = this.#byTenant.get(tenant);
    if (tally === undefined) return { checked: 0, violations: 0, firstViolations: [] };
    return {
      checked: tally.checked,
      violations: tally.violations,
      firstViolations: [...tally.firstViolations],
    };
  }

  /** Forgets every tenant's counts (the verifier starts over from a checkpoint). */
  clear(): void {
    this.#byTenant.clear();
    this.#lastTenant = null;
    this.#last = null;
  }

  #of(tenant: string): Tally {
    if (tenant === this.#lastTenant && this.#last !== null) return this.#last;
    let tally = this.#byTenant.get(tenant);
    if (tally === undefined) {
      tally = { checked: 0, violations: 0, firstViolations: [] };
      this.#byTenant.set(tenant, tally);
    }
    this.#lastTenant = tenant;
    this.#last = tally;
    return tally;
  }
}
