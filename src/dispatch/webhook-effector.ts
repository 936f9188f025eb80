/**
 * The built-in webhook effector: POSTs an intent's payload as JSON to the one URL the operator
 * configured for its target, with `Idempotency-Key: <effectKey>`. Nothing in an intent can choose
 * the URL, and redirects are not followed, so no other address is ever called.
 *
 *   2xx                          delivered (providerRef from the answer's `providerRef` or `id`)
 *   408, 409, 429, 5xx           failed, retryable (Retry-After honoured as a hint)
 *   no connection made           failed, retryable (refused, no such host, TLS refused)
 *   other 4xx, 3xx               failed, not retryable
 *   no answer within timeoutMs   unknown: the receiver may have applied it
 *   connection lost otherwise    unknown: the request may have been sent and applied
 *
 * Error texts name the status or the network error code only: never the payload, the URL or a
 * header value.
 */
import type { Intent } from '../types.js';
import type { DeliveryContext, DeliveryResult, Effector } from './effector.js';
import { keepAlivePost } from './keep-alive-post.js';
import {
  fetchPost,
  isSuccess,
  PostTimedOut,
  type PostLimits,
  type WebhookAnswer,
} from './webhook-answer.js';

export interface WebhookTarget {
  type: 'webhook';
  /** http:// or https:// */
  url: string;
  /** Per attempt; a slower answer is an unknown outcome. */
  timeoutMs: number;
  /** Sent with every request (API keys, …); never logged. */
  headers: Record<string, string>;
}

export interface WebhookEffectorOptions {
  /** Defaults to node:http with keep-alive connections to each receiver (keep-alive-post.ts). */
  fetch?: typeof fetch;
}

const RETRYABLE_4XX = new Set([408, 409, 429]);
/**
 * Network errors raised before a connection carried any byte of the request. Any other error
 * (a reset, a socket closed by the peer) may come after the receiver read the request.
 */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_HAS_EXPIRED',
]);

export function webhookEffector(
  target: WebhookTarget,
  options: WebhookEffectorOptions = {},
): Effector {
  const customFetch = options.fetch;
  const send =
    customFetch === undefined
      ? keepAlivePost
      : (url: URL, headers: Record<string, string>, body: string, limits: PostLimits) =>
          fetchPost(customFetch, url, headers, body, limits);
  const url = new URL(target.url);
  const timeoutMs = target.timeoutMs;
  // Header names lowercased once, so the effect's own key replaces any configured one.
  const configured: Record<string, string> = { 'content-type': 'application/json' };
  for (const [name, value] of Object.entries(target.headers))
    configured[name.toLowerCase()] = value;

  async function post(intent: Intent, context: DeliveryContext): Promise<DeliveryResult> {
    let answer: WebhookAnswer;
    try {
      // The request ends at the timeout or when the claim is about to lapse, whichever comes first.
      answer = await send(
        url,
        // Set last: the effect's own key, whatever the configuration says.
        { ...configured, 'idempotency-key': context.effectKey },
        JSON.stringify(intent.payload ?? null),
        { timeoutMs, signal: context.signal },
      );
    } catch (error) {
      if (error instanceof PostTimedOut) return { status: 'unknown', error: error.message };
      if (context.signal.aborted) {
        return { status: 'unknown', error: 'abandoned: the claim was about to lapse' };
      }
      const code = networkCode(error);
      // Only a connection that was never made proves nothing was sent.
      if (NOT_SENT_CODES.has(code)) {
        return { status: 'failed', retryable: true, error: `network error (${code})` };
      }
      return { status: 'unknown', error: `connection lost after sending (${code})` };
    }
    return verdictOf(answer);
  }
  return { deliver: post };
}

function verdictOf(answer: WebhookAnswer): DeliveryResult {
  const status = answer.status;
  if (isSuccess(status)) {
    const providerRef = readProviderRef(answer.body);
    return providerRef === undefined
      ? { status: 'delivered' }
      : { status: 'delivered', providerRef };
  }
  const error = `HTTP ${status}${answer.statusText ? ` ${answer.statusText}` : ''}`;
  if (status >= 300 && status < 400) {
    return { status: 'failed', retryable: false, error: `${error}: redirects are not followed` };
  }
  if (status >= 400 && status < 500 && !RETRYABLE_4XX.has(status)) {
    return { status: 'failed', retryable: false, error };
  }
  const retryAfterMs = parseRetryAfter(answer.retryAfter);
  return retryAfterMs === undefined
    ? { status: 'failed', retryable: true, error }
    : { status: 'failed', retryable: true, error, retryAfterMs };
}

/** The answer's `providerRef` or `id`, when it is JSON and has one; the effect is delivered either way. */
function readProviderRef(text: string): string | undefined {
  if (text.length === 0) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null) return undefined;
  const fields = body as Record<string, unknown>;
  for (const candidate of [fields.providerRef, fields.id]) {
    if (typeof candidate === 'string' && candidate.length > 0 && candidate.length <= 256) {
      return candidate;
    }
    if (typeof candidate === 'number' && Number.isFinite(candidate)) return String(candidate);
  }
  return undefined;
}

function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d{1,9}$/.test(trimmed)) return Number(trimmed) * 1000;
  return undefined;
}

/** The system error code (ECONNREFUSED, ECONNRESET, …) under fetch's TypeError, else its name. */
function networkCode(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code.length > 0) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return error instanceof Error ? error.name : 'unknown';
}
