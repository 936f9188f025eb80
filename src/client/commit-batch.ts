/**
 * Commits sent together over `POST /v1/commits`: split to fit the server's body limit and the
 * batch size, each item answered as its commit alone would be. A batch whose reply was lost is sent
 * again as it was: each commit's operationId applies it at most once, so the items that landed are
 * answered their stored outcomes (replayed) and the others are applied. An item whose outcome stays
 * unknown after the retries is settled with abandonOperation, as a single commit is.
 */
import { requireCommitBatch } from '../core/commit-batch.js';
import { MAX_BATCH_COMMITS } from '../core/limits.js';
import { FencegateError } from '../errors.js';
import type { CommitItemResult, CommitRequest, CommitResult } from '../types.js';
import { backoff } from './backoff.js';
import {
  errorFromReply,
  leavesOutcomeUnknown,
  nothingChanged,
  TransportError,
  unreachable,
  type Reply,
} from './transport.js';

/** The server's default body limit: a batch is split to stay within it. */
export const MAX_BATCH_BODY_BYTES = 1024 * 1024;

/** What a batch needs of its client. */
export interface BatchLink {
  readonly url: string;
  /** Extra attempts of a batch. */
  readonly retries: number;
  /** The most bytes of one request's body. */
  readonly maxBodyBytes: number;
  /** One exchange of `POST /v1/commits` with this body text. */
  send(bodyText: string): Promise<Reply>;
  /** One commit alone, by the rules of `commit`. */
  alone(request: CommitRequest): Promise<CommitResult>;
  /** The settled outcome of an operation (abandonOperation); undefined when it cannot be reached. */
  settle(operationId: string): Promise<CommitResult | undefined>;
}

/** A commit answer (committed or rejected), as opposed to an error body. */
export function isCommitAnswer(body: unknown): body is CommitResult {
  const outcome = (body as { outcome?: unknown } | undefined)?.outcome;
  return outcome === 'committed' || outcome === 'rejected';
}

/**
 * Commits in as few requests as fit, each answered in order. More than MAX_BATCH_COMMITS is
 * refused, as the library refuses it; the body limit splits a batch into several requests.
 */
export async function commitMany(
  link: BatchLink,
  requests: readonly CommitRequest[],
): Promise<CommitItemResult[]> {
  requireCommitBatch(requests);
  return await commitInBatches(link, requests);
}

/** Commits of any number, in requests of at most MAX_BATCH_COMMITS that fit the body limit. */
export async function commitInBatches(
  link: BatchLink,
  requests: readonly CommitRequest[],
): Promise<CommitItemResult[]> {
  const texts = requests.map((request) => JSON.stringify(request));
  const results: CommitItemResult[] = new Array<CommitItemResult>(requests.length);
  await Promise.all(
    splitBatches(texts, link.maxBodyBytes).map(async (indices) => {
      const answers = await commitBatch(
        link,
        indices.map((i) => requests[i]!),
        indices.map((i) => texts[i]!),
      );
      indices.forEach((i, k) => (results[i] = answers[k]!));
    }),
  );
  return results;
}

/** The body of a batch of these items' JSON texts. */
function batchBody(texts: readonly string[]): string {
  return `{"commits":[${texts.join(',')}]}`;
}

/**
 * Groups of item indices, in order: at most MAX_BATCH_COMMITS items each, and a body within
 * `maxBodyBytes`. An item too large for any batch goes alone (the server answers it as it does).
 */
export function splitBatches(texts: readonly string[], maxBodyBytes: number): number[][] {
  const groups: number[][] = [];
  const emptyBytes = Buffer.byteLength(batchBody([]));
  let group: number[] = [];
  let bytes = emptyBytes;
  texts.forEach((text, i) => {
    const size = Buffer.byteLength(text) + (group.length === 0 ? 0 : 1);
    if (group.length === MAX_BATCH_COMMITS || (group.length > 0 && bytes + size > maxBodyBytes)) {
      groups.push(group);
      group = [];
      bytes = emptyBytes;
    }
    bytes += Buffer.byteLength(text) + (group.length === 0 ? 0 : 1);
    group.push(i);
  });
  if (group.length > 0) groups.push(group);
  return groups;
}

/** One request's worth of commits; a single commit goes alone, over `POST /v1/commit`. */
async function commitBatch(
  link: BatchLink,
  requests: readonly CommitRequest[],
  texts: readonly string[],
): Promise<CommitItemResult[]> {
  if (requests.length === 1) return [await alone(link, requests[0]!)];
  const results: (CommitItemResult | undefined)[] = new Array<undefined>(requests.length);
  /** Why an item's outcome is unknown: an attempt that carried it may have applied it. */
  const unknown = new Map<number, string>();
  let pending = requests.map((_request, i) => i);
  let lastError: FencegateError | undefined;
  for (let attempt = 0; attempt <= link.retries && pending.length > 0; attempt++) {
    if (attempt > 0) await backoff(attempt);
    let reply: Reply;
    try {
      reply = await link.send(batchBody(pending.map((i) => texts[i]!)));
    } catch (error) {
      if (!(error instanceof TransportError)) throw error;
      lastError = unreachable(link.url, error);
      // Lost after it was sent: the same batch again, not a lookup per commit.
      if (error.failure === 'lost') for (const i of pending) unknown.set(i, error.message);
      continue;
    }
    const items = batchItems(reply, pending.length);
    if (items !== undefined) {
      const next: number[] = [];
      items.forEach((item, k) => {
        const i = pending[k]!;
        if (item.status >= 200 && item.status < 500 && isCommitAnswer(item.body)) {
          results[i] = { ok: true, result: item.body };
          return;
        }
        const error = errorFromReply(item);
        if (error.code === 'store_unavailable') {
          lastError = error; // nothing changed for this one: sent again
        } else if (error.code === 'outcome_unknown' || item.status >= 500) {
          unknown.set(i, error.message);
          lastError = error;
        } else {
          results[i] = { ok: false, error };
          return;
        }
        next.push(i);
      });
      pending = next;
      continue;
    }
    const error = errorFromReply(reply);
    if (nothingChanged(reply)) {
      lastError = error;
      continue;
    }
    if (reply.status < 500 && !leavesOutcomeUnknown(reply) && error.code !== 'outcome_unknown') {
      // Refused whole, before any commit was looked at: nothing changed.
      if (refusedAsBatch(reply)) {
        const each = await Promise.all(pending.map((i) => alone(link, requests[i]!)));
        pending.forEach((i, k) => (results[i] = each[k]!));
      } else {
        for (const i of pending) results[i] = { ok: false, error };
      }
      pending = [];
      break;
    }
    for (const i of pending) unknown.set(i, error.message);
    lastError = error;
  }
  await Promise.all(
    pending.map(async (i) => {
      results[i] = await unsettled(link, requests[i]!, unknown.get(i), lastError);
    }),
  );
  return results as CommitItemResult[];
}

/** A commit sent alone, its answer or error as an item. */
async function alone(link: BatchLink, request: CommitRequest): Promise<CommitItemResult> {
  try {
    return { ok: true, result: await link.alone(request) };
  } catch (error) {
    if (error instanceof FencegateError) return { ok: false, error };
    throw error;
  }
}

/**
 * A batch the server did not take as one (an invalid body, a body over its limit, a server without
 * the route): each commit alone gets its own answer. Nothing was applied.
 */
function refusedAsBatch(reply: Reply): boolean {
  return reply.status === 400 || reply.status === 404 || reply.status === 413;
}

/** The items of a batch's answer, one per commit sent; undefined for any other answer. */
function batchItems(reply: Reply, expected: number): Reply[] | undefined {
  if (reply.status !== 200) return undefined;
  const items = (reply.body as { items?: unknown } | undefined)?.items;
  if (!Array.isArray(items) || items.length !== expected) return undefined;
  const replies = items.map((item: unknown) => {
    const { status, body } = (item ?? {}) as { status?: unknown; body?: unknown };
    return typeof status === 'number' ? { status, body } : undefined;
  });
  return replies.every((item) => item !== undefined) ? replies : undefined;
}

/** An item still pending after the retries: settled when its outcome is unknown. */
async function unsettled(
  link: BatchLink,
  request: CommitRequest,
  why: string | undefined,
  lastError: FencegateError | undefined,
): Promise<CommitItemResult> {
  if (why === undefined) {
    return {
      ok: false,
      error:
        lastError ??
        new FencegateError('store_unavailable', `could not reach fencegate at ${link.url}`),
    };
  }
  const settled = await link.settle(request.operationId);
  if (settled !== undefined) return { ok: true, result: settled };
  return { ok: false, error: unknownCommit(request.operationId, why) };
}

/** A commit whose outcome is unknown and could not be settled. */
export function unknownCommit(operationId: string, why: string): FencegateError {
  return new FencegateError(
    'outcome_unknown',
    `the outcome of commit ${operationId} is unknown (${why}); settle it with abandonOperation('${operationId}') or send the same commit again`,
    { operationId },
  );
}
