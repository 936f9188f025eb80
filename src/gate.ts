/**
 * Fencegate: the library facade. Validates input with the shared core rules, then calls the store,
 * which decides everything about authority inside its own transaction.
 */
import { randomUUID } from 'node:crypto';
import type { FencegateApi, FencegateOpsApi } from './api.js';
import type { Clock } from './core/clock.js';
import { DEFAULT_LIMITS, type Limits } from './core/limits.js';
import {
  requireName,
  requireTenant,
  validateAcquire,
  validateCommit,
  validateListIntents,
  validateListScopes,
  validateReason,
  validateRelease,
  validateRenew,
  validateTakeover,
} from './core/validate.js';
import { validateAuditQuery } from './core/validate-audit.js';
import { openStore } from './store/open.js';
import type { DispatchCutoverStore, FullStore, Store } from './store/store.js';
import { buildCutoverReport } from './cutover/report.js';
import {
  validateClaim,
  validateComplete,
  validateCutover,
  validateJobEvents,
  validatePolicy,
} from './core/validate-ops.js';
import { FencegateError } from './errors.js';
import type {
  AcquireRequest,
  AuditPage,
  AuditQuery,
  CancelRequest,
  CancelResult,
  ClaimIntentsRequest,
  CommitRequest,
  CommitResult,
  CompleteIntentRequest,
  CutoverReport,
  CutoverRequest,
  CutoverResult,
  DeleteScopeResult,
  Grant,
  Intent,
  JobEvent,
  ListIntentsQuery,
  ListScopesQuery,
  Page,
  Policy,
  RecordState,
  RegisterPolicyRequest,
  ReleaseRequest,
  ReleaseResult,
  RenewRequest,
  ScopeState,
  TakeoverRequest,
} from './types.js';

export const DEFAULT_TENANT = 'default';

export interface FencegateOptions {
  /** A store URL (`sqlite:PATH`, `sqlite::memory:`, `postgres://…`) or an opened Store. */
  store: string | Store;
  /** Store time for stores that use the host's clock (SQLite); tests pass a ManualClock. */
  clock?: Clock;
  /** The tenant this handle acts for; `forTenant` gives handles for others. */
  tenant?: string;
  limits?: Limits;
}

export class Fencegate implements FencegateApi, FencegateOpsApi {
  readonly store: Store;
  readonly tenant: string;
  readonly limits: Limits;
  readonly #ownsStore: boolean;

  private constructor(store: Store, tenant: string, limits: Limits, ownsStore: boolean) {
    this.store = store;
    this.tenant = requireTenant(tenant);
    this.limits = limits;
    this.#ownsStore = ownsStore;
  }

  static async open(options: FencegateOptions): Promise<Fencegate> {
    const limits = options.limits ?? DEFAULT_LIMITS;
    const tenant = options.tenant ?? DEFAULT_TENANT;
    if (typeof options.store !== 'string') {
      return new Fencegate(options.store, tenant, limits, true);
    }
    const store = await openStore(
      options.store,
      options.clock === undefined ? {} : { clock: options.clock },
    );
    return new Fencegate(store, tenant, limits, true);
  }

  /** A handle for another tenant on the same store; closing it leaves the store open. */
  forTenant(tenant: string): Fencegate {
    return new Fencegate(this.store, tenant, this.limits, false);
  }

  acquire(request: AcquireRequest): Promise<Grant> {
    return this.store.acquire(this.tenant, validateAcquire(request, this.limits));
  }

  renew(request: RenewRequest): Promise<Grant> {
    return this.store.renew(this.tenant, validateRenew(request, this.limits));
  }

  release(request: ReleaseRequest): Promise<ReleaseResult> {
    return this.store.release(this.tenant, validateRelease(request));
  }

  takeover(scope: string, request: TakeoverRequest): Promise<Grant> {
    return this.store.takeover(
      this.tenant,
      requireName(scope, 'scope'),
      validateTakeover(request, this.limits),
    );
  }

  cancel(scope: string, request: CancelRequest = {}): Promise<CancelResult> {
    return this.store.cancel(this.tenant, requireName(scope, 'scope'), validateReason(request));
  }

  deleteScope(scope: string, request: CancelRequest = {}): Promise<DeleteScopeResult> {
    return this.store.deleteScope(
      this.tenant,
      requireName(scope, 'scope'),
      validateReason(request),
    );
  }

  getScope(scope: string): Promise<ScopeState | null> {
    return this.store.getScope(this.tenant, requireName(scope, 'scope'));
  }

  listScopes(query: ListScopesQuery = {}): Promise<Page<ScopeState>> {
    return this.store.listScopes(this.tenant, validateListScopes(query, this.limits));
  }

  getRecord(scope: string, name: string): Promise<RecordState> {
    return this.store.getRecord(
      this.tenant,
      requireName(scope, 'scope'),
      requireName(name, 'name'),
    );
  }

  listRecords(scope: string): Promise<RecordState[]> {
    return this.store.listRecords(this.tenant, requireName(scope, 'scope'));
  }

  commit(request: CommitRequest): Promise<CommitResult> {
    return this.store.commit(this.tenant, validateCommit(request, this.limits));
  }

  getOperation(operationId: string): Promise<CommitResult | null> {
    return this.store.getOperation(this.tenant, requireName(operationId, 'operationId'));
  }

  listIntents(query: ListIntentsQuery = {}): Promise<Page<Intent>> {
    return this.store.listIntents(this.tenant, validateListIntents(query, this.limits));
  }

  getIntent(effectKey: string): Promise<Intent | null> {
    return this.store.getIntent(this.tenant, requireName(effectKey, 'effectKey'));
  }

  audit(query: AuditQuery = {}): Promise<AuditPage> {
    return this.store.readAudit(this.tenant, validateAuditQuery(query, this.limits));
  }

  /** The store's dispatch and cutover half; every adapter of this release has it except PostgreSQL. */
  #ops(): FullStore {
    if (!isFullStore(this.store)) {
      throw new FencegateError(
        'invalid_request',
        `the ${this.store.kind} store does not support dispatch, policies and cutovers yet`,
      );
    }
    return this.store;
  }

  claimIntents(request: ClaimIntentsRequest): Promise<Intent[]> {
    return this.#ops().claimIntents(this.tenant, validateClaim(request, this.limits));
  }

  completeIntent(effectKey: string, request: CompleteIntentRequest): Promise<Intent> {
    return this.#ops().completeIntent(
      this.tenant,
      requireName(effectKey, 'effectKey'),
      validateComplete(request),
    );
  }

  registerPolicy(
    request: RegisterPolicyRequest,
    registeredBy: string | null = null,
  ): Promise<{ policy: Policy; created: boolean }> {
    return this.#ops().registerPolicy(this.tenant, validatePolicy(request), registeredBy);
  }

  listPolicies(): Promise<Policy[]> {
    return this.#ops().listPolicies(this.tenant);
  }

  cutover(request: CutoverRequest): Promise<CutoverResult> {
    const valid = validateCutover(request, this.limits);
    return this.#ops().cutover(this.tenant, {
      ...valid,
      cutoverId: valid.cutoverId ?? randomUUID(),
    });
  }

  cutoverReport(cutoverId: string): Promise<CutoverReport | null> {
    return buildCutoverReport(this.#ops(), this.tenant, requireName(cutoverId, 'cutoverId'));
  }

  recordJobEvents(events: JobEvent[]): Promise<void> {
    return this.#ops().recordJobEvents(this.tenant, validateJobEvents({ events }));
  }

  async close(): Promise<void> {
    if (this.#ownsStore) await this.store.close();
  }
}

function isFullStore(store: Store): store is FullStore {
  return typeof (store as Partial<DispatchCutoverStore>).cutover === 'function';
}
