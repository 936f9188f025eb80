/**
 * FencegateClient: the FencegateApi and FencegateOpsApi over HTTP. Code written against the
 * library runs unchanged against a fencegate server, the Dispatcher included. Errors are the
 * library's (same FencegateError, same codes).
 *
 * Retries are limited to what cannot do harm: any request that was never sent or that the server
 * answered with store_unavailable (nothing changed); after a lost connection, reads and the writes
 * that are idempotent by construction (complete, registerPolicy, cutover by its cutoverId, job
 * events that carry `at`, a rollout's start by its rolloutId and its rollback); and commits, which carry an operationId: after an unknown outcome or a
 * lost reply the client reads the stored outcome (getOperation) and only resends the same commit
 * when the store has none yet; if it stays unknown, abandonOperation settles it. Lease operations
 * and claims are never resent after a lost reply.
 */
import { serverBaseUrl } from './server-url.js';
import { backoff } from './backoff.js';
import {
  commitMany,
  isCommitAnswer,
  MAX_BATCH_BODY_BYTES,
  unknownCommit,
  type BatchLink,
} from './commit-batch.js';
import { CommitCoalescer, requireCoalesceWindow } from './commit-coalescer.js';
import { MIN_BODY_BYTES, requireRange } from './option-range.js';
import { DEFAULT_RATE_LIMIT_BUDGET_MS, pastRateLimit } from './rate-limit-wait.js';
import { randomUUID } from 'node:crypto';
import type { FencegateApi, FencegateOpsApi, VerifyReport } from '../api.js';
import { cancelEveryPage } from '../core/cancel-intents-page.js';
import { DEFAULT_LIMITS, DEFAULT_LIST_LIMIT } from '../core/limits.js';
import type { RecordReads, RecordReadsResult } from '../core/record-reads.js';
import { FencegateError, isFencegateError } from '../errors.js';
import type { RolloutsApi } from '../rollout/rollouts.js';
import { ROUTE_TABLE } from '../route-table.js';
import { orNull } from './or-null.js';
import { RolloutsClient } from './rollouts-client.js';
import { routeRequest, type ResolvedRequest } from './route-request.js';
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
} from '../types.js';
import {
  describeAnswer,
  errorFromReply,
  exchange,
  isRedirectStatus,
  isSuccess,
  isUnavailableStatus,
  leavesOutcomeUnknown,
  MAX_ANSWER_BYTES,
  nothingChanged,
  TransportError,
  unreachable,
  type Reply,
} from './transport.js';
import type {
  AcquireBody,
  AuditPageAnswer,
  CancelAnswer,
  CancelIntentsAnswer,
  CancelIntentsBody,
  ClaimBody,
  CommitAnswer,
  CommitBody,
  CompleteBody,
  CutoverBody,
  CutoverPageAnswer,
  CutoverReportAnswer,
  CutoverResultAnswer,
  DeleteScopeAnswer,
  GrantAnswer,
  IntentAnswer,
  IntentListAnswer,
  IntentPageAnswer,
  JobEventsAcceptedAnswer,
  JobEventsBody,
  PolicyAnswer,
  PolicyBody,
  PolicyListAnswer,
  RecordAnswer,
  RecordListAnswer,
  RecordReadsAnswer,
  ReleaseAnswer,
  ReasonBody,
  ReleaseBody,
  RenewBody,
  ScopeAnswer,
  ScopePageAnswer,
  TakeoverBody,
  VerifyReportAnswer,
} from './wire.js';

export interface FencegateClientOptions {
  /** The server's base URL, e.g. http://127.0.0.1:7420. */
  url: string;
  /** A worker or operator token of one tenant. */
  token: string;
  /** Per attempt; default 10,000 ms. */
  timeoutMs?: number;
  /** Extra attempts for what may be retried; default 3. */
  retries?: number;
  /**
   * Concurrent `commit` calls go out together, one `POST /v1/commits` per batch that fits, each
   * caller answered on its own; default true. false sends each commit alone.
   */
  coalesceCommits?: boolean;
  /**
   * How long a commit waits for others to go with it: 0 (default) until the current turn of the
   * event loop ends, 1 a millisecond at most. Any other value throws a RangeError here, with
   * coalescing on or off.
   */
  coalesceWindowMs?: number;
  /**
   * The server's body limit, which batches are split to stay within; default 1 MiB, a whole
   * number of bytes from 1 KiB to 64 MiB (a RangeError here otherwise).
   */
  maxBodyBytes?: number;
  /**
   * How long one exchange may take in all while it is rate limited (a 429: nothing changed),
   * sending the same request again when the answer says, at least 50 ms apart; default 60,000 ms,
   * a finite number of 0 or more (a RangeError here otherwise). Past it the call fails rate_limited; a commit is
   * never abandoned because of a 429.
   */
  rateLimitWaitMs?: number;
}

interface CallOptions {
  /**
   * The error of a `write` whose outcome is unknown (its reply was lost, or a redirect or a gateway
   * answered it); `what` says what happened. Default: a generic outcome_unknown.
   */
  lost?: (what: string) => FencegateError;
  /**
   * Rewrites a final error answered after an earlier attempt whose outcome is unknown (its reply
   * was lost, or the server answered outcome_unknown or a gateway error).
   */
  afterLoss?: (error: FencegateError) => FencegateError;
}

interface Answer<T> {
  status: number;
  body: T;
}

const COMMIT = ROUTE_TABLE.commit;
const COMMIT_MANY = ROUTE_TABLE.commitMany;

export class FencegateClient implements FencegateApi, FencegateOpsApi {
  readonly url: string;
  readonly #token: string;
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #rateLimitWaitMs: number;
  /** Operator: progressive rollouts (docs/rollout.md), as the library's `gate.rollouts`. */
  readonly rollouts: RolloutsApi = new RolloutsClient((request) => this.#call(request));
  /** What the batches of commits use of this client. */
  readonly #batches: BatchLink;
  /** Gathers concurrent commits into batches; null when coalescing is off. */
  readonly #coalescer: CommitCoalescer | null;

  constructor(options: FencegateClientOptions) {
    this.url = serverBaseUrl(options.url);
    this.#token = options.token;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#retries = options.retries ?? 3;
    this.#rateLimitWaitMs = requireRange(
      'rateLimitWaitMs',
      options.rateLimitWaitMs ?? DEFAULT_RATE_LIMIT_BUDGET_MS,
      0,
      Number.MAX_SAFE_INTEGER,
    );
    this.#batches = {
      url: this.url,
      retries: this.#retries,
      maxBodyBytes: requireRange(
        'maxBodyBytes',
        options.maxBodyBytes ?? MAX_BATCH_BODY_BYTES,
        MIN_BODY_BYTES,
        MAX_ANSWER_BYTES,
        true,
      ),
      send: (bodyText) => this.#exchange(COMMIT_MANY.method, COMMIT_MANY.path, { bodyText }),
      alone: (request) => this.#commitAlone(request),
      settle: (operationId) => this.#settle(operationId),
    };
    const windowMs = requireCoalesceWindow(options.coalesceWindowMs ?? 0);
    this.#coalescer =
      options.coalesceCommits === false ? null : new CommitCoalescer(this.#batches, windowMs);
  }

  async acquire(request: AcquireRequest): Promise<Grant> {
    return await this.#call<GrantAnswer>(
      routeRequest('acquire', { body: request satisfies AcquireBody }),
    );
  }

  async renew(request: RenewRequest): Promise<Grant> {
    return await this.#call<GrantAnswer>(
      routeRequest('renew', { body: request satisfies RenewBody }),
    );
  }

  async release(request: ReleaseRequest): Promise<ReleaseResult> {
    return await this.#call<ReleaseAnswer>(
      routeRequest('release', { body: request satisfies ReleaseBody }),
    );
  }

  async cancelIntents(request: CancelIntentsRequest): Promise<CancelIntentsResult> {
    return await this.#call<CancelIntentsAnswer>(
      routeRequest('cancelIntents', { body: request satisfies CancelIntentsBody }),
    );
  }

  async cancelAllIntents(request: CancelIntentsRequest): Promise<string[]> {
    return await cancelEveryPage(
      (cursor) => this.cancelIntents({ ...request, ...(cursor === undefined ? {} : { cursor }) }),
      request.cursor,
    );
  }

  async takeover(scope: string, request: TakeoverRequest): Promise<Grant> {
    return await this.#call<GrantAnswer>(
      routeRequest('takeover', {
        params: { scope },
        body: request satisfies TakeoverBody,
      }),
    );
  }

  async cancel(scope: string, request: CancelRequest = {}): Promise<CancelResult> {
    return await this.#call<CancelAnswer>(
      routeRequest('cancel', { params: { scope }, body: request }),
    );
  }

  async deleteScope(scope: string, request: CancelRequest = {}): Promise<DeleteScopeResult> {
    const body = Object.keys(request).length === 0 ? undefined : request;
    return await this.#call<DeleteScopeAnswer>(
      routeRequest('deleteScope', { params: { scope }, body }),
    );
  }

  async getScope(scope: string): Promise<ScopeState | null> {
    return await orNull(
      this.#call<ScopeAnswer>(routeRequest('getScope', { params: { scope } })),
      'scope_not_found',
    );
  }

  async listScopes(query: ListScopesQuery = {}): Promise<Page<ScopeState>> {
    return await this.#call<ScopePageAnswer>(routeRequest('listScopes', { query }));
  }

  async getRecord(scope: string, name: string): Promise<RecordState> {
    return await this.#call<RecordAnswer>(routeRequest('getRecord', { params: { scope, name } }));
  }

  /**
   * Every record of the scope by name. The server answers as many as one answer may hold and a
   * cursor when more follow (a page cut by its byte budget may be short), which is followed to
   * the end; the pages are not one snapshot.
   */
  async listRecords(scope: string): Promise<RecordState[]> {
    const first = await this.#call<RecordListAnswer>(
      routeRequest('listRecords', { params: { scope } }),
    );
    const records = [...first.items];
    let cursor = first.nextCursor ?? null;
    while (cursor !== null) {
      const page = await this.#call<RecordListAnswer>(
        routeRequest('listRecords', {
          params: { scope },
          query: { cursor, limit: DEFAULT_LIMITS.maxListLimit },
        }),
      );
      records.push(...page.items);
      cursor = page.nextCursor ?? null;
    }
    return records;
  }

  async listRecordsPage(scope: string, query: ListRecordsQuery = {}): Promise<Page<RecordState>> {
    // A page always names its limit, so the server never answers with the whole scope.
    const paged = { ...query, limit: query.limit ?? DEFAULT_LIST_LIMIT };
    const answer = await this.#call<RecordListAnswer>(
      routeRequest('listRecords', {
        params: { scope },
        query: paged,
      }),
    );
    return { items: answer.items, nextCursor: answer.nextCursor ?? null };
  }

  /**
   * Records by name and pages of records of one scope in one exchange (`POST
   * /v1/scopes/:scope/reads`), each as `getRecord` and `listRecordsPage` read it, in the order
   * asked; not one snapshot. A page without a limit reads 100, as `listRecordsPage` does. The
   * answer shares one byte budget: a page may end early, or hold nothing once earlier reads spent
   * it; its `nextCursor` then reads on.
   */
  async readRecords(scope: string, reads: RecordReads): Promise<RecordReadsResult> {
    const pages = (reads.pages ?? []).map((query) => ({
      ...query,
      limit: query.limit ?? DEFAULT_LIST_LIMIT,
    }));
    const answer = await this.#call<RecordReadsAnswer>(
      routeRequest('readRecords', {
        params: { scope },
        body: { records: reads.records ?? [], pages },
      }),
    );
    return {
      records: answer.records,
      pages: answer.pages.map((page) => ({
        items: page.items,
        nextCursor: page.nextCursor ?? null,
      })),
    };
  }

  async getOperation(operationId: string): Promise<CommitResult | null> {
    return await orNull(
      this.#call<CommitAnswer>(routeRequest('getOperation', { params: { operationId } })),
      'not_found',
    );
  }

  /** Resent after a lost reply: a second abandon answers the outcome the first one settled. */
  async abandonOperation(operationId: string, request: AbandonRequest = {}): Promise<CommitResult> {
    return await this.#call<CommitAnswer>(
      routeRequest('abandonOperation', {
        params: { operationId },
        body: request satisfies ReasonBody,
      }),
    );
  }

  async listIntents(query: ListIntentsQuery = {}): Promise<Page<Intent>> {
    return await this.#call<IntentPageAnswer>(routeRequest('listIntents', { query }));
  }

  async getIntent(effectKey: string): Promise<Intent | null> {
    return await orNull(
      this.#call<IntentAnswer>(routeRequest('getIntent', { params: { effectKey } })),
      'not_found',
    );
  }

  async audit(query: AuditQuery = {}): Promise<AuditPage> {
    return await this.#call<AuditPageAnswer>(routeRequest('audit', { query }));
  }

  /** Operator: GET /v1/verify, the replay of this tenant's audit log. */
  async verify(): Promise<VerifyReport> {
    return await this.#call<VerifyReportAnswer>(routeRequest('verify', {}));
  }

  /**
   * Claims due intents. Never resent after a lost reply: the server may have claimed intents that
   * the caller never learns about. Those claims are not lost; they lapse after `ttlMs` and any
   * dispatcher claims them again (reconciling first, since `attempts` counts the lost claim).
   */
  async claimIntents(request: ClaimIntentsRequest): Promise<Intent[]> {
    const answer = await this.#call<IntentListAnswer>(
      routeRequest('claimIntents', { body: request satisfies ClaimBody }),
      {
        lost: (what) =>
          new FencegateError(
            'outcome_unknown',
            `${what}; any intents the claim took stay claimed until ttlMs passes, then they are claimed again`,
            { dispatcher: request.dispatcher },
          ),
      },
    );
    return answer.items;
  }

  /**
   * Records a delivery outcome. Resent after a lost reply or an outcome_unknown answer: the store
   * applies an outcome only under the current claim fence, so a resend cannot apply it twice. When
   * a resend is answered stale_claim, the earlier attempt may be the one that recorded it; the
   * error says so (`details.afterLostReply: true`), and getIntent shows the recorded status.
   */
  async completeIntent(effectKey: string, request: CompleteIntentRequest): Promise<Intent> {
    return await this.#call<IntentAnswer>(
      routeRequest('completeIntent', {
        params: { effectKey },
        body: request satisfies CompleteBody,
      }),
      {
        afterLoss: (error) =>
          error.code === 'stale_claim'
            ? new FencegateError(
                'stale_claim',
                `${error.message}; an earlier attempt of this completion was sent and its reply lost, so it may be the one that recorded the outcome`,
                { ...error.details, afterLostReply: true },
              )
            : error,
      },
    );
  }

  /**
   * Registers a policy version: `created` is true for a 201, false for the same one again (200).
   * Resent after a lost reply (a version is immutable); `created` is then false even when the lost
   * attempt was the one that registered it.
   */
  async registerPolicy(
    request: RegisterPolicyRequest,
  ): Promise<{ policy: Policy; created: boolean }> {
    const answer = await this.#send<PolicyAnswer>(
      routeRequest('registerPolicy', {
        body: request satisfies PolicyBody,
      }),
    );
    return { policy: answer.body, created: answer.status === 201 };
  }

  async listPolicies(): Promise<Policy[]> {
    return (await this.#call<PolicyListAnswer>(routeRequest('listPolicies', {}))).items;
  }

  /**
   * Runs a cutover. Without a cutoverId one is generated here, before the first attempt, so a
   * resend after a lost reply is the same cutover (idempotent and resumable by its id).
   */
  async cutover(request: CutoverRequest): Promise<CutoverResult> {
    const body: CutoverBody = { ...request, cutoverId: request.cutoverId ?? randomUUID() };
    return await this.#call<CutoverResultAnswer>(routeRequest('cutover', { body }));
  }

  async cutoverReport(cutoverId: string): Promise<CutoverReport | null> {
    return await orNull(
      this.#call<CutoverReportAnswer>(routeRequest('cutoverReport', { params: { cutoverId } })),
      'not_found',
    );
  }

  async listCutovers(query: ListCutoversQuery = {}): Promise<Page<CutoverSummary>> {
    return await this.#call<CutoverPageAnswer>(routeRequest('listCutovers', { query }));
  }

  /**
   * Records job events. Resent after a lost reply only when every event carries `at`: a job keeps
   * the state of its latest event by `at`, so the same events again change nothing. Without `at`
   * the store stamps its own time, and a late resend could hide a newer state.
   */
  async recordJobEvents(events: JobEvent[]): Promise<void> {
    const body: JobEventsBody = { events };
    const timed = events.every((event) => event.at !== undefined);
    await this.#call<JobEventsAcceptedAnswer>(routeRequest('recordJobEvents', { body, timed }));
  }

  /**
   * Commits, answered as `commitAlone` answers each. With coalescing on (the default), commits
   * called together go out in one request (`POST /v1/commits`); each caller gets its own answer.
   */
  async commit(request: CommitRequest): Promise<CommitResult> {
    return this.#coalescer === null
      ? await this.#commitAlone(request)
      : await this.#coalescer.commit(request);
  }

  /**
   * Up to 64 commits in one request (`POST /v1/commits`; more than one when the body limit
   * splits them), each answered in order as `commit` answers it alone. A batch whose reply was lost
   * is sent again as it was; an item still unknown after the retries is settled with
   * abandonOperation, as `commit` settles one.
   */
  async commitMany(requests: readonly CommitRequest[]): Promise<CommitItemResult[]> {
    return await commitMany(this.#batches, requests);
  }

  /**
   * Sends one commit alone; a committed (200) or rejected (409) answer is returned as is. When the
   * outcome is unknown (outcome_unknown, a server fault, a lost connection or a timeout), the
   * stored outcome decides: committed or rejected is returned; absent means nothing has happened
   * yet, and the same commit is sent again. Still unknown after the retries, the client settles it
   * with abandonOperation: the answer is then the commit's stored outcome if it landed meanwhile,
   * or the rejection operation_abandoned, after which it never applies (a new attempt needs a new
   * operationId). Only when even that cannot reach the server: outcome_unknown.
   */
  async #commitAlone(request: CommitRequest): Promise<CommitResult> {
    const body: CommitBody = request;
    let unknown: string | undefined;
    let lastError: FencegateError | undefined;
    for (let attempt = 0; attempt <= this.#retries; attempt++) {
      if (attempt > 0) await backoff(attempt);
      let reply: Reply;
      try {
        reply = await this.#exchange(COMMIT.method, COMMIT.path, { body });
      } catch (error) {
        if (!(error instanceof TransportError)) throw error;
        lastError = unreachable(this.url, error);
        if (error.failure === 'not_sent') continue;
        unknown = error.message;
        const stored = await this.#storedOutcome(request.operationId);
        if (stored !== undefined && stored !== null) return stored;
        continue;
      }
      if (reply.status === 200 || (reply.status === 409 && isCommitAnswer(reply.body))) {
        return reply.body as CommitAnswer;
      }
      const error = errorFromReply(reply);
      if (nothingChanged(reply)) {
        lastError = error;
        continue;
      }
      if (error.code !== 'outcome_unknown' && reply.status < 500 && !leavesOutcomeUnknown(reply)) {
        throw error;
      }
      unknown = error.message;
      lastError = error;
      const stored = await this.#storedOutcome(request.operationId);
      if (stored !== undefined && stored !== null) return stored;
    }
    if (unknown !== undefined) {
      const settled = await this.#settle(request.operationId);
      if (settled !== undefined) return settled;
      throw unknownCommit(request.operationId, unknown);
    }
    throw (
      lastError ??
      new FencegateError('store_unavailable', `could not reach fencegate at ${this.url}`)
    );
  }

  /** The stored outcome, null when absent, undefined when it cannot be read right now. */
  async #storedOutcome(operationId: string): Promise<CommitResult | null | undefined> {
    return await unlessUnreachable(this.getOperation(operationId));
  }

  /** The settled outcome (abandonOperation), undefined when the server cannot settle it now. */
  async #settle(operationId: string): Promise<CommitResult | undefined> {
    return await unlessUnreachable(this.abandonOperation(operationId));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  async #call<T>(request: ResolvedRequest, options: CallOptions = {}): Promise<T> {
    return (await this.#send<T>(request, options)).body;
  }

  /** One request with the retries its route's retry class allows; the success answer with its status. */
  async #send<T>(request: ResolvedRequest, options: CallOptions = {}): Promise<Answer<T>> {
    const { method, path, kind, body } = request;
    let lastError: FencegateError | undefined;
    // An earlier attempt may have taken effect: its reply was lost, or said only "unknown".
    let uncertain = false;
    for (let attempt = 0; attempt <= this.#retries; attempt++) {
      if (attempt > 0) await backoff(attempt);
      let reply: Reply;
      try {
        reply = await this.#exchange(method, path, { body });
      } catch (error) {
        if (!(error instanceof TransportError)) throw error;
        if (error.failure === 'lost') {
          if (kind === 'write') {
            throw outcomeUnknown(
              `the connection was lost after ${method} ${path} was sent (${error.message})`,
              options,
            );
          }
          uncertain = true;
        }
        lastError = unreachable(this.url, error);
        continue;
      }
      if (isSuccess(reply)) return { status: reply.status, body: reply.body as T };
      const unchanged = nothingChanged(reply);
      // A write answered by a redirect or a gateway may have taken effect: its outcome is unknown.
      const error =
        kind !== 'read' && leavesOutcomeUnknown(reply)
          ? outcomeUnknown(`${method} ${path} ${describeAnswer(reply)}`, options, {
              status: reply.status,
            })
          : errorFromReply(reply);
      const retryable =
        unchanged ||
        (kind !== 'write' && !isRedirectStatus(reply.status) && isUnavailableStatus(reply.status));
      if (!retryable) throw uncertain && options.afterLoss ? options.afterLoss(error) : error;
      if (!unchanged) uncertain = true;
      lastError = error;
    }
    if (uncertain && kind !== 'read' && lastError?.code === 'store_unavailable') {
      // An attempt whose reply was lost may have taken effect, however the later ones failed.
      throw outcomeUnknown(
        `${method} ${path} was sent, its reply lost, and fencegate could not be reached again (${lastError.message})`,
        options,
      );
    }
    throw (
      lastError ??
      new FencegateError('store_unavailable', `could not reach fencegate at ${this.url}`)
    );
  }

  #exchange(
    method: string,
    path: string,
    content: { body?: unknown; bodyText?: string },
  ): Promise<Reply> {
    // Every request goes through here: a rate-limited one waits and goes again (rate-limit-wait.ts).
    return pastRateLimit(
      () =>
        exchange(`${this.url}${path}`, {
          method,
          token: this.#token,
          ...content,
          timeoutMs: this.#timeoutMs,
        }),
      this.#rateLimitWaitMs,
    );
  }
}

/**
 * The error of a write that may have taken effect: the call's own (a claim says what becomes of
 * its intents) or a generic outcome_unknown; `details` adds what came back.
 */
function outcomeUnknown(
  what: string,
  options: CallOptions,
  details: Record<string, unknown> = {},
): FencegateError {
  const error =
    options.lost?.(what) ??
    new FencegateError(
      'outcome_unknown',
      `${what}; read the state to learn whether it took effect`,
    );
  return new FencegateError(error.code, error.message, { ...error.details, ...details });
}

/** The answer, or undefined when the server or its store cannot be reached right now. */
async function unlessUnreachable<T>(answer: Promise<T>): Promise<T | undefined> {
  try {
    return await answer;
  } catch (error) {
    if (
      isFencegateError(error) &&
      (error.code === 'store_unavailable' ||
        error.code === 'internal_error' ||
        error.code === 'outcome_unknown')
    ) {
      return undefined;
    }
    throw error;
  }
}
