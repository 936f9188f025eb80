/**
 * FencegateApi: the tenant-bound surface shared by the library (Fencegate) and the HTTP client
 * (FencegateClient). Code written against it runs unchanged in-process or over the wire.
 */
import type {
  AcquireRequest,
  AuditPage,
  AuditQuery,
  CancelRequest,
  CancelResult,
  CommitRequest,
  CommitResult,
  DeleteScopeResult,
  Grant,
  Intent,
  ListIntentsQuery,
  ListScopesQuery,
  Page,
  RecordState,
  ReleaseRequest,
  ReleaseResult,
  RenewRequest,
  ScopeState,
  TakeoverRequest,
} from './types.js';

export interface FencegateApi {
  acquire(request: AcquireRequest): Promise<Grant>;
  renew(request: RenewRequest): Promise<Grant>;
  release(request: ReleaseRequest): Promise<ReleaseResult>;
  /** Operator. */
  takeover(scope: string, request: TakeoverRequest): Promise<Grant>;
  /** Operator. */
  cancel(scope: string, request?: CancelRequest): Promise<CancelResult>;
  /** Operator. */
  deleteScope(scope: string, request?: CancelRequest): Promise<DeleteScopeResult>;

  /** null when the scope was never created. */
  getScope(scope: string): Promise<ScopeState | null>;
  listScopes(query?: ListScopesQuery): Promise<Page<ScopeState>>;
  getRecord(scope: string, name: string): Promise<RecordState>;
  listRecords(scope: string): Promise<RecordState[]>;

  /** Returns the committed or rejected outcome; throws only for errors outside the check order. */
  commit(request: CommitRequest): Promise<CommitResult>;
  /** null when the operation is absent: nothing happened and the operationId may be retried. */
  getOperation(operationId: string): Promise<CommitResult | null>;

  listIntents(query?: ListIntentsQuery): Promise<Page<Intent>>;
  getIntent(effectKey: string): Promise<Intent | null>;

  /** Operator: this tenant's audit entries in seq order. */
  audit(query?: AuditQuery): Promise<AuditPage>;

  close(): Promise<void>;
}
