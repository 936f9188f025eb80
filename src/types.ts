/**
 * Request and answer shapes shared by the library, the Store interface, the HTTP server and the
 * client. They mirror HTTP-API.md field for field so each layer above the store stays thin.
 * Times are milliseconds since the epoch, by the store's clock.
 */
import type { CommitRejectionCode, ErrorDetails, FencegateError } from './errors.js';

export type ScopeStatus = 'active' | 'deleted';

export interface Grant {
  scope: string;
  fence: number;
  holder: string;
  /** null when the grant has no expiry (a cutover controller or a takeover without ttlMs). */
  leaseExpiresAt: number | null;
  policyVersion: string | null;
  /** true when the same holder's live grant was returned again (a lost reply retried). */
  reacquired: boolean;
}

export interface CutoverRecord {
  cutoverId: string;
  toPolicy: string;
  holder: string;
  status: 'running' | 'completed';
  startedAt: number;
  completedAt: number | null;
  /** The last audit seq before the cutover's first step: later entries happened after it began. */
  startSeq: number;
  /** The fence each scope got; scopes not yet moved (an interrupted cutover) are absent. */
  fences: { scope: string; fence: number }[];
  /** How many scopes the cutover covers, moved or not. */
  planned: number;
  /** Scopes its step found deleted and left as they were (only a takeover re-creates a scope). */
  skipped: string[];
}

export interface JobRecord {
  jobId: string;
  scope: string;
  policyVersion: string;
  fence: number;
  state: JobState;
  attempt: number;
  at: number;
}

export interface ScopeState {
  scope: string;
  fence: number;
  holder: string | null;
  leaseExpiresAt: number | null;
  policyVersion: string | null;
  status: ScopeStatus;
  updatedAt: number;
}

export interface RecordState {
  scope: string;
  name: string;
  exists: boolean;
  /** The JSON value, or null when the record does not exist. */
  value: unknown;
  /** 0 = never existed; for a tombstone, the revision of its deletion. */
  revision: number;
  /** The revision at which the current (or last) lifetime began; 0 = never existed. */
  incarnation: number;
  fingerprint: string | null;
  updatedAt: number | null;
}

export interface AcquireRequest {
  scope: string;
  holder: string;
  ttlMs: number;
  policyVersion?: string;
  /**
   * The policy versions this worker can run, instead of one `policyVersion`: the grant's
   * `policyVersion` says which one applies (a scope under a rollout is pinned by the rollout).
   */
  policyVersions?: string[];
  /** Job lifecycle states to record with the grant, in its transaction (see LeaseJobEvents). */
  job?: LeaseJobEvents;
}

export interface RenewRequest {
  scope: string;
  holder: string;
  fence: number;
  ttlMs: number;
}

export interface ReleaseRequest {
  scope: string;
  holder: string;
  fence: number;
  /** Job lifecycle states to record with the release, in its transaction (see LeaseJobEvents). */
  job?: LeaseJobEvents;
}

export interface ReleaseResult {
  released: true;
  alreadyReleased: boolean;
}

export interface TakeoverRequest {
  holder: string;
  ttlMs?: number;
  policyVersion?: string;
  reason?: string;
}

export interface CancelRequest {
  reason?: string;
}

/** abandonOperation's body: why the caller gives the operation up (audited with it). */
export interface AbandonRequest {
  reason?: string;
}

export interface CancelResult {
  fence: number;
  cancelledIntents: number;
}

/**
 * The scope's holder cancels the pending (unclaimed) intents committed under a fence from
 * `committedFrom` up to, not including, its own: the intents of runs it superseded.
 */
export interface CancelIntentsRequest {
  scope: string;
  holder: string;
  /** The caller's fence: the scope's current one. */
  fence: number;
  committedFrom: number;
  reason?: string;
  /** The `nextCursor` of the page before; absent for the first page. */
  cursor?: string;
}

/**
 * One page of the range (core/cancel-intents-page.ts): at most CANCEL_INTENTS_PAGE of its
 * intents, in effect-key order, looked at and their pending ones cancelled in one transaction.
 */
export interface CancelIntentsResult {
  /** The effect keys of the page's intents now cancelled (by it or before), in key order. */
  cancelled: string[];
  /** Where the next page starts; null when this page ends the range. */
  nextCursor: string | null;
}

export interface DeleteScopeResult {
  fence: number;
}

export interface ReadDependency {
  /** Defaults to the commit's scope. */
  scope?: string;
  name: string;
  revision: number;
}

export interface ValueWrite {
  name: string;
  expectRevision: number;
  value: unknown;
}

export interface DeleteWrite {
  name: string;
  expectRevision: number;
  delete: true;
}

export type WriteRequest = ValueWrite | DeleteWrite;

export interface IntentRequest {
  effectKey: string;
  target: string;
  payload: unknown;
}

export interface CommitRequest {
  scope: string;
  fence: number;
  operationId: string;
  taskId?: string;
  policyVersion?: string;
  reads?: ReadDependency[];
  writes?: WriteRequest[];
  intents?: IntentRequest[];
  /**
   * The run's last commit: when it commits, the same transaction releases the lease, as a release
   * with the commit's fence would (the fence stays; the next grant moves it).
   */
  release?: true;
  /** With `release`: job lifecycle states recorded with the release (see LeaseJobEvents). */
  job?: LeaseJobEvents;
}

export interface CommittedRecord {
  name: string;
  revision: number;
  incarnation: number;
  /** null for a delete. */
  fingerprint: string | null;
}

export interface CommittedIntent {
  effectKey: string;
  status: IntentStatus;
}

export interface CommitCommitted {
  outcome: 'committed';
  operationId: string;
  scope: string;
  fence: number;
  records: CommittedRecord[];
  intents: CommittedIntent[];
  replayed: boolean;
}

export interface CommitRejection {
  code: CommitRejectionCode;
  message: string;
  details: ErrorDetails;
}

export interface CommitRejected {
  outcome: 'rejected';
  operationId: string;
  replayed: boolean;
  error: CommitRejection;
}

export type CommitResult = CommitCommitted | CommitRejected;

/**
 * One commit's answer in a batch (`commitMany`): its outcome, committed or rejected, or the error
 * its commit alone would have thrown (invalid_request, operation_id_conflict, outcome_unknown, …).
 */
export type CommitItemResult =
  { ok: true; result: CommitResult } | { ok: false; error: FencegateError };

export type IntentStatus =
  'pending' | 'claimed' | 'delivered' | 'failed' | 'unknown' | 'cancelled' | 'needs_attention';

export const INTENT_STATUSES: readonly IntentStatus[] = [
  'pending',
  'claimed',
  'delivered',
  'failed',
  'unknown',
  'cancelled',
  'needs_attention',
];

export interface Intent {
  effectKey: string;
  scope: string;
  target: string;
  payload: unknown;
  status: IntentStatus;
  attempts: number;
  /** The scope fence of the commit that created the intent. */
  fence: number;
  operationId: string;
  claimFence: number;
  providerRef: string | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
  /** Deliveries that ended without a verdict (timeouts); reconciliation reads it. */
  unknownOutcomes: number;
  /** Who holds the current claim, and until when (null unless `claimed`). */
  claimedBy: string | null;
  claimExpiresAt: number | null;
  /** When a pending intent is due (backoff after a retryable failure). */
  nextAttemptAt: number | null;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface ListScopesQuery {
  prefix?: string;
  limit?: number;
  cursor?: string;
}

export interface ListIntentsQuery {
  scope?: string;
  status?: IntentStatus;
  limit?: number;
  cursor?: string;
}

export type AuditKind =
  | 'acquire'
  | 'renew'
  | 'release'
  | 'takeover'
  | 'cancel'
  | 'delete'
  | 'commit'
  | 'cutover'
  | 'intent';

export const AUDIT_KINDS: readonly AuditKind[] = [
  'acquire',
  'renew',
  'release',
  'takeover',
  'cancel',
  'delete',
  'commit',
  'cutover',
  'intent',
];

/**
 * 'granted' for an authority grant (acquire, takeover, cutover), 'ok' for other accepted
 * transitions, 'committed' for an accepted commit, 'rejected' for any refusal; intent entries
 * carry the intent's new status.
 */
export type AuditOutcome = 'granted' | 'ok' | 'committed' | 'rejected' | IntentStatus;

/** One written record inside a commit's audit entry. Never the value itself. */
export interface AuditRecordChange {
  name: string;
  expected: number;
  actual: number;
  /** null when the commit was rejected. */
  resulting: number | null;
  fingerprint: string | null;
  deleted: boolean;
}

export interface AuditEntry {
  seq: number;
  at: number;
  tenant: string;
  scope: string | null;
  kind: AuditKind;
  outcome: AuditOutcome;
  /** The rejection code, or a free-text reason given by an operator. */
  reason: string | null;
  taskId: string | null;
  operationId: string | null;
  holder: string | null;
  policyVersion: string | null;
  /** The fence the caller presented (commit, renew, release). */
  fence: number | null;
  /** The scope's fence after the operation (before it, for a rejection). */
  currentFence: number | null;
  /** The lease expiry in force after the operation. */
  leaseExpiresAt: number | null;
  records: AuditRecordChange[] | null;
  effectKey: string | null;
  /** A commit's dependency reads as checked; null for other entries and commits without reads. */
  reads: AuditReadCheck[] | null;
  /**
   * The id of the token whose request wrote the entry (a lease operation, a takeover, cancel or
   * delete, a cutover step, a commit); absent for a request made in process and in entries
   * written before entries named their token, so their hashes stay as they were.
   */
  tokenId?: string;
}

/** One dependency read of a commit: the revision the caller read, and the record's at the check. */
export interface AuditReadCheck {
  scope: string;
  name: string;
  expected: number;
  actual: number;
}

export interface AuditQuery {
  scope?: string;
  kind?: AuditKind;
  outcome?: AuditOutcome;
  afterSeq?: number;
  limit?: number;
}

export interface AuditPage {
  items: AuditEntry[];
  nextAfterSeq: number | null;
}

export type TokenRole = 'worker' | 'operator';

export interface TokenRecord {
  id: string;
  tenant: string;
  role: TokenRole;
  label: string | null;
  /** sha256 hex of the token; the token itself is never stored. */
  hash: string;
  /** Scope prefixes a worker token may take over (core/take-over-right.ts); absent for none. */
  mayTakeOver?: string[];
  createdAt: number;
}

export interface ClaimIntentsRequest {
  /** Who claims: recorded on the intent and in the audit log. */
  dispatcher: string;
  /** How long the claim is exclusive; after it, another dispatcher may claim the intent again. */
  ttlMs: number;
  limit: number;
  /** Only intents for these targets; all targets when absent. */
  targets?: string[];
}

/**
 * The outcome a dispatcher reports for a claimed intent. `failed` with `retryable: true` returns
 * the intent to `pending` after `retryAfterMs`; `unknown` marks it for reconciliation;
 * `needs_attention` ends reconciliation without a verdict (an extension of the wire contract).
 */
export interface CompleteIntentRequest {
  claimFence: number;
  outcome: 'delivered' | 'failed' | 'unknown' | 'needs_attention';
  retryable?: boolean;
  retryAfterMs?: number;
  providerRef?: string;
  error?: string;
  /**
   * Why the intent was not attempted, recorded as the audit entry's reason: `target_not_allowed`
   * (its tenant may not use its target). Only with outcome `failed`, not retryable.
   */
  code?: IntentCompletionCode;
}

export type IntentCompletionCode = 'target_not_allowed';

/** One completion of a batch (`completeIntents`): the intent's effect key and its completion. */
export interface IntentCompletion extends CompleteIntentRequest {
  effectKey: string;
}

/** What one completion of a batch came to: the intent as recorded, or that completion's refusal. */
export type IntentCompletionResult =
  { ok: true; intent: Intent } | { ok: false; error: FencegateError };

/** What `completeAndClaim` came to: each completion's answer, in order, and the claim's. */
export interface CompleteAndClaimResult {
  completions: IntentCompletionResult[];
  claim: { ok: true; intents: Intent[] } | { ok: false; error: FencegateError };
}

export interface Policy {
  version: string;
  digest: string | null;
  description: string | null;
  registeredBy: string | null;
  registeredAt: number;
}

export interface RegisterPolicyRequest {
  version: string;
  digest?: string;
  description?: string;
}

export interface CutoverRequest {
  /** Makes the cutover idempotent and resumable; generated when absent. */
  cutoverId?: string;
  toPolicy: string;
  holder: string;
  scopes?: string[];
  prefix?: string;
  /** The controller's lease; no expiry when absent. */
  leaseTtlMs?: number;
  reason?: string;
}

export interface CutoverResult {
  cutoverId: string;
  toPolicy: string;
  scopes: number;
  fences: { scope: string; fence: number }[];
  /** Listed or planned scopes found deleted at their step: not moved, not re-created. */
  skipped: string[];
}

export type JobState = 'queued' | 'reserved' | 'running' | 'succeeded' | 'failed' | 'retrying';

export const JOB_STATES: readonly JobState[] = [
  'queued',
  'reserved',
  'running',
  'succeeded',
  'failed',
  'retrying',
];

/**
 * The states a job's run reaches as it acquires or releases its scope, recorded in the jobs ledger
 * in the same transaction as the lease operation, under the operation's scope and fence and the
 * scope's policy version: all of them when the operation succeeds, none when it is refused, and
 * none when the scope has no policy version (the ledger follows scopes through cutovers, which
 * move them between policies).
 */
export interface LeaseJobEvents {
  jobId: string;
  attempt: number;
  /** In order: the last is the job's state from then on. */
  states: JobState[];
}

export interface JobEvent {
  jobId: string;
  scope: string;
  policyVersion: string;
  fence: number;
  state: JobState;
  attempt: number;
  /** Event time; store time when absent. */
  at?: number;
}

export interface CutoverReport {
  cutoverId: string;
  toPolicy: string;
  holder: string;
  status: 'running' | 'completed';
  scopes: number;
  startedAt: number;
  completedAt: number | null;
  /** Jobs issued under an older generation of the cutover's scopes, by their last state. */
  oldJobs: { total: number; byState: Record<JobState, number> };
  /** Commit attempts after the cutover carrying a fence older than the cutover's, by outcome. */
  staleAttempts: number;
  /** Must be 0: stale attempts that were accepted. */
  staleAccepted: number;
  staleRejectedByReason: Record<string, number>;
  /** Commits accepted after the cutover under its generation or a newer one. */
  liveCommits: number;
  /** Scopes the cutover found deleted and did not move. */
  skipped: string[];
}

/**
 * One page of a scope's records (existing ones and tombstones). `order` 'name' (the default) walks
 * the name index; 'revision' sorts by each record's revision, ties broken by name. `after` is a
 * record name the page starts past, in the listing's direction (name order only): with
 * `direction: 'desc'` it lists the names before it.
 */
export interface ListRecordsQuery {
  prefix?: string;
  order?: RecordOrder;
  direction?: 'asc' | 'desc';
  after?: string;
  limit?: number;
  cursor?: string;
}

export type RecordOrder = 'name' | 'revision';
/** One cutover in the operator's list, newest first: how far it got. */
export interface CutoverSummary {
  cutoverId: string;
  toPolicy: string;
  holder: string;
  /** How many scopes the cutover covers. */
  scopes: number;
  /** How many of them it has moved so far. */
  moved: number;
  startedAt: number;
  /** null while the cutover is running (or was interrupted and not resumed yet). */
  finishedAt: number | null;
}

export interface ListCutoversQuery {
  limit?: number;
  cursor?: string;
}

/** The scopes a rollout ramps: every scope under a prefix, or a fixed list. */
export type RolloutSelection = { prefix: string } | { scopes: string[] };

/**
 * running: steps may advance; paused: no step advances until resumed; rolling_back: the rollback
 * is moving scopes back; rolled_back and completed are final.
 */
export type RolloutStatus = 'running' | 'paused' | 'rolling_back' | 'rolled_back' | 'completed';

export const ROLLOUT_STATUSES: readonly RolloutStatus[] = [
  'running',
  'paused',
  'rolling_back',
  'rolled_back',
  'completed',
];

export interface StartRolloutRequest {
  /** Makes the start idempotent; generated when absent. */
  rolloutId?: string;
  fromPolicy: string;
  toPolicy: string;
  scopes?: string[];
  prefix?: string;
  /** Percentages of the selection, increasing, each 1 to 100: the ramp. */
  steps: number[];
  /** Holds the moved scopes (no lease expiry) instead of leaving them released. */
  controller?: string;
  reason?: string;
  /**
   * How long each step is held, in seconds of store time, before the server's driver evaluates
   * the gates and starts the next step: one for every step, or one per step. Absent: the rollout
   * is advanced by its operator only.
   */
  holdSeconds?: number | number[];
  /** How much longer a hold may last while a gate lacks samples; the step's hold when absent. */
  holdExtensionSeconds?: number;
  /** Checked over each step's hold; needs holdSeconds. */
  gates?: RolloutGate[];
  /** What a failed gate does: roll back (the default) or pause. */
  onFailure?: RolloutFailureAction;
}

export type RolloutFailureAction = 'rollback' | 'pause';

/**
 * What a gate measures over a step's hold. The ratios count work under toPolicy on moved scopes
 * against work under fromPolicy on scopes not moved (the baseline):
 * - job_failure_ratio: jobs in the jobs ledger whose last state is failed or retrying, of all;
 * - rejection_ratio: commit attempts rejected (with `code`, or any code), of all attempts;
 * - unknown_intent_ratio: intents whose outcome is unknown or that need attention, of all;
 * - verify_violations: any audit entry `verify` flags on a moved scope fails the gate;
 * - external: the number a named source answers (configured on the server, never a URL).
 */
export type RolloutGateMetric =
  | 'job_failure_ratio'
  | 'rejection_ratio'
  | 'unknown_intent_ratio'
  | 'verify_violations'
  | 'external';

export const ROLLOUT_GATE_METRICS: readonly RolloutGateMetric[] = [
  'job_failure_ratio',
  'rejection_ratio',
  'unknown_intent_ratio',
  'verify_violations',
  'external',
];

/**
 * One gate: a metric, the samples it needs before it may decide, and one limit: `max` (the
 * metric's absolute maximum), `maxRatio` (at most this multiple of the baseline) or `confidence`
 * (fails when toPolicy is worse than the baseline at this confidence, decided at the hold's end).
 * A verify_violations gate takes no limit: any violation fails it.
 */
export interface RolloutGate {
  name: string;
  metric: RolloutGateMetric;
  /** rejection_ratio: only rejections with this code. */
  code?: CommitRejectionCode;
  /** external: the name of a metric source in the server's configuration. */
  source?: string;
  minSamples: number;
  max?: number;
  maxRatio?: number;
  confidence?: number;
}

/** A gate's reading at the driver's last look: its value and baseline against its limit. */
export interface RolloutGateResult {
  name: string;
  /** pass, fail, or pending: too few samples yet (or the source did not answer). */
  verdict: 'pass' | 'fail' | 'pending';
  value: number | null;
  baseline: number | null;
  samples: number;
  baselineSamples: number;
  /** The limit the value is held to: max, maxRatio × baseline, or null for a significance test. */
  limit: number | null;
  /** One-sided p-value of the significance test; null for the other limits. */
  pValue: number | null;
  at: number;
}

/** One of a gate's readings at a driver's look: a RolloutGateResult without the gate's name. */
export type RolloutGateReading = Omit<RolloutGateResult, 'name'>;

/**
 * A gate's readings of the current step, oldest first: at most GATE_SERIES_READINGS
 * (core/gate-series.ts), from the step's first look to its latest.
 */
export interface RolloutGateSeries {
  name: string;
  readings: RolloutGateReading[];
}

/** A change of a rollout's state, made only if the rollout is still at `revision` when given. */
export interface RolloutCommand {
  rolloutId: string;
  revision?: number;
  reason?: string;
}

export interface RolloutRollbackRequest extends RolloutCommand {
  /** Also cancels the pending intents the rollout's scopes committed under toPolicy. */
  cancelIntents?: boolean;
}

export interface Rollout {
  rolloutId: string;
  fromPolicy: string;
  toPolicy: string;
  selection: RolloutSelection;
  steps: number[];
  controller: string | null;
  status: RolloutStatus;
  /** How many step cutovers were started (`<rolloutId>/step-<n>`, n from 1). */
  step: number;
  /** The share of the selection ramped to toPolicy: 0 before the first step, 100 once promoted. */
  percent: number;
  /** Grows by one with every change of the rollout's state. */
  revision: number;
  cancelIntents: boolean;
  reason: string | null;
  startedAt: number;
  updatedAt: number;
  /** Each step's hold in seconds (null: advanced by the operator only). */
  holdSeconds: number[] | null;
  holdExtensionSeconds: number | null;
  gates: RolloutGate[];
  onFailure: RolloutFailureAction;
  /** The gates' readings at the driver's last look at the current step; empty before one. */
  gateResults: RolloutGateResult[];
  /** The cutover that moves scopes now or moved them last; null before the first step. */
  cutoverId: string | null;
  /** Whether that cutover has moved every scope it lists. */
  cutoverDone: boolean;
}

export interface RolloutStepReport {
  cutoverId: string;
  /** The percent the step ramped to. */
  percent: number;
  status: 'running' | 'completed';
  /** Scopes the step moved to toPolicy. */
  moved: number;
  /** Listed scopes it left (deleted, or moved otherwise since they were listed). */
  skipped: number;
  /** Commits accepted on the moved scopes under the step's fences or newer. */
  commitsAccepted: number;
  /** Scopes an acquire pinned to toPolicy while this was the current step. */
  pinnedAtAcquire: number;
  /**
   * Intents of the step's scopes (moved or pinned) whose delivery outcome is unknown, made under
   * the rollout's fence or newer and before the rollback's (rollout/step-work.ts).
   */
  unknownOutcomes: number;
  /** The jobs ledger's toPolicy jobs of the step's scopes, counted as the intents, by state. */
  toPolicyJobs: JobTally;
  /** When the step's cutover started, and finished moving (null while it runs). */
  startedAt: number;
  completedAt: number | null;
}

/** Jobs by their last state, and how many in all. */
export interface JobTally {
  total: number;
  byState: Record<JobState, number>;
}

export interface RolloutRollbackReport {
  cutoverId: string;
  status: 'running' | 'completed';
  /** Scopes moved back to fromPolicy with a new fence. */
  moved: number;
  /** Scopes the rollout had moved that a later takeover, cutover or delete moved otherwise. */
  skipped: string[];
  /** Commit attempts after the rollback under a fence older than the rollback's. */
  staleAttempts: number;
  /** Must be 0: stale attempts that were accepted. */
  staleAccepted: number;
  /** Pending intents cancelled with the rollback. */
  intentsCancelled: number;
  /** When the rollback's cutover started, and finished moving (null while it runs). */
  startedAt: number;
  completedAt: number | null;
}

export interface RolloutReport {
  rollout: Rollout;
  steps: RolloutStepReport[];
  /** Scopes pinned to toPolicy by an acquire under the rollout. */
  pinnedAtAcquire: number;
  rollback: RolloutRollbackReport | null;
  /** Intents of the rollout's scopes whose delivery outcome is unknown, to reconcile. */
  unknownOutcomes: number;
  /** The jobs ledger's toPolicy jobs of the rollout's scopes, by last state. */
  toPolicyJobs: JobTally;
  /** Each gate's readings of the current step, in the order of the rollout's gates. */
  gateSeries: RolloutGateSeries[];
}

export interface ListRolloutsQuery {
  status?: RolloutStatus;
}
