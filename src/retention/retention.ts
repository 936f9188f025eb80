/**
 * Retention: what may be deleted, decided once for every store.
 *
 * - Stored outcomes older than the window are deleted. A commit that repeats a deleted outcome's
 *   operationId is a new operation: its checks run again against the current state (docs/semantics.md
 *   says what clients must do).
 * - Audit entries are deleted only through the last seq of a verify checkpoint of this store's own
 *   log that covers every tenant and found no violation, so what is deleted was proven first, and
 *   `verify` continues from that checkpoint. Optionally they are first appended to a JSON-lines
 *   file (one entry a line, flushed to disk before anything is deleted).
 * - Finished rollouts' documents older than their window are deleted (rollout-retention.ts).
 */
import { open } from 'node:fs/promises';
import type { VerifyCheckpoint } from '../audit/checkpoint.js';
import { requireCheckpointOfStore } from '../audit/checkpoint-identity.js';
import { fail } from '../errors.js';
import type { Store } from '../store/store.js';
import { pruneFinishedRollouts } from './rollout-retention.js';

/**
 * The shortest window stored outcomes are kept. An outcome deleted while its client still retries
 * the commit (a lost reply, a backoff, a restart) turns the retry into a new operation that applies
 * again; an hour is far past any client's retry horizon (FencegateClient's is seconds), and short
 * enough for a busy store to stay small.
 */
export const MIN_OUTCOME_RETENTION_MS = 3_600_000;

/** Refuses a retention window that is not a whole number of ms of at least the floor. */
export function requireOutcomeWindow(ms: number, field: string): void {
  if (!Number.isSafeInteger(ms) || ms < MIN_OUTCOME_RETENTION_MS) {
    fail(
      'invalid_request',
      `${field} must be at least 1h (${MIN_OUTCOME_RETENTION_MS} ms): stored outcomes must outlive every retry of their commit`,
      { field },
    );
  }
}

export interface RetentionOptions {
  /** Stored outcomes older than this (ms of store time) are deleted; absent: kept. */
  outcomeRetentionMs?: number;
  /** Audit entries through this checkpoint's lastSeq are deleted; absent: kept. */
  auditCheckpoint?: VerifyCheckpoint;
  /** With auditCheckpoint: append the entries to this JSON-lines file before deleting them. */
  exportFile?: string;
  /**
   * Rollouts finished (completed or rolled back) longer ago than this (ms of store time) are
   * deleted with what they recorded per scope; absent: kept. The CLI's default is
   * DEFAULT_ROLLOUT_RETENTION_MS.
   */
  rolloutRetentionMs?: number;
}

export interface RetentionResult {
  outcomesDeleted: number;
  auditDeleted: number;
  auditExported: number;
  /** The audit log now starts after this seq (0: nothing pruned). */
  auditPrunedThrough: number;
  rolloutsDeleted: number;
}

const EXPORT_PAGE = 5000;

export async function applyRetention(
  store: Store,
  options: RetentionOptions,
): Promise<RetentionResult> {
  const { pruneOperations, pruneAudit, auditPrunedThrough } = retentionOf(store);
  const checkpoint = options.auditCheckpoint;
  const throughSeq = checkpoint === undefined ? null : prunableThrough(checkpoint);
  // Only a checkpoint of this store's own log proves what it covers (checkpoint-identity.ts).
  const lastHash =
    checkpoint === undefined
      ? null
      : await requireCheckpointOfStore(store, checkpoint, { strict: true });
  if (options.exportFile !== undefined && checkpoint === undefined) {
    fail('invalid_request', 'an export file needs an audit checkpoint: it exports what is pruned', {
      field: 'exportFile',
    });
  }
  if (options.outcomeRetentionMs !== undefined) {
    requireOutcomeWindow(options.outcomeRetentionMs, 'outcomeRetentionMs');
  }
  const rolloutWindow = options.rolloutRetentionMs;
  if (rolloutWindow !== undefined && (!Number.isSafeInteger(rolloutWindow) || rolloutWindow < 0)) {
    fail('invalid_request', 'rolloutRetentionMs must be a whole number of ms, 0 or more', {
      field: 'rolloutRetentionMs',
    });
  }
  const result: RetentionResult = {
    outcomesDeleted: 0,
    auditDeleted: 0,
    auditExported: 0,
    auditPrunedThrough: await auditPrunedThrough(),
    rolloutsDeleted: 0,
  };
  if (rolloutWindow !== undefined) {
    result.rolloutsDeleted = await pruneFinishedRollouts(
      store,
      (await store.now()) - rolloutWindow,
    );
  }
  if (options.outcomeRetentionMs !== undefined) {
    result.outcomesDeleted = await pruneOperations(
      (await store.now()) - options.outcomeRetentionMs,
    );
  }
  if (throughSeq !== null && throughSeq > result.auditPrunedThrough) {
    if (options.exportFile !== undefined) {
      result.auditExported = await exportAudit(
        store,
        options.exportFile,
        result.auditPrunedThrough,
        throughSeq,
      );
    }
    // Kept before anything is deleted: a server continues verifying from it (docs/verify.md).
    await store.saveVerifiedCheckpoint?.(throughSeq, JSON.stringify(checkpoint));
    result.auditDeleted = await pruneAudit(throughSeq, lastHash);
    result.auditPrunedThrough = throughSeq;
  }
  return result;
}

/** The seq through which a checkpoint allows deleting, or a refusal that says what to fix. */
function prunableThrough(checkpoint: VerifyCheckpoint): number | null {
  if (checkpoint.tenant !== null) {
    fail(
      'invalid_request',
      `the checkpoint covers tenant ${checkpoint.tenant} only; audit entries are pruned only below a checkpoint of every tenant (fencegate verify --checkpoint FILE, without --tenant)`,
      { field: 'auditCheckpoint' },
    );
  }
  if (checkpoint.violations > 0) {
    fail(
      'invalid_request',
      `the checkpoint recorded ${checkpoint.violations} violation(s); audit entries are kept until a history verifies clean`,
      { field: 'auditCheckpoint' },
    );
  }
  return checkpoint.lastSeq;
}

function retentionOf(store: Store) {
  if (
    store.pruneOperations === undefined ||
    store.pruneAudit === undefined ||
    store.auditPrunedThrough === undefined
  ) {
    return fail('invalid_request', `the ${store.kind} store does not support retention`);
  }
  return {
    pruneOperations: (before: number) => store.pruneOperations!(before),
    pruneAudit: (seq: number, lastHash: string | null) => store.pruneAudit!(seq, lastHash),
    auditPrunedThrough: () => store.auditPrunedThrough!(),
  };
}

/** Appends the entries after `afterSeq` through `throughSeq` as JSON lines, synced to disk. */
async function exportAudit(
  store: Store,
  path: string,
  afterSeq: number,
  throughSeq: number,
): Promise<number> {
  const file = await open(path, 'a');
  let exported = 0;
  try {
    let after = afterSeq;
    while (after < throughSeq) {
      const page = await store.readAudit(undefined, { afterSeq: after, limit: EXPORT_PAGE });
      const entries = page.items.filter((entry) => entry.seq <= throughSeq);
      if (entries.length > 0) {
        await file.write(entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
        exported += entries.length;
      }
      const last = page.items.at(-1);
      if (last === undefined || last.seq >= throughSeq) break;
      after = last.seq;
    }
    await file.sync();
  } finally {
    await file.close();
  }
  return exported;
}
