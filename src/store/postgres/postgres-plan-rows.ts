/**
 * core's plan rows (core/plan/transition.ts) and the PostgreSQL tables: the key columns of a ref,
 * the columns a put writes, and a stored row (as `to_jsonb` of the table's row, with its
 * row_version) back as a plan row. Only shapes change here; nothing is decided.
 */
import { commitRejection } from '../../core/refusal-messages.js';
import { jsonOf, rememberJson } from '../../core/prepared-value.js';
import type { Put, Ref, Rows, RowType } from '../../core/plan/transition.js';
import type { CommitResult, Intent } from '../../types.js';
import { toIntent, type IntentRow } from '../rows.js';

type Columns = Record<string, unknown>;

export function keyColumns(ref: Ref): Columns {
  switch (ref.type) {
    case 'scope':
      return { scope: ref.scope };
    case 'fenceGrant':
      return { scope: ref.scope, fence: ref.fence };
    case 'record':
      return { scope: ref.scope, name: ref.name };
    case 'deletion':
      return { scope: ref.scope, name: ref.name, revision: ref.revision };
    case 'operation':
      return { operation_id: ref.operationId };
    case 'intent':
      return { effect_key: ref.effectKey };
    case 'policy':
      return { version: ref.version };
    case 'cutover':
      return { cutover_id: ref.cutoverId };
    case 'cutoverStep':
      return { cutover_id: ref.cutoverId, scope: ref.scope };
    case 'job':
      return { job_id: ref.jobId };
  }
}

/** The columns a put writes, its key columns included (a new object the caller may extend). */
export function putColumns(put: Put): Columns {
  const key = keyColumns(put);
  switch (put.type) {
    case 'scope': {
      const { row } = put;
      return Object.assign(key, {
        fence: row.fence,
        holder: row.holder,
        lease_expires_at: row.leaseExpiresAt,
        policy_version: row.policyVersion,
        status: row.status,
        updated_at: row.updatedAt,
        grant_token_id: row.grantTokenId ?? null,
      });
    }
    case 'fenceGrant':
      return Object.assign(key, { holder: put.row.holder });
    case 'record': {
      const { row } = put;
      return Object.assign(key, {
        live: row.exists,
        value: row.valueJson,
        revision: row.revision,
        incarnation: row.incarnation,
        fingerprint: row.fingerprint,
        updated_at: row.updatedAt,
      });
    }
    case 'deletion':
      return key;
    case 'operation': {
      const { row } = put;
      return Object.assign(key, {
        request_fingerprint: row.requestFingerprint,
        outcome: row.outcome,
        created_at: row.at,
      });
    }
    case 'intent': {
      const { row } = put;
      return Object.assign(key, {
        scope: row.scope,
        target: row.target,
        payload: jsonOf(row.payload),
        status: row.status,
        attempts: row.attempts,
        fence: row.fence,
        operation_id: row.operationId,
        claim_fence: row.claimFence,
        claimed_by: row.claimedBy,
        claim_expires_at: row.claimExpiresAt,
        next_attempt_at: row.nextAttemptAt,
        provider_ref: row.providerRef,
        last_error: row.lastError,
        unknown_outcomes: row.unknownOutcomes,
        created_at: row.createdAt,
        updated_at: row.updatedAt,
      });
    }
    case 'policy': {
      const { row } = put;
      return Object.assign(key, {
        digest: row.digest,
        description: row.description,
        registered_by: row.registeredBy,
        registered_at: row.registeredAt,
      });
    }
    case 'cutover': {
      const { row } = put;
      return Object.assign(key, {
        request_fingerprint: row.requestFingerprint,
        to_policy: row.toPolicy,
        holder: row.holder,
        lease_ttl_ms: row.leaseTtlMs,
        reason: row.reason,
        status: row.status,
        start_seq: row.startSeq,
        started_at: row.startedAt,
        completed_at: row.completedAt,
        scopes: row.scopes,
      });
    }
    case 'cutoverStep':
      return Object.assign(key, { fence: put.row.fence, skipped: put.row.skipped === true });
    case 'job': {
      const { row } = put;
      return Object.assign(key, {
        scope: row.scope,
        policy_version: row.policyVersion,
        fence: row.fence,
        state: row.state,
        attempt: row.attempt,
        at: row.at,
      });
    }
  }
}

export interface StoredRow {
  ref: Ref;
  /** The row_version read; 0 for a key with no row. */
  version: number;
  /** null where core sees no row: none stored, or a cutover's scope not moved yet. */
  row: Rows[RowType] | null;
}

/** A stored row (to_jsonb of its table's row) as core reads it. */
export function storedRow(type: RowType, c: Columns): StoredRow {
  const version = Number(c.row_version);
  const s = (name: string): string => c[name] as string;
  const n = (name: string): number => Number(c[name]);
  const orNull = (name: string): number | null => (c[name] === null ? null : Number(c[name]));
  switch (type) {
    case 'scope':
      return {
        ref: { type, scope: s('scope') },
        version,
        row: {
          fence: n('fence'),
          holder: c.holder as string | null,
          leaseExpiresAt: orNull('lease_expires_at'),
          policyVersion: c.policy_version as string | null,
          status: c.status as 'active' | 'deleted',
          updatedAt: n('updated_at'),
          grantTokenId: (c.grant_token_id as string | null | undefined) ?? null,
        },
      };
    case 'fenceGrant':
      return {
        ref: { type, scope: s('scope'), fence: n('fence') },
        version,
        row: { holder: s('holder') },
      };
    case 'record':
      return {
        ref: { type, scope: s('scope'), name: s('name') },
        version,
        row: {
          exists: c.live as boolean,
          valueJson: c.value as string | null,
          revision: n('revision'),
          incarnation: n('incarnation'),
          fingerprint: c.fingerprint as string | null,
          updatedAt: n('updated_at'),
        },
      };
    case 'deletion':
      return {
        ref: { type, scope: s('scope'), name: s('name'), revision: n('revision') },
        version,
        row: { at: null },
      };
    case 'operation':
      return {
        ref: { type, operationId: s('operation_id') },
        version,
        row: {
          requestFingerprint: s('request_fingerprint'),
          outcome: inFieldOrder(c.outcome as CommitResult),
          at: n('created_at'),
        },
      };
    case 'intent':
      return { ref: { type, effectKey: s('effect_key') }, version, row: intentOf(c) };
    case 'policy':
      return {
        ref: { type, version: s('version') },
        version,
        row: {
          version: s('version'),
          digest: c.digest as string | null,
          description: c.description as string | null,
          registeredBy: c.registered_by as string | null,
          registeredAt: n('registered_at'),
        },
      };
    case 'cutover':
      return {
        ref: { type, cutoverId: s('cutover_id') },
        version,
        row: {
          cutoverId: s('cutover_id'),
          requestFingerprint: s('request_fingerprint'),
          toPolicy: s('to_policy'),
          holder: s('holder'),
          leaseTtlMs: orNull('lease_ttl_ms'),
          reason: c.reason as string | null,
          status: c.status as 'running' | 'completed',
          startedAt: n('started_at'),
          completedAt: orNull('completed_at'),
          startSeq: n('start_seq'),
          scopes: c.scopes as string[],
        },
      };
    case 'cutoverStep':
      return {
        ref: { type, cutoverId: s('cutover_id'), scope: s('scope') },
        version,
        row:
          c.fence === null
            ? null
            : c.skipped === true
              ? { fence: n('fence'), skipped: true }
              : { fence: n('fence') },
      };
    case 'job':
      return {
        ref: { type, jobId: s('job_id') },
        version,
        row: {
          jobId: s('job_id'),
          scope: s('scope'),
          policyVersion: s('policy_version'),
          fence: n('fence'),
          state: c.state as Rows['job']['state'],
          attempt: n('attempt'),
          at: n('at'),
        },
      };
  }
}

/** An intent as read, its payload's JSON text kept so writing the intent back reuses it. */
function intentOf(c: Columns): Intent {
  const intent = toIntent(c as unknown as IntentRow);
  rememberJson(intent.payload, c.payload as string);
  return intent;
}

/**
 * jsonb sorts object keys; answers are rebuilt in the field order of types.ts for readability. A
 * rejection is rebuilt by core from its code and details: the stored message is never answered.
 */
export function inFieldOrder(result: CommitResult): CommitResult {
  if (result.outcome === 'rejected') {
    return {
      outcome: 'rejected',
      operationId: result.operationId,
      replayed: result.replayed,
      error: commitRejection(result.error.code, result.error.details),
    };
  }
  return {
    outcome: 'committed',
    operationId: result.operationId,
    scope: result.scope,
    fence: result.fence,
    records: result.records.map(({ name, revision, incarnation, fingerprint }) => ({
      name,
      revision,
      incarnation,
      fingerprint,
    })),
    intents: result.intents.map(({ effectKey, status }) => ({ effectKey, status })),
    replayed: result.replayed,
  };
}
