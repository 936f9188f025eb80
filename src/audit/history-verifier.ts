/**
 * The replay at the heart of `verify`: feed audit entries in seq order, one `push` each. It keeps
 * per (tenant, scope) the authority state (fence, holder, lease, status, policy, latest cutover)
 * and per record its revision, exactly as SEMANTICS.md says each accepted entry changes them,
 * and reports every entry that does not fit.
 *
 * After a violation the replay adopts what the entry says (the store's word), so one fault is
 * reported once and the entries that consistently follow it are still checked against it.
 *
 * Hot path: millions of entries per run. Nested Maps keyed by the plain strings (no key
 * concatenation), one mutable object per scope, nothing allocated per entry unless it violates.
 */
import { INTENT_STATUSES, type AuditEntry, type AuditOutcome } from '../types.js';
import {
  CHECKPOINT_VERSION,
  type DeliveredCheckpoint,
  type RecordCheckpoint,
  type ScopeCheckpoint,
  type VerifyCheckpoint,
} from './checkpoint.js';
import { DeliveryAttempts } from './delivery-attempts.js';
import type { Violation, ViolationKind } from './violations.js';

/** An intent entry carries the intent's new status, or 'rejected' for a refused transition. */
const INTENT_OUTCOMES: ReadonlySet<AuditOutcome> = new Set<AuditOutcome>([
  ...INTENT_STATUSES,
  'rejected',
]);

class ScopeTrack {
  fence = 0;
  holder: string | null = null;
  leaseExpiresAt: number | null = null;
  deleted = false;
  policyVersion: string | null = null;
  /** The fence issued by the latest cutover of this scope; 0 = never cut over. */
  cutoverFence = 0;
  /**
   * fence -> whom the history gave it (null: a cancel or delete, granted to nobody; false: issued
   * twice, so no one holder), for the fences this verifier saw issued, and the current one when a
   * checkpoint names its holder.
   */
  grants: Map<number, string | null | false> | null = null;
  /** record name -> current revision (a tombstone keeps its revision). */
  readonly records = new Map<string, number>();
  /**
   * Some of this scope's records were forgotten (maxRecords): a record it does not remember is
   * taken at the revision its next entry names, and checked again from there.
   */
  forgotten = false;
}

export interface HistoryVerifierOptions {
  /** Violations kept with their details; beyond it they are only counted. Default 1000. */
  maxViolations?: number;
  /**
   * Delivered effects remembered for the double-delivery check; beyond it the oldest are
   * forgotten, so a long-lived verifier's memory does not grow with the log. Default: all.
   */
  maxDeliveredEffects?: number;
  /**
   * Record revisions remembered; beyond it those written longest ago are forgotten, so a
   * long-lived verifier's memory does not grow with the records written. A forgotten record is
   * checked again from its next write on (see ScopeTrack.forgotten), so a checkpoint of such a
   * verifier is not complete. Default: all.
   */
  maxRecords?: number;
  /** Told of every violation as it is found, beyond maxViolations too. */
  onViolation?: (violation: Violation) => void;
}

export const DEFAULT_MAX_VIOLATIONS = 1000;

export class HistoryVerifier {
  readonly #tenant: string | null;
  readonly #maxViolations: number;
  readonly #maxDelivered: number;
  #deliveredCount = 0;
  readonly #maxRecords: number;
  readonly #onViolation: ((violation: Violation) => void) | undefined;
  /** tenant, scope and record -> where it is remembered, oldest write first (with maxRecords). */
  readonly #recentRecords = new Map<string, [ScopeTrack, string]>();
  readonly #scopes = new Map<string, Map<string, ScopeTrack>>();
  /** tenant -> effectKey -> seq of its delivery. */
  readonly #delivered = new Map<string, Map<string, number>>();
  readonly #attempts = new DeliveryAttempts();
  #lastSeq = Number.NEGATIVE_INFINITY;
  #totalChecked = 0;
  #totalViolations = 0;
  /** This run only. */
  #checked = 0;
  #violationCount = 0;
  readonly #violations: Violation[] = [];
  // One-entry cache: histories come in long runs of a single tenant.
  #cachedTenant: string | null = null;
  #cachedScopes: Map<string, ScopeTrack> | null = null;

  constructor(checkpoint?: VerifyCheckpoint, options: HistoryVerifierOptions = {}) {
    this.#maxViolations = options.maxViolations ?? DEFAULT_MAX_VIOLATIONS;
    this.#maxDelivered = options.maxDeliveredEffects ?? Number.POSITIVE_INFINITY;
    this.#maxRecords = options.maxRecords ?? Number.POSITIVE_INFINITY;
    this.#onViolation = options.onViolation;
    this.#tenant = checkpoint?.tenant ?? null;
    if (checkpoint !== undefined) this.#restore(checkpoint);
  }

  /** Entries checked by this verifier (not counting those before its checkpoint). */
  get checked(): number {
    return this.#checked;
  }

  /** Violations found by this verifier, including those beyond maxViolations. */
  get violationCount(): number {
    return this.#violationCount;
  }

  /** The first maxViolations violations found by this verifier. */
  get violations(): readonly Violation[] {
    return this.#violations;
  }

  get totalChecked(): number {
    return this.#totalChecked;
  }

  get totalViolations(): number {
    return this.#totalViolations;
  }

  /** seq of the last entry pushed, or null. */
  get lastSeq(): number | null {
    return this.#lastSeq === Number.NEGATIVE_INFINITY ? null : this.#lastSeq;
  }

  push(entry: AuditEntry): void {
    this.#checked++;
    this.#totalChecked++;
    const seq = entry.seq;
    if (seq > this.#lastSeq) {
      this.#lastSeq = seq;
    } else {
      this.#report(
        entry,
        'seq_not_increasing',
        this.#lastSeq,
        seq,
        `seq ${seq} does not follow seq ${this.#lastSeq}`,
      );
    }

    if (entry.kind === 'intent') {
      this.#intent(entry);
      return;
    }
    if (entry.scope === null) {
      // A refusal, or a cutover-wide entry, changes no scope; any other accepted entry must name one.
      if (entry.outcome !== 'rejected' && entry.kind !== 'cutover') {
        this.#malformed(entry, `a ${entry.kind} entry names no scope`);
      }
      return;
    }
    if (entry.outcome === 'rejected') {
      this.#rejected(entry, entry.scope);
      return;
    }
    const scope = this.#track(entry.tenant, entry.scope);
    switch (entry.kind) {
      case 'acquire':
        if (entry.outcome === 'granted') this.#acquire(entry, scope);
        else if (entry.outcome === 'ok') this.#reacquire(entry, scope);
        else this.#badOutcome(entry);
        return;
      case 'renew':
        if (entry.outcome === 'ok') this.#renew(entry, scope);
        else this.#badOutcome(entry);
        return;
      case 'release':
        if (entry.outcome === 'ok') this.#release(entry, scope);
        else this.#badOutcome(entry);
        return;
      case 'takeover':
      case 'cutover':
        if (entry.outcome === 'granted') this.#takeover(entry, scope, entry.kind === 'cutover');
        // A replayed (idempotent) takeover or cutover answers the existing grant.
        else if (entry.outcome === 'ok') this.#keepFence(entry, scope);
        else this.#badOutcome(entry);
        return;
      case 'cancel':
      case 'delete':
        if (entry.outcome === 'ok') this.#revoke(entry, scope, entry.kind === 'delete');
        else this.#badOutcome(entry);
        return;
      case 'commit':
        if (entry.outcome === 'committed') this.#commit(entry, scope);
        else this.#badOutcome(entry);
        return;
      default:
        this.#malformed(entry, `unknown kind ${String(entry.kind)}`);
    }
  }

  /** The replay state after the last pushed entry. */
  checkpoint(): VerifyCheckpoint {
    const scopes: ScopeCheckpoint[] = [];
    for (const [tenant, byName] of this.#scopes) {
      for (const [name, s] of byName) {
        const records: RecordCheckpoint[] = [];
        for (const [record, revision] of s.records) records.push([record, revision]);
        scopes.push([
          tenant,
          name,
          s.fence,
          s.holder,
          s.leaseExpiresAt,
          s.deleted ? 'deleted' : 'active',
          s.policyVersion,
          s.cutoverFence,
          records,
        ]);
      }
    }
    const delivered: DeliveredCheckpoint[] = [];
    for (const [tenant, keys] of this.#delivered) {
      for (const [effectKey, seq] of keys) delivered.push([tenant, effectKey, seq]);
    }
    return {
      version: CHECKPOINT_VERSION,
      tenant: this.#tenant,
      lastSeq: this.lastSeq,
      checked: this.#totalChecked,
      violations: this.#totalViolations,
      scopes,
      delivered,
      attempts: this.#attempts.checkpoint(),
    };
  }

  /** Reports a transition accepted on a deleted scope; true when it did. */
  #reportIfDeleted(
    entry: AuditEntry,
    scope: ScopeTrack,
    what = `a ${entry.kind} was accepted`,
  ): boolean {
    if (!scope.deleted) return false;
    this.#report(
      entry,
      'accepted_on_deleted_scope',
      'active',
      'deleted',
      `${what} on a deleted scope`,
    );
    return true;
  }

  // --- entry kinds ---------------------------------------------------------------------------

  #acquire(entry: AuditEntry, scope: ScopeTrack): void {
    if (
      !this.#reportIfDeleted(entry, scope, 'an acquire was granted') &&
      scope.holder !== null &&
      scope.holder !== entry.holder &&
      (scope.leaseExpiresAt === null || scope.leaseExpiresAt > entry.at)
    ) {
      this.#report(
        entry,
        'acquire_over_live_lease',
        scope.holder,
        entry.holder,
        `acquire by ${entry.holder ?? 'null'} was granted while ${scope.holder} held a lease until ${scope.leaseExpiresAt ?? 'no expiry'} (store time ${entry.at})`,
      );
    }
    this.#checkPolicyKept(entry, scope);
    this.#moveFence(entry, scope);
    this.#grant(entry, scope);
  }

  #reacquire(entry: AuditEntry, scope: ScopeTrack): void {
    this.#reportIfDeleted(entry, scope, 'an acquire was answered');
    if (scope.holder !== entry.holder) {
      this.#report(
        entry,
        'holder_mismatch',
        scope.holder,
        entry.holder,
        `a reacquire returned the grant of ${entry.holder ?? 'null'} but the holder is ${scope.holder ?? 'null'}`,
      );
    }
    this.#checkPolicyKept(entry, scope);
    this.#keepFence(entry, scope);
    scope.holder = entry.holder;
    scope.leaseExpiresAt = entry.leaseExpiresAt;
  }

  #renew(entry: AuditEntry, scope: ScopeTrack): void {
    const current = this.#checkPresentedFence(entry, scope, 'stale_lease_op_accepted');
    if (
      !this.#reportIfDeleted(entry, scope) &&
      current &&
      (scope.holder === null || scope.holder !== entry.holder)
    ) {
      this.#report(
        entry,
        'lease_op_by_non_holder',
        scope.holder,
        entry.holder,
        `a renew by ${entry.holder ?? 'null'} was accepted while the holder is ${scope.holder ?? 'nobody'}`,
      );
    }
    this.#checkPolicyKept(entry, scope);
    this.#keepFence(entry, scope);
    scope.holder = entry.holder;
    scope.leaseExpiresAt = entry.leaseExpiresAt;
  }

  #release(entry: AuditEntry, scope: ScopeTrack): void {
    this.#checkPresentedFence(entry, scope, 'stale_lease_op_accepted');
    this.#reportIfDeleted(entry, scope);
    this.#keepFence(entry, scope);
    scope.holder = null;
    scope.leaseExpiresAt = null;
  }

  #takeover(entry: AuditEntry, scope: ScopeTrack, isCutover: boolean): void {
    if (!isCutover) this.#checkPolicyKept(entry, scope);
    this.#moveFence(entry, scope);
    scope.deleted = false;
    if (isCutover) {
      scope.cutoverFence = scope.fence;
      scope.policyVersion = entry.policyVersion;
    }
    this.#grant(entry, scope);
  }

  #revoke(entry: AuditEntry, scope: ScopeTrack, isDelete: boolean): void {
    this.#reportIfDeleted(entry, scope);
    this.#moveFence(entry, scope);
    recordGrant(scope, scope.fence, null);
    scope.holder = null;
    scope.leaseExpiresAt = null;
    if (isDelete) {
      scope.deleted = true;
      this.#applyWrites(entry, scope);
    }
  }

  #commit(entry: AuditEntry, scope: ScopeTrack): void {
    const current = this.#checkPresentedFence(entry, scope, 'stale_commit_accepted');
    if (!this.#reportIfDeleted(entry, scope) && current) {
      // With a stale fence the holder and lease of the current generation say nothing about the
      // commit's own authority (nor does their policy): the fence violation is the whole story.
      this.#checkLiveHolder(entry, scope);
      this.#checkPolicyKept(entry, scope);
    }
    this.#keepFence(entry, scope);
    // Dependencies first: a read of a record this commit also writes read its previous revision.
    this.#checkReads(entry, true);
    this.#applyWrites(entry, scope);
  }

  /**
   * A commit's dependency reads against the replayed revisions: an accepted commit must have read
   * every dependency at its current revision, and any commit entry must report the revision the
   * history gives it (`actual`).
   */
  #checkReads(entry: AuditEntry, accepted: boolean): void {
    const reads = entry.reads;
    if (reads === null) return;
    for (let i = 0; i < reads.length; i++) {
      const read = reads[i]!;
      const scope = this.#find(entry.tenant, read.scope);
      const known = scope?.records.get(read.name);
      if (known === undefined && scope?.forgotten === true) continue;
      const current = known ?? 0;
      const label = `${read.scope}/${read.name}`;
      if (accepted && read.expected !== current) {
        this.#report(
          entry,
          'stale_dependency_accepted',
          current,
          read.expected,
          `a commit that read dependency ${label} at revision ${read.expected} was accepted; it was at revision ${current}`,
          read.name,
        );
      } else if (read.actual !== current) {
        this.#report(
          entry,
          'dependency_mismatch',
          current,
          read.actual,
          `the entry reports dependency ${label} at revision ${read.actual}; the history has it at ${current}`,
          read.name,
        );
      }
    }
  }

  /** An accepted commit needs a holder whose lease is unexpired at the entry's store time. */
  #checkLiveHolder(entry: AuditEntry, scope: ScopeTrack): void {
    if (scope.holder === null) {
      this.#report(
        entry,
        'commit_without_holder',
        'a holder',
        null,
        `a commit at fence ${entry.fence ?? 'null'} was accepted while the scope had no holder`,
      );
      return;
    }
    if (scope.leaseExpiresAt !== null && scope.leaseExpiresAt <= entry.at) {
      this.#report(
        entry,
        'commit_after_lease_expiry',
        scope.leaseExpiresAt,
        entry.at,
        `a commit was accepted at store time ${entry.at}; the lease of ${scope.holder} expired at ${scope.leaseExpiresAt}`,
      );
    }
    if (entry.holder !== null && entry.holder !== scope.holder) {
      this.#report(
        entry,
        'holder_mismatch',
        scope.holder,
        entry.holder,
        `the commit names holder ${entry.holder}; the scope's holder is ${scope.holder}`,
      );
    }
  }

  #rejected(entry: AuditEntry, scopeName: string): void {
    // A rejection changes nothing; it only has to agree with the fence in force (and with the
    // revisions of the dependencies it names).
    if (entry.kind === 'commit') this.#checkReads(entry, false);
    const current = entry.currentFence;
    if (current === null) return;
    const scope = this.#find(entry.tenant, scopeName);
    if (entry.kind === 'commit') this.#checkFenceHolder(entry, scope);
    const fence = scope === undefined ? 0 : scope.fence;
    if (current === fence) return;
    if (current < fence) {
      this.#report(
        entry,
        'fence_regressed',
        fence,
        current,
        `a rejection reports fence ${current}; the scope is at ${fence}`,
      );
    } else {
      this.#report(
        entry,
        'fence_mismatch',
        fence,
        current,
        `a rejection reports fence ${current}; no grant or revocation moved the scope past ${fence}`,
      );
    }
    (scope ?? this.#track(entry.tenant, scopeName)).fence = current;
  }

  #intent(entry: AuditEntry): void {
    const outcome = entry.outcome;
    if (!INTENT_OUTCOMES.has(outcome)) {
      this.#badOutcome(entry);
      return;
    }
    const effectKey = entry.effectKey;
    if (outcome === 'rejected' || outcome === 'cancelled') return;
    if (effectKey === null) {
      this.#malformed(entry, `a ${outcome} intent entry names no effectKey`);
      return;
    }
    if (outcome === 'claimed') {
      if (entry.fence === null) this.#malformed(entry, 'a claimed intent entry has no claim fence');
      else this.#attempts.claimed(entry, effectKey, entry.fence);
      return;
    }
    // A pending entry without a claim fence is the intent's creation by its commit; with one, a
    // retryable failure returning it to pending. Every other outcome ends an attempt.
    if (outcome === 'pending' && entry.fence === null) {
      this.#attempts.created(entry, effectKey);
      return;
    }
    const completion = this.#attempts.completed(entry, effectKey, entry.fence);
    if (!completion.ok) {
      this.#report(
        entry,
        'delivery_without_attempt',
        completion.expectedClaimFence,
        entry.fence,
        completion.message,
        undefined,
        effectKey,
      );
    }
    if (outcome !== 'delivered') return;
    let keys = this.#delivered.get(entry.tenant);
    if (keys === undefined) {
      keys = new Map();
      this.#delivered.set(entry.tenant, keys);
    }
    const earlier = keys.get(effectKey);
    if (earlier !== undefined) {
      this.#report(
        entry,
        'effect_delivered_twice',
        null,
        earlier,
        `effect ${effectKey} was delivered again; it was delivered at seq ${earlier}`,
        undefined,
        effectKey,
      );
      return;
    }
    keys.set(effectKey, entry.seq);
    if (++this.#deliveredCount > this.#maxDelivered) {
      // Maps keep insertion order: the first key is this tenant's oldest delivery.
      keys.delete(keys.keys().next().value!);
      this.#deliveredCount--;
    }
  }

  // --- shared checks -------------------------------------------------------------------------

  /** Grants and revocations: the fence must rise above every fence the scope had. */
  #moveFence(entry: AuditEntry, scope: ScopeTrack): void {
    const next = entry.currentFence;
    if (next === null) {
      this.#malformed(entry, `a ${entry.kind} entry has no currentFence`);
      return;
    }
    const previous = scope.fence;
    if (next === previous) {
      this.#report(
        entry,
        'fence_repeated',
        previous + 1,
        next,
        `a ${entry.kind} issued fence ${next} again`,
      );
    } else if (next < previous) {
      this.#report(
        entry,
        'fence_regressed',
        previous + 1,
        next,
        `a ${entry.kind} moved the fence from ${previous} back to ${next}`,
      );
    }
    scope.fence = next;
  }

  /** Entries that may not move the fence. */
  #keepFence(entry: AuditEntry, scope: ScopeTrack): void {
    const current = entry.currentFence;
    if (current === null || current === scope.fence) return;
    if (current < scope.fence) {
      this.#report(
        entry,
        'fence_regressed',
        scope.fence,
        current,
        `a ${entry.kind} reports fence ${current}; the scope is at ${scope.fence}`,
      );
    } else {
      this.#report(
        entry,
        'fence_mismatch',
        scope.fence,
        current,
        `a ${entry.kind} reports fence ${current}; no grant or revocation moved the scope past ${scope.fence}`,
      );
    }
    scope.fence = current;
  }

  /**
   * Commit, renew and release are conditional on the presented fence being the current one.
   * true when it was.
   */
  #checkPresentedFence(entry: AuditEntry, scope: ScopeTrack, kind: ViolationKind): boolean {
    const presented = entry.fence;
    if (presented === null) {
      this.#malformed(entry, `an accepted ${entry.kind} has no presented fence`);
      return false;
    }
    if (presented === scope.fence) return true;
    if (presented < scope.cutoverFence) {
      this.#report(
        entry,
        'stale_accepted_after_cutover',
        scope.fence,
        presented,
        `a ${entry.kind} with fence ${presented} was accepted after the cutover to fence ${scope.cutoverFence} (current fence ${scope.fence})`,
      );
      return false;
    }
    this.#report(
      entry,
      kind,
      scope.fence,
      presented,
      `a ${entry.kind} with fence ${presented} was accepted; the current fence is ${scope.fence}`,
    );
    return false;
  }

  #checkPolicyKept(entry: AuditEntry, scope: ScopeTrack): void {
    const policy = entry.policyVersion;
    if (policy === null) return;
    if (scope.policyVersion === null) {
      // An unpinned scope takes the policy of its first grant that names one.
      if (entry.kind === 'acquire' || entry.kind === 'takeover') scope.policyVersion = policy;
      return;
    }
    if (policy !== scope.policyVersion) {
      this.#report(
        entry,
        'policy_changed_without_cutover',
        scope.policyVersion,
        policy,
        `a ${entry.kind} was accepted with policy ${policy}; the scope is pinned to ${scope.policyVersion}`,
      );
      // A commit names the policy it presented; other entries name the scope's pin after them.
      if (entry.kind !== 'commit') scope.policyVersion = policy;
    }
  }

  /** Each written record: the revision must be exactly the previous one + 1. */
  #applyWrites(entry: AuditEntry, scope: ScopeTrack): void {
    const records = entry.records;
    if (records === null) return;
    const revisions = scope.records;
    for (let i = 0; i < records.length; i++) {
      const record = records[i]!;
      const resulting = record.resulting;
      if (resulting === null) {
        this.#malformed(entry, `accepted write of ${record.name} has no resulting revision`);
        continue;
      }
      const known = revisions.get(record.name);
      if (known === undefined && scope.forgotten) {
        this.#remember(entry.tenant, entry.scope ?? '', scope, record.name, resulting);
        continue;
      }
      const previous = known ?? 0;
      if (resulting <= previous) {
        this.#report(
          entry,
          'revision_reused',
          previous + 1,
          resulting,
          `record ${record.name} got revision ${resulting} again; it was already at ${previous}`,
          record.name,
        );
      } else if (resulting > previous + 1) {
        this.#report(
          entry,
          'revision_skipped',
          previous + 1,
          resulting,
          `record ${record.name} went from revision ${previous} to ${resulting}`,
          record.name,
        );
      } else if (record.expected !== previous) {
        this.#report(
          entry,
          'stale_write_accepted',
          previous,
          record.expected,
          `a write of ${record.name} expecting revision ${record.expected} was accepted; the record was at ${previous}`,
          record.name,
        );
      }
      this.#remember(entry.tenant, entry.scope ?? '', scope, record.name, resulting);
    }
  }

  /** Sets a record's revision; with maxRecords, forgets the record written longest ago. */
  #remember(tenant: string, scopeName: string, scope: ScopeTrack, name: string, revision: number) {
    scope.records.set(name, revision);
    if (this.#maxRecords === Number.POSITIVE_INFINITY) return;
    const key = `${tenant}\u0000${scopeName}\u0000${name}`;
    this.#recentRecords.delete(key);
    this.#recentRecords.set(key, [scope, name]);
    if (this.#recentRecords.size <= this.#maxRecords) return;
    const [oldestKey, [oldScope, oldName]] = this.#recentRecords.entries().next().value!;
    this.#recentRecords.delete(oldestKey);
    oldScope.records.delete(oldName);
    oldScope.forgotten = true;
  }

  #grant(entry: AuditEntry, scope: ScopeTrack): void {
    // A rollout's step may leave the fence it gives released, as a cancel does: granted to nobody.
    if (entry.holder === null && entry.kind !== 'cutover') {
      this.#malformed(entry, `a granted ${entry.kind} names no holder`);
    }
    scope.holder = entry.holder;
    scope.leaseExpiresAt = entry.leaseExpiresAt;
    recordGrant(scope, scope.fence, entry.holder);
  }

  /**
   * A rejected commit names the holder its presented fence was granted to: none for a fence the
   * scope never had. A fence issued before what this verifier read (before its checkpoint, or
   * in pruned entries) cannot be judged, and is not.
   */
  #checkFenceHolder(entry: AuditEntry, scope: ScopeTrack | undefined): void {
    const fence = entry.fence;
    if (fence === null) return;
    let expected = scope?.grants?.get(fence);
    // A fence issued twice was reported there (fence_repeated); its commits are not judged again.
    if (expected === false) return;
    if (expected === undefined) {
      if (fence <= (scope?.fence ?? 0)) return;
      expected = null;
    }
    if (entry.holder === expected) return;
    this.#report(
      entry,
      'fence_holder_mismatch',
      expected,
      entry.holder,
      `a rejected commit with fence ${fence} names holder ${entry.holder ?? 'null'}; the fence was granted to ${expected ?? 'nobody'}`,
    );
  }

  #badOutcome(entry: AuditEntry): void {
    this.#malformed(entry, `outcome ${entry.outcome} is not one a ${entry.kind} entry can have`);
  }

  #malformed(entry: AuditEntry, message: string): void {
    this.#report(entry, 'malformed_entry', null, null, message);
  }

  #report(
    entry: AuditEntry,
    kind: ViolationKind,
    expected: number | string | null,
    found: number | string | null,
    message: string,
    record?: string,
    effectKey?: string,
  ): void {
    this.#violationCount++;
    this.#totalViolations++;
    const kept = this.#violations.length < this.#maxViolations;
    if (!kept && this.#onViolation === undefined) return;
    const violation: Violation = {
      seq: entry.seq,
      tenant: entry.tenant,
      scope: entry.scope,
      kind,
      expected,
      found,
      message,
    };
    if (record !== undefined) violation.record = record;
    if (effectKey !== undefined) violation.effectKey = effectKey;
    if (kept) this.#violations.push(violation);
    this.#onViolation?.(violation);
  }

  // --- state ---------------------------------------------------------------------------------

  #scopesOf(tenant: string): Map<string, ScopeTrack> {
    if (tenant === this.#cachedTenant && this.#cachedScopes !== null) return this.#cachedScopes;
    let byName = this.#scopes.get(tenant);
    if (byName === undefined) {
      byName = new Map();
      this.#scopes.set(tenant, byName);
    }
    this.#cachedTenant = tenant;
    this.#cachedScopes = byName;
    return byName;
  }

  #track(tenant: string, name: string): ScopeTrack {
    const byName = this.#scopesOf(tenant);
    let scope = byName.get(name);
    if (scope === undefined) {
      scope = new ScopeTrack();
      byName.set(name, scope);
    }
    return scope;
  }

  #find(tenant: string, name: string): ScopeTrack | undefined {
    return this.#scopesOf(tenant).get(name);
  }

  #restore(checkpoint: VerifyCheckpoint): void {
    this.#lastSeq = checkpoint.lastSeq ?? Number.NEGATIVE_INFINITY;
    this.#totalChecked = checkpoint.checked;
    this.#totalViolations = checkpoint.violations;
    for (const [
      tenant,
      name,
      fence,
      holder,
      leaseExpiresAt,
      status,
      policyVersion,
      cutoverFence,
      records,
    ] of checkpoint.scopes) {
      const scope = this.#track(tenant, name);
      scope.fence = fence;
      scope.holder = holder;
      scope.leaseExpiresAt = leaseExpiresAt;
      scope.deleted = status === 'deleted';
      scope.policyVersion = policyVersion;
      scope.cutoverFence = cutoverFence;
      // Whom the current fence went to, when the scope still has that holder.
      if (holder !== null) recordGrant(scope, fence, holder);
      for (const [record, revision] of records)
        this.#remember(tenant, name, scope, record, revision);
    }
    this.#attempts.restore(checkpoint.attempts ?? []);
    for (const [tenant, effectKey, seq] of checkpoint.delivered) {
      let keys = this.#delivered.get(tenant);
      if (keys === undefined) {
        keys = new Map();
        this.#delivered.set(tenant, keys);
      }
      keys.set(effectKey, seq);
      this.#deliveredCount++;
    }
  }
}

/**
 * Grants remembered per scope, newest first kept: a long-lived verifier's memory does not grow
 * with every grant ever issued; a commit presenting an older fence is not judged.
 */
export const GRANTS_KEPT_PER_SCOPE = 64;

function recordGrant(scope: ScopeTrack, fence: number, holder: string | null): void {
  const grants = (scope.grants ??= new Map<number, string | null | false>());
  grants.set(fence, grants.has(fence) && grants.get(fence) !== holder ? false : holder);
  // Maps keep insertion order: the first key is the oldest fence remembered.
  if (grants.size > GRANTS_KEPT_PER_SCOPE) grants.delete(grants.keys().next().value!);
}
