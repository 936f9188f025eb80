/**
 * A tiny in-memory model of SEMANTICS.md, written from the document alone: it does not use the
 * core rule modules the adapters use, so a misreading there shows up as a divergence here. It
 * answers what a store must answer; the commands compare the real store against it.
 *
 * Where SEMANTICS.md leaves the choice open, the model says which answers it accepts (`alsoAccept`)
 * and follows the store's choice, which is then stored like any outcome.
 */
import { isDeepStrictEqual } from 'node:util';

export type Answer<T> = { ok: true; value: T } | { ok: false; refusal: Refusal };

export interface Refusal {
  code: string;
  /** Fields the store's details must carry with these values. */
  details: Record<string, unknown>;
  /** Codes SEMANTICS.md allows as well in this situation. */
  alsoAccept?: string[];
}

export interface ModelScope {
  fence: number;
  holder: string | null;
  expiresAt: number | null;
  policy: string | null;
  status: 'active' | 'deleted';
}

export interface ModelRecord {
  exists: boolean;
  value: unknown;
  revision: number;
  incarnation: number;
  /** Revisions at which the record was absent: 0 and every deletion. */
  absentAt: Set<number>;
}

export interface ModelIntent {
  scope: string;
  status: 'pending' | 'cancelled';
  fence: number;
  operationId: string;
}

export interface ModelGrant {
  scope: string;
  fence: number;
  holder: string;
  leaseExpiresAt: number | null;
  policyVersion: string | null;
  reacquired: boolean;
}

export interface ModelCommitRequest {
  scope: string;
  fence: number;
  operationId: string;
  taskId?: string;
  policyVersion?: string;
  reads: { scope: string; name: string; revision: number }[];
  writes: (
    | { name: string; expectRevision: number; value: unknown }
    | { name: string; expectRevision: number; delete: true }
  )[];
  intents: { effectKey: string; target: string; payload: unknown }[];
}

export interface ModelCommitted {
  outcome: 'committed';
  operationId: string;
  scope: string;
  fence: number;
  records: { name: string; revision: number; incarnation: number; deleted: boolean }[];
  intents: { effectKey: string; status: 'pending' }[];
}

export interface ModelRejected {
  outcome: 'rejected';
  operationId: string;
  refusal: Refusal;
}

export type ModelCommitOutcome = ModelCommitted | ModelRejected;

/** The outcome a store answered, as the model stores it for replays. */
export interface StoredOutcome {
  request: ModelCommitRequest;
  /** The store's first answer (replayed: false). */
  answer: unknown;
  committed: boolean;
}

function refuse<T>(
  code: string,
  details: Record<string, unknown> = {},
  alsoAccept?: string[],
): Answer<T> {
  return {
    ok: false,
    refusal: alsoAccept === undefined ? { code, details } : { code, details, alsoAccept },
  };
}

export class SemanticsModel {
  now: number;
  readonly scopes = new Map<string, ModelScope>();
  readonly records = new Map<string, ModelRecord>();
  readonly intents = new Map<string, ModelIntent>();
  readonly operations = new Map<string, StoredOutcome>();
  /** Accepted commits, for the audit cross-check. */
  committedCount = 0;

  constructor(now: number) {
    this.now = now;
  }

  record(scope: string, name: string): ModelRecord {
    const key = `${scope}\u0000${name}`;
    let record = this.records.get(key);
    if (record === undefined) {
      record = { exists: false, value: null, revision: 0, incarnation: 0, absentAt: new Set([0]) };
      this.records.set(key, record);
    }
    return record;
  }

  recordsOf(scope: string): [string, ModelRecord][] {
    const prefix = `${scope}\u0000`;
    return [...this.records.entries()]
      .filter(([key, record]) => key.startsWith(prefix) && record.revision > 0)
      .map(([key, record]): [string, ModelRecord] => [key.slice(prefix.length), record])
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** A holder whose lease has not ended by store time; a lease ends at its expiry instant. */
  #live(scope: ModelScope): boolean {
    return scope.holder !== null && (scope.expiresAt === null || this.now < scope.expiresAt);
  }

  #grant(name: string, scope: ModelScope, reacquired: boolean): ModelGrant {
    return {
      scope: name,
      fence: scope.fence,
      holder: scope.holder ?? '',
      leaseExpiresAt: scope.expiresAt,
      policyVersion: scope.policy,
      reacquired,
    };
  }

  acquire(name: string, holder: string, ttlMs: number, policy: string | null): Answer<ModelGrant> {
    const scope = this.scopes.get(name);
    if (scope === undefined) {
      const created: ModelScope = {
        fence: 1,
        holder,
        expiresAt: this.now + ttlMs,
        policy,
        status: 'active',
      };
      this.scopes.set(name, created);
      return { ok: true, value: this.#grant(name, created, false) };
    }
    if (scope.status === 'deleted') return refuse('scope_deleted');
    // "A pinned scope answers policy_mismatch to an acquire that names another policy or none."
    if (scope.policy !== null && policy !== scope.policy) {
      return refuse('policy_mismatch', { currentPolicyVersion: scope.policy });
    }
    if (this.#live(scope)) {
      if (scope.holder === holder) return { ok: true, value: this.#grant(name, scope, true) };
      return refuse('lease_held', { holder: scope.holder, leaseExpiresAt: scope.expiresAt });
    }
    scope.fence += 1;
    scope.holder = holder;
    scope.expiresAt = this.now + ttlMs;
    scope.policy = scope.policy ?? policy;
    return { ok: true, value: this.#grant(name, scope, false) };
  }

  renew(name: string, holder: string, fence: number, ttlMs: number): Answer<ModelGrant> {
    const scope = this.scopes.get(name);
    if (scope === undefined) return refuse('scope_not_found');
    if (fence !== scope.fence) return refuse('stale_fence', { currentFence: scope.fence });
    if (scope.status === 'deleted') return refuse('scope_deleted');
    if (scope.holder !== holder) return refuse('not_holder');
    // An expired lease nobody replaced may be renewed: no one else was granted authority.
    scope.expiresAt = this.now + ttlMs;
    return { ok: true, value: this.#grant(name, scope, false) };
  }

  release(
    name: string,
    holder: string,
    fence: number,
  ): Answer<{ released: true; alreadyReleased: boolean }> {
    const scope = this.scopes.get(name);
    if (scope === undefined) return refuse('scope_not_found');
    if (fence !== scope.fence) return refuse('stale_fence', { currentFence: scope.fence });
    if (scope.status === 'deleted') return refuse('scope_deleted');
    if (scope.holder === null)
      return { ok: true, value: { released: true, alreadyReleased: true } };
    if (scope.holder !== holder) return refuse('not_holder');
    scope.holder = null;
    scope.expiresAt = null;
    return { ok: true, value: { released: true, alreadyReleased: false } };
  }

  takeover(
    name: string,
    holder: string,
    ttlMs: number | null,
    policy: string | null,
  ): Answer<ModelGrant> {
    const existing = this.scopes.get(name);
    const pinned = existing?.policy ?? null;
    if (pinned !== null && policy !== null && policy !== pinned) {
      return refuse('policy_mismatch', { currentPolicyVersion: pinned });
    }
    const scope: ModelScope = {
      fence: (existing?.fence ?? 0) + 1,
      holder,
      expiresAt: ttlMs === null ? null : this.now + ttlMs,
      policy: pinned ?? policy,
      status: 'active',
    };
    this.scopes.set(name, scope);
    return { ok: true, value: this.#grant(name, scope, false) };
  }

  cancel(name: string): Answer<{ fence: number; cancelledIntents: number }> {
    const scope = this.scopes.get(name);
    if (scope === undefined) return refuse('scope_not_found');
    if (scope.status === 'deleted') return refuse('scope_deleted');
    scope.fence += 1;
    scope.holder = null;
    scope.expiresAt = null;
    let cancelled = 0;
    for (const intent of this.intents.values()) {
      if (intent.scope === name && intent.status === 'pending') {
        intent.status = 'cancelled';
        cancelled += 1;
      }
    }
    return { ok: true, value: { fence: scope.fence, cancelledIntents: cancelled } };
  }

  deleteScope(name: string): Answer<{ fence: number }> {
    const scope = this.scopes.get(name);
    if (scope === undefined) return refuse('scope_not_found');
    if (scope.status === 'deleted') return refuse('scope_deleted');
    scope.fence += 1;
    scope.holder = null;
    scope.expiresAt = null;
    scope.status = 'deleted';
    for (const [, record] of this.recordsOf(name)) {
      if (!record.exists) continue;
      record.revision += 1;
      record.exists = false;
      record.value = null;
      record.absentAt.add(record.revision);
    }
    return { ok: true, value: { fence: scope.fence } };
  }

  /** Check 1: a stored outcome for this operationId. */
  replay(request: ModelCommitRequest): { conflict: boolean; stored: StoredOutcome } | null {
    const stored = this.operations.get(request.operationId);
    if (stored === undefined) return null;
    return { conflict: !isDeepStrictEqual(stored.request, request), stored };
  }

  /** Checks 2 to 9, then the mutation. Call only when replay() returned null. */
  commit(request: ModelCommitRequest): ModelCommitOutcome {
    const refusal = this.#checkCommit(request);
    if (refusal !== null) return { outcome: 'rejected', operationId: request.operationId, refusal };
    const records: ModelCommitted['records'] = [];
    for (const write of request.writes) {
      const record = this.record(request.scope, write.name);
      record.revision += 1;
      if ('delete' in write) {
        record.exists = false;
        record.value = null;
        record.absentAt.add(record.revision);
      } else {
        if (!record.exists) record.incarnation = record.revision;
        record.exists = true;
        record.value = write.value;
      }
      records.push({
        name: write.name,
        revision: record.revision,
        incarnation: record.incarnation,
        deleted: 'delete' in write,
      });
    }
    for (const intent of request.intents) {
      this.intents.set(intent.effectKey, {
        scope: request.scope,
        status: 'pending',
        fence: request.fence,
        operationId: request.operationId,
      });
    }
    this.committedCount += 1;
    return {
      outcome: 'committed',
      operationId: request.operationId,
      scope: request.scope,
      fence: request.fence,
      records,
      intents: request.intents.map((intent) => ({
        effectKey: intent.effectKey,
        status: 'pending',
      })),
    };
  }

  #checkCommit(request: ModelCommitRequest): Refusal | null {
    const scope = this.scopes.get(request.scope);
    if (scope === undefined) return { code: 'scope_not_found', details: {} };
    if (scope.status === 'deleted') return { code: 'scope_deleted', details: {} };
    if (request.fence !== scope.fence) {
      return { code: 'stale_fence', details: { currentFence: scope.fence } };
    }
    if (scope.holder === null)
      return { code: 'authority_revoked', details: { currentFence: scope.fence } };
    if (scope.expiresAt !== null && this.now >= scope.expiresAt) {
      return {
        code: 'lease_expired',
        details: { currentFence: scope.fence, leaseExpiresAt: scope.expiresAt },
      };
    }
    if (
      request.policyVersion !== undefined &&
      scope.policy !== null &&
      request.policyVersion !== scope.policy
    ) {
      return { code: 'stale_policy', details: { currentPolicyVersion: scope.policy } };
    }
    for (const read of request.reads) {
      const current = this.record(read.scope, read.name);
      if (current.revision !== read.revision) {
        return {
          code: 'stale_dependency',
          details: { name: read.name, expected: read.revision, actual: current.revision },
        };
      }
    }
    for (const write of request.writes) {
      const refusal = this.#checkWrite(request.scope, write.name, write.expectRevision);
      if (refusal !== null) return refusal;
    }
    for (const intent of request.intents) {
      if (this.intents.has(intent.effectKey)) {
        return { code: 'duplicate_effect', details: { effectKey: intent.effectKey } };
      }
    }
    return null;
  }

  /**
   * Check 8. A read of absence (revision 0 or a deletion) saw no lifetime, so a record created
   * since is stale_revision. A read of a live revision whose lifetime has ended since (a deletion
   * came after it) is incarnation_changed; within the same lifetime it is stale_revision.
   */
  #checkWrite(scope: string, name: string, expected: number): Refusal | null {
    const current = this.record(scope, name);
    if (expected === current.revision) return null;
    const details = { name, expected, actual: current.revision };
    if (expected > current.revision) return { code: 'stale_revision', details };
    if (current.absentAt.has(expected)) {
      // A store that keeps only the current row cannot tell a read of an older deletion from a
      // read of an older lifetime; SEMANTICS.md does not settle this case, so both are accepted.
      const olderThanLastLifetime = expected < current.incarnation - 1;
      return olderThanLastLifetime
        ? { code: 'stale_revision', details, alsoAccept: ['incarnation_changed'] }
        : { code: 'stale_revision', details };
    }
    const sameLifetime = current.exists && expected >= current.incarnation;
    return { code: sameLifetime ? 'stale_revision' : 'incarnation_changed', details };
  }
}
