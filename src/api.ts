/**
 * FencegateApi: the tenant-bound surface shared by the library (Fencegate) and the HTTP client
 * (FencegateClient). Code written against it runs unchanged in-process or over the wire.
 */
import type {
  CancelIntentsRequest,
  CancelIntentsResult,
  AbandonRequest,
  AcquireRequest,
  AuditPage,
  AuditQuery,
  CancelRequest,
  CancelResult,
  ClaimIntentsRequest,
  CommitItemResult,
  CommitRequest,
  CommitResult,
  CompleteIntentRequest,
  CutoverReport,
  CutoverRequest,
  CutoverResult,
  CutoverSummary,
  DeleteScopeResult,
  Grant,
  Intent,
  JobEvent,
  ListCutoversQuery,
  ListIntentsQuery,
  ListRecordsQuery,
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
import type { Violation } from './audit/violations.js';

export interface FencegateApi {
  acquire(request: AcquireRequest): Promise<Grant>;
  renew(request: RenewRequest): Promise<Grant>;
  release(request: ReleaseRequest): Promise<ReleaseResult>;
  /**
   * The holder cancels the pending intents the runs it superseded committed: those under fences
   * from `committedFrom` up to its own, one page of at most 50 of them (from `request.cursor`, the
   * first when absent) in one store transaction; `nextCursor` names the next page, null after the
   * last. Its fence and lease stay. A page sent again answers the same.
   */
  cancelIntents(request: CancelIntentsRequest): Promise<CancelIntentsResult>;
  /**
   * `cancelIntents` page after page until the last: the effect keys every page cancelled, in key
   * order. Each page is its own call; one cut short by an error is redone by calling again.
   */
  cancelAllIntents(request: CancelIntentsRequest): Promise<string[]>;
  /** Operator. */
  takeover(scope: string, request: TakeoverRequest): Promise<Grant>;
  /**
   * Operator: fence + 1 and no holder in one transaction, then the scope's pending intents
   * cancelled page by page, each page a transaction; answers once all are.
   */
  cancel(scope: string, request?: CancelRequest): Promise<CancelResult>;
  /** Operator. */
  deleteScope(scope: string, request?: CancelRequest): Promise<DeleteScopeResult>;

  /** null when the scope was never created. */
  getScope(scope: string): Promise<ScopeState | null>;
  listScopes(query?: ListScopesQuery): Promise<Page<ScopeState>>;
  getRecord(scope: string, name: string): Promise<RecordState>;
  listRecords(scope: string): Promise<RecordState[]>;
  /** One page of the scope's records in name or revision order; never reads the whole scope. */
  listRecordsPage(scope: string, query?: ListRecordsQuery): Promise<Page<RecordState>>;

  /** Returns the committed or rejected outcome; throws only for errors outside the check order. */
  commit(request: CommitRequest): Promise<CommitResult>;
  /**
   * Up to 64 commits, each answered in order as `commit` would answer it alone: its outcome, or
   * the error it alone would throw. A repeated operationId is answered as a retry of the earlier.
   */
  commitMany(requests: readonly CommitRequest[]): Promise<CommitItemResult[]>;
  /**
   * null when the operation is absent: nothing has happened *yet* (a commit with that id may still
   * be in flight); the operationId may be retried, but absent does not mean "did not happen".
   */
  getOperation(operationId: string): Promise<CommitResult | null>;
  /**
   * Settles an operation: its stored outcome, or else the stored rejection operation_abandoned,
   * after which no commit with that operationId ever applies. The way to conclude "not applied".
   */
  abandonOperation(operationId: string, request?: AbandonRequest): Promise<CommitResult>;

  listIntents(query?: ListIntentsQuery): Promise<Page<Intent>>;
  getIntent(effectKey: string): Promise<Intent | null>;

  /** Operator: this tenant's audit entries in seq order. */
  audit(query?: AuditQuery): Promise<AuditPage>;
  /** Operator: replays this tenant's audit log and reports every broken invariant. */
  verify(): Promise<VerifyReport>;

  close(): Promise<void>;
}

/**
 * Dispatch, policies, cutovers and the jobs ledger: the operator and dispatcher surface, shared by
 * Fencegate and the HTTP client like FencegateApi.
 */
export interface FencegateOpsApi {
  /** Dispatcher: claims due intents under a claim fence and lease. */
  claimIntents(request: ClaimIntentsRequest): Promise<Intent[]>;
  /** Dispatcher: records a delivery outcome; throws stale_claim for a claim that is not current. */
  completeIntent(effectKey: string, request: CompleteIntentRequest): Promise<Intent>;
  /** Operator: registers an immutable policy version; `created` is false for the same one again. */
  registerPolicy(request: RegisterPolicyRequest): Promise<{ policy: Policy; created: boolean }>;
  listPolicies(): Promise<Policy[]>;
  /** Operator: moves scopes to a policy and controller; idempotent and resumable by cutoverId. */
  cutover(request: CutoverRequest): Promise<CutoverResult>;
  /** Operator: the drain-and-reconcile report; null for an unknown cutoverId. */
  cutoverReport(cutoverId: string): Promise<CutoverReport | null>;
  /** Operator: the tenant's cutovers, newest first, with how many scopes each has moved. */
  listCutovers(query?: ListCutoversQuery): Promise<Page<CutoverSummary>>;
  /** Worker: job lifecycle events from queues and workers. */
  recordJobEvents(events: JobEvent[]): Promise<void>;
}

/** The answer of verify over any entry point: `GET /v1/verify`, `fencegate verify`, the library. */
export interface VerifyReport {
  ok: boolean;
  checked: number;
  violations: Violation[];
}
