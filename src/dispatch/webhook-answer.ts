/**
 * What the webhook effector reads of a receiver's answer, from either transport: the built-in
 * keep-alive POST (keep-alive-post.ts) or a caller's `fetch`, and the limits it sends under.
 */
export interface WebhookAnswer {
  status: number;
  statusText: string;
  /** The Retry-After header, when present. */
  retryAfter: string | null;
  /**
   * A success's body (2xx), at most MAX_ANSWER_BYTES of it: '' when longer or unreadable. The
   * answers of other statuses are not read.
   */
  body: string;
}

/** When a POST stops waiting: after `timeoutMs`, or once `signal` aborts. */
export interface PostLimits {
  timeoutMs: number;
  signal: AbortSignal;
}

/** A POST that had no answer within its timeout: the receiver may have applied it. */
export class PostTimedOut extends Error {
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'PostTimedOut';
  }
}

/** A success answer's body is read up to this size to find a providerRef. */
export const MAX_ANSWER_BYTES = 64 * 1024;

export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** POSTs through a caller's `fetch`, under the same limits as the built-in transport. */
export async function fetchPost(
  fetchImpl: typeof fetch,
  url: URL,
  headers: Record<string, string>,
  body: string,
  limits: PostLimits,
): Promise<WebhookAnswer> {
  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, limits.timeoutMs);
  const onAbort = (): void => abort.abort();
  limits.signal.addEventListener('abort', onAbort);
  if (limits.signal.aborted) abort.abort();
  try {
    const response = await fetchImpl(url, {
      method: 'POST',
      headers,
      body,
      signal: abort.signal,
      redirect: 'manual',
    });
    return await answerOf(response);
  } catch (error) {
    throw timedOut ? new PostTimedOut(limits.timeoutMs) : error;
  } finally {
    clearTimeout(timer);
    limits.signal.removeEventListener('abort', onAbort);
  }
}

/** A fetch Response as a WebhookAnswer; the body of any other status than 2xx is discarded. */
async function answerOf(response: Response): Promise<WebhookAnswer> {
  const { status, statusText } = response;
  const retryAfter = response.headers.get('retry-after');
  if (!isSuccess(status)) {
    await discard(response);
    return { status, statusText, retryAfter, body: '' };
  }
  let body: string;
  try {
    body = await readBounded(response);
  } catch {
    // The status already says delivered; a body cut short only costs the reference.
    body = '';
  }
  return { status, statusText, retryAfter, body };
}

async function readBounded(response: Response): Promise<string> {
  if (response.body === null) return '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel();
      return '';
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Frees the connection without reading an answer nobody needs. */
async function discard(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // Nothing to free.
  }
}
