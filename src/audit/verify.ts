/**
 * `verify`: replays an audit history in seq order and proves the invariants of SEMANTICS.md
 * ("Audit and verification"), or names the entries that break them. Incremental: a result's
 * checkpoint lets a later call continue after the last entry without re-reading history.
 */
import { fail } from '../errors.js';
import type { Store } from '../store/store.js';
import type { AuditEntry } from '../types.js';
import { auditPages, REPLAY_PAGE_SIZE } from './audit-pages.js';
import { emptyCheckpoint, type VerifyCheckpoint } from './checkpoint.js';
import { checkpointIdentity, requireCheckpointOfStore } from './checkpoint-identity.js';
import { HistoryVerifier, type HistoryVerifierOptions } from './history-verifier.js';
import type { Violation } from './violations.js';

export interface VerifyResult {
  /** true when no violation was ever found: in this call nor in the runs before its checkpoint. */
  ok: boolean;
  /** Entries checked by this call. */
  checked: number;
  /** Violations found by this call (at most maxViolations of them; see violationCount). */
  violations: Violation[];
  /** Violations found by this call. */
  violationCount: number;
  /** Entries checked by this call and the runs before its checkpoint. */
  totalChecked: number;
  /** Violations found by this call and the runs before its checkpoint. */
  totalViolations: number;
  /** seq of the last entry verified, or null when none was. */
  lastSeq: number | null;
  /** Pass to the next call to continue after lastSeq. */
  checkpoint: VerifyCheckpoint;
}

export type VerifyHistoryOptions = HistoryVerifierOptions;

/** Pure: verifies `entries` (in seq order) continuing from `checkpoint`, which is not modified. */
export function verifyHistory(
  entries: Iterable<AuditEntry>,
  checkpoint?: VerifyCheckpoint,
  options: VerifyHistoryOptions = {},
): VerifyResult {
  const verifier = new HistoryVerifier(checkpoint, options);
  if (Array.isArray(entries)) {
    // Indexed loop: no iterator object per call on the common array input.
    const list = entries as AuditEntry[];
    for (let i = 0; i < list.length; i++) verifier.push(list[i]!);
  } else {
    for (const entry of entries) verifier.push(entry);
  }
  return resultOf(verifier);
}

export interface VerifyStoreOptions extends VerifyHistoryOptions {
  /** Verify one tenant's history; undefined verifies every tenant. */
  tenant?: string;
  /** Continue from an earlier result's checkpoint (made for the same tenant option). */
  checkpoint?: VerifyCheckpoint;
  /** Entries read per readAudit call. Default 1000. */
  pageSize?: number;
}

export const DEFAULT_PAGE_SIZE = REPLAY_PAGE_SIZE;

/** Reads the store's audit log page by page in seq order and verifies it. */
export async function verifyStore(
  store: Store,
  options: VerifyStoreOptions = {},
): Promise<VerifyResult> {
  const tenant = options.tenant ?? null;
  const checkpoint = options.checkpoint ?? emptyCheckpoint(tenant);
  if (checkpoint.tenant !== tenant) {
    fail(
      'invalid_request',
      `the checkpoint was made for ${describeTenant(checkpoint.tenant)}; this run verifies ${describeTenant(tenant)}`,
    );
  }
  const pruned = (await store.auditPrunedThrough?.()) ?? 0;
  if (pruned > (checkpoint.lastSeq ?? 0)) {
    fail(
      'invalid_request',
      `audit entries through seq ${pruned} were pruned after they verified; continue from the checkpoint that covered them (fencegate verify --checkpoint FILE)`,
    );
  }
  if (options.checkpoint !== undefined) {
    await requireCheckpointOfStore(store, checkpoint, { strict: false });
  }
  const verifier = new HistoryVerifier(checkpoint, options);
  // The last entry read, whose hash the new checkpoint names (checkpoint-identity.ts).
  let lastEntry: AuditEntry | null = null;
  const sink: EntrySink = {
    get lastSeq() {
      return verifier.lastSeq;
    },
    push(entry) {
      lastEntry = entry;
      verifier.push(entry);
    },
  };
  await readInto(store, sink, options.tenant, options.pageSize ?? DEFAULT_PAGE_SIZE);
  const result = resultOf(verifier);
  const identity = await checkpointIdentity(store, lastEntry, checkpoint);
  return { ...result, checkpoint: { ...result.checkpoint, ...identity } };
}

/** Where a replay puts the entries it reads: a verifier, or one that also counts per tenant. */
export interface EntrySink {
  readonly lastSeq: number | null;
  push(entry: AuditEntry): void;
}

/**
 * Pushes every audit entry after the sink's last seq into it, page by page, giving the event
 * loop back between pages (audit-pages.ts). Used by verifyStore and by long-lived verifiers that
 * keep their state between runs.
 */
export async function readInto(
  store: Store,
  sink: EntrySink,
  tenant: string | undefined,
  pageSize: number = DEFAULT_PAGE_SIZE,
): Promise<void> {
  for await (const items of auditPages(store, tenant, sink.lastSeq, pageSize)) {
    for (let i = 0; i < items.length; i++) sink.push(items[i]!);
  }
}

function resultOf(verifier: HistoryVerifier): VerifyResult {
  return {
    ok: verifier.totalViolations === 0,
    checked: verifier.checked,
    violations: [...verifier.violations],
    violationCount: verifier.violationCount,
    totalChecked: verifier.totalChecked,
    totalViolations: verifier.totalViolations,
    lastSeq: verifier.lastSeq,
    checkpoint: verifier.checkpoint(),
  };
}

function describeTenant(tenant: string | null): string {
  return tenant === null ? 'every tenant' : `tenant ${tenant}`;
}
