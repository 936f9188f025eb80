/**
 * The wire types, derived from the server's TypeBox schemas, and a compile-time proof that they
 * describe the same shapes as the library's types (types.ts). If either side changes alone, the
 * build fails here instead of a client failing at run time.
 */
import type { Static } from '@sinclair/typebox';
import type { VerifyReport } from '../api.js';
import type { RecordReadsResult } from '../core/record-reads.js';
import type { RecordReadsSchema } from '../server/routes/record-reads.js';
import type * as answers from '../server/schemas/answers.js';
import type { RequestSchemas } from '../server/schemas/requests.js';
import type {
  CancelIntentsRequest,
  CancelIntentsResult,
  AcquireRequest,
  ClaimIntentsRequest,
  CompleteIntentRequest,
  CutoverReport,
  CutoverRequest,
  CutoverResult,
  CutoverSummary,
  JobEvent,
  ListRolloutsQuery,
  Policy,
  RegisterPolicyRequest,
  AuditEntry,
  AuditPage,
  AuditQuery,
  CancelRequest,
  CancelResult,
  CommitCommitted,
  CommitRejected,
  CommitRequest,
  DeleteScopeResult,
  Grant,
  Intent,
  ListCutoversQuery,
  ListIntentsQuery,
  ListRecordsQuery,
  ListScopesQuery,
  Page,
  RecordState,
  ReleaseRequest,
  ReleaseResult,
  RenewRequest,
  Rollout,
  RolloutCommand,
  RolloutReport,
  RolloutRollbackRequest,
  ScopeState,
  StartRolloutRequest,
  TakeoverRequest,
} from '../types.js';

export type AcquireBody = Static<RequestSchemas['AcquireBody']>;
export type RenewBody = Static<RequestSchemas['RenewBody']>;
export type ReleaseBody = Static<RequestSchemas['ReleaseBody']>;
export type CancelIntentsBody = Static<RequestSchemas['CancelIntentsBody']>;
export type TakeoverBody = Static<RequestSchemas['TakeoverBody']>;
export type ReasonBody = Static<RequestSchemas['ReasonBody']>;
export type CommitBody = Static<RequestSchemas['CommitBody']>;
export type ListScopesParams = Static<RequestSchemas['ListScopesQuery']>;
export type ListIntentsParams = Static<RequestSchemas['ListIntentsQuery']>;
export type ListRecordsParams = Static<RequestSchemas['ListRecordsQuery']>;
export type ListCutoversParams = Static<RequestSchemas['ListCutoversQuery']>;
export type AuditParams = Static<RequestSchemas['AuditQuery']>;
export type CreateTokenBody = Static<RequestSchemas['CreateTokenBody']>;
export type ClaimBody = Static<RequestSchemas['ClaimBody']>;
export type CompleteBody = Static<RequestSchemas['CompleteBody']>;
export type PolicyBody = Static<RequestSchemas['PolicyBody']>;
export type CutoverBody = Static<RequestSchemas['CutoverBody']>;
export type JobEventsBody = Static<RequestSchemas['JobEventsBody']>;
export type RolloutBody = Static<RequestSchemas['RolloutBody']>;
/** A rollout command's body: the rolloutId is in the path. */
export type RolloutCommandBody = Static<RequestSchemas['RolloutCommandBody']>;
export type RolloutRollbackBody = Static<RequestSchemas['RolloutRollbackBody']>;
export type ListRolloutsParams = Static<RequestSchemas['ListRolloutsQuery']>;

export type GrantAnswer = Static<typeof answers.GrantSchema>;
export type ScopeAnswer = Static<typeof answers.ScopeSchema>;
export type ScopePageAnswer = Static<typeof answers.ScopePageSchema>;
export type RecordAnswer = Static<typeof answers.RecordSchema>;
export type RecordListAnswer = Static<typeof answers.RecordListSchema>;
export type RecordReadsAnswer = Static<typeof RecordReadsSchema>;
export type ReleaseAnswer = Static<typeof answers.ReleaseResultSchema>;
export type CancelAnswer = Static<typeof answers.CancelResultSchema>;
export type CancelIntentsAnswer = Static<typeof answers.CancelIntentsResultSchema>;
export type DeleteScopeAnswer = Static<typeof answers.DeleteScopeResultSchema>;
export type CommitCommittedAnswer = Static<typeof answers.CommitCommittedSchema>;
export type CommitRejectedAnswer = Static<typeof answers.CommitRejectedSchema>;
export type CommitAnswer = Static<typeof answers.CommitResultSchema>;
export type IntentAnswer = Static<typeof answers.IntentSchema>;
export type IntentPageAnswer = Static<typeof answers.IntentPageSchema>;
export type AuditEntryAnswer = Static<typeof answers.AuditEntrySchema>;
export type AuditPageAnswer = Static<typeof answers.AuditPageSchema>;
export type TokenCreatedAnswer = Static<typeof answers.TokenCreatedSchema>;
export type TokenListAnswer = Static<typeof answers.TokenListSchema>;
export type IntentListAnswer = Static<typeof answers.IntentListSchema>;
export type PolicyAnswer = Static<typeof answers.PolicySchema>;
export type PolicyListAnswer = Static<typeof answers.PolicyListSchema>;
export type CutoverResultAnswer = Static<typeof answers.CutoverResultSchema>;
export type CutoverPageAnswer = Static<typeof answers.CutoverPageSchema>;
export type CutoverReportAnswer = Static<typeof answers.CutoverReportSchema>;
export type RolloutAnswer = Static<typeof answers.RolloutSchema>;
export type RolloutListAnswer = Static<typeof answers.RolloutListSchema>;
export type RolloutReportAnswer = Static<typeof answers.RolloutReportSchema>;
export type JobEventsAcceptedAnswer = Static<typeof answers.JobEventsAcceptedSchema>;
export type VerifyReportAnswer = Static<typeof answers.VerifyReportSchema>;
export type ErrorAnswer = Static<typeof import('../server/schemas/common.js').ErrorBody>;

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;

/** Each entry fails to compile when a wire schema and its library type disagree. */
export type WireMatchesLibrary = [
  Assert<Same<AcquireBody, AcquireRequest>>,
  Assert<Same<RenewBody, RenewRequest>>,
  Assert<Same<ReleaseBody, ReleaseRequest>>,
  Assert<Same<CancelIntentsBody, CancelIntentsRequest>>,
  Assert<Same<TakeoverBody, TakeoverRequest>>,
  Assert<Same<ReasonBody, CancelRequest>>,
  Assert<Same<CommitBody, CommitRequest>>,
  Assert<Same<ListScopesParams, ListScopesQuery>>,
  Assert<Same<ListIntentsParams, ListIntentsQuery>>,
  Assert<Same<ListRecordsParams, ListRecordsQuery>>,
  Assert<Same<RecordListAnswer, { items: RecordState[]; nextCursor?: string | null }>>,
  Assert<
    Same<RecordReadsAnswer, { records: RecordReadsResult['records']; pages: RecordListAnswer[] }>
  >,
  Assert<Same<AuditParams, AuditQuery>>,
  Assert<Same<GrantAnswer, Grant>>,
  Assert<Same<ScopeAnswer, ScopeState>>,
  Assert<Same<ScopePageAnswer, Page<ScopeState>>>,
  Assert<Same<RecordAnswer, RecordState>>,
  Assert<Same<ReleaseAnswer, ReleaseResult>>,
  Assert<Same<CancelAnswer, CancelResult>>,
  Assert<Same<CancelIntentsAnswer, CancelIntentsResult>>,
  Assert<Same<DeleteScopeAnswer, DeleteScopeResult>>,
  Assert<Same<CommitCommittedAnswer, CommitCommitted>>,
  Assert<Same<CommitRejectedAnswer, CommitRejected>>,
  Assert<Same<IntentAnswer, Intent>>,
  Assert<Same<IntentPageAnswer, Page<Intent>>>,
  Assert<Same<AuditEntryAnswer, AuditEntry>>,
  Assert<Same<AuditPageAnswer, AuditPage>>,
  Assert<Same<ClaimBody, ClaimIntentsRequest>>,
  Assert<Same<CompleteBody, CompleteIntentRequest>>,
  Assert<Same<PolicyBody, RegisterPolicyRequest>>,
  Assert<Same<CutoverBody, CutoverRequest>>,
  Assert<Same<JobEventsBody['events'][number], JobEvent>>,
  Assert<Same<IntentListAnswer, { items: Intent[] }>>,
  Assert<Same<PolicyAnswer, Policy>>,
  Assert<Same<PolicyListAnswer, { items: Policy[] }>>,
  Assert<Same<CutoverResultAnswer, CutoverResult>>,
  Assert<Same<CutoverReportAnswer, CutoverReport>>,
  Assert<Same<VerifyReportAnswer, VerifyReport>>,
  Assert<Same<ListCutoversParams, ListCutoversQuery>>,
  Assert<Same<CutoverPageAnswer, Page<CutoverSummary>>>,
  Assert<Same<RolloutBody, StartRolloutRequest>>,
  Assert<Same<RolloutCommandBody, Omit<RolloutCommand, 'rolloutId'>>>,
  Assert<Same<RolloutRollbackBody, Omit<RolloutRollbackRequest, 'rolloutId'>>>,
  Assert<Same<ListRolloutsParams, ListRolloutsQuery>>,
  Assert<Same<RolloutAnswer, Rollout>>,
  Assert<Same<RolloutListAnswer, { items: Rollout[] }>>,
  Assert<Same<RolloutReportAnswer, RolloutReport>>,
];
