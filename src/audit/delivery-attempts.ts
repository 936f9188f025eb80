/**
 * The delivery attempts of each intent, as verify replays them: a claim opens attempt N (its
 * claim fence), a completion (delivered, failed, unknown, needs_attention, or a retryable failure
 * back to pending) closes the open attempt with that claim fence. A completion with no open
 * attempt of its claim fence is a delivery outcome no audited attempt produced: more deliveries
 * than attempts. Intents are followed from the commit that created them; one created before the
 * history (or checkpoint) began is followed from its first claim.
 */
import type { AuditEntry } from '../types.js';

/** [tenant, effectKey, latest claim fence (0 = never claimed), 1 when that claim is open]. */
export type AttemptCheckpoint = [string, string, number, 0 | 1];

interface Attempts {
  claimFence: number;
  open: boolean;
}

/** What a completion closed, or why it closed nothing. */
export type CompletionCheck =
  { ok: true } | { ok: false; expectedClaimFence: number | null; message: string };

export class DeliveryAttempts {
  /** tenant -> effectKey -> attempts. */
  readonly #byTenant = new Map<string, Map<string, Attempts>>();

  created(entry: AuditEntry, effectKey: string): void {
    this.#keys(entry.tenant).set(effectKey, { claimFence: 0, open: false });
  }

  claimed(entry: AuditEntry, effectKey: string, claimFence: number): void {
    this.#keys(entry.tenant).set(effectKey, { claimFence, open: true });
  }

  completed(entry: AuditEntry, effectKey: string, claimFence: number | null): CompletionCheck {
    const attempts = this.#keys(entry.tenant).get(effectKey);
    // Origin before the history began: nothing to hold it to.
    if (attempts === undefined) return { ok: true };
    const matches = attempts.open && claimFence === attempts.claimFence;
    attempts.open = false;
    if (matches) return { ok: true };
    const outcome = `a ${entry.outcome} outcome of ${effectKey} (claim fence ${claimFence ?? 'none'})`;
    return {
      ok: false,
      expectedClaimFence: attempts.claimFence,
      message:
        attempts.claimFence === 0
          ? `${outcome} was recorded, but no delivery attempt of it was ever audited`
          : `${outcome} was recorded, but no audited attempt was open for it (latest claim fence ${attempts.claimFence}, ${attempts.claimFence === claimFence ? 'already completed' : 'another claim'})`,
    };
  }

  checkpoint(): AttemptCheckpoint[] {
    const out: AttemptCheckpoint[] = [];
    for (const [tenant, keys] of this.#byTenant) {
      for (const [effectKey, a] of keys)
        out.push([tenant, effectKey, a.claimFence, a.open ? 1 : 0]);
    }
    return out;
  }

  restore(checkpoint: readonly AttemptCheckpoint[]): void {
    for (const [tenant, effectKey, claimFence, open] of checkpoint) {
      this.#keys(tenant).set(effectKey, { claimFence, open: open === 1 });
    }
  }

  #keys(tenant: string): Map<string, Attempts> {
    let keys = this.#byTenant.get(tenant);
    if (keys === undefined) {
      keys = new Map();
      this.#byTenant.set(tenant, keys);
    }
    return keys;
  }
}

export function isAttemptCheckpoint(value: unknown): boolean {
  return (
    Array.isArray(value) &&
    value.length === 4 &&
    typeof value[0] === 'string' &&
    typeof value[1] === 'string' &&
    Number.isSafeInteger(value[2]) &&
    (value[2] as number) >= 0 &&
    (value[3] === 0 || value[3] === 1)
  );
}
