/**
 * Whether a verify checkpoint belongs to this store's log. A checkpoint names its store (an id the
 * store made once, at random) and the hash of the last entry it covers; a checkpoint of another
 * store, one ending beyond this store's log, or one whose last entry is not this store's would
 * make audit retention delete entries nobody verified, and make `verify` skip them.
 */
import { fingerprint } from '../core/canonical.js';
import { fail } from '../errors.js';
import type { Store } from '../store/store.js';
import type { AuditEntry } from '../types.js';
import type { VerifyCheckpoint } from './checkpoint.js';

/** The hash a checkpoint names its last entry by. */
export function auditEntryHash(entry: AuditEntry): string {
  return fingerprint(entry);
}

/** What a checkpoint made now records of its store: its id and its last entry's hash. */
export async function checkpointIdentity(
  store: Store,
  lastEntry: AuditEntry | null,
  continued: VerifyCheckpoint,
): Promise<Pick<VerifyCheckpoint, 'storeId' | 'lastHash'>> {
  const storeId = await store.storeId?.();
  const lastHash = lastEntry === null ? continued.lastHash : auditEntryHash(lastEntry);
  return {
    ...(storeId === undefined ? {} : { storeId }),
    ...(lastHash === undefined ? {} : { lastHash }),
  };
}

export interface IdentityCheck {
  /**
   * Audit retention: the checkpoint must name its store and its last entry (one made before
   * checkpoints did is refused). `verify` accepts such a checkpoint and checks what it can.
   */
  strict: boolean;
}

/**
 * Refuses (invalid_request, saying what to do) a checkpoint that does not match this store's log;
 * answers the hash of the checkpoint's last entry as this store knows it (null when unknown).
 */
export async function requireCheckpointOfStore(
  store: Store,
  checkpoint: VerifyCheckpoint,
  check: IdentityCheck,
): Promise<string | null> {
  const storeId = await store.storeId?.();
  if (storeId !== undefined) {
    if (checkpoint.storeId === undefined) {
      if (check.strict) refuse(`it was made before checkpoints named their store`);
    } else if (checkpoint.storeId !== storeId) {
      refuse(
        `it was made on another store (store id ${checkpoint.storeId}; this one is ${storeId})`,
      );
    }
  }
  const lastSeq = checkpoint.lastSeq;
  if (lastSeq === null) return null;
  const hash = await entryHashAt(store, checkpoint.tenant, lastSeq);
  if (hash === undefined) return null;
  if (checkpoint.lastHash === undefined) {
    if (check.strict) refuse(`it does not name the hash of its last entry`);
    return hash;
  }
  if (hash !== null && hash !== checkpoint.lastHash) {
    refuse(
      `its last entry (seq ${lastSeq}) does not match this store's entry at seq ${lastSeq}: it was made on another store or history`,
    );
  }
  return hash;
}

/**
 * The hash of this store's entry at `seq` (of `tenant` when given): read from the log, or kept by
 * the store when retention pruned through exactly that entry. Null when pruned without a hash;
 * undefined when retention pruned past it (the caller refuses such a checkpoint on its own).
 */
async function entryHashAt(
  store: Store,
  tenant: string | null,
  seq: number,
): Promise<string | null | undefined> {
  const page = await store.readAudit(tenant ?? undefined, { afterSeq: seq - 1, limit: 1 });
  const entry = page.items[0];
  if (entry !== undefined && entry.seq === seq) return auditEntryHash(entry);
  const prunedThrough = (await store.auditPrunedThrough?.()) ?? 0;
  if (seq < prunedThrough) return undefined;
  if (seq === prunedThrough) return (await store.auditPrunedHash?.()) ?? null;
  const whose = tenant === null ? '' : ` of tenant ${tenant}`;
  return refuse(
    `this store's log has no entry${whose} at seq ${seq}: the checkpoint ends beyond the last entry of this store, or was made on another store`,
  );
}

function refuse(why: string): never {
  return fail(
    'invalid_request',
    `the verify checkpoint does not match this store's audit log: ${why}; write a checkpoint of this store with fencegate verify --checkpoint FILE`,
    { field: 'checkpoint' },
  );
}
