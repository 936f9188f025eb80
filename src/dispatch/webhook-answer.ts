/**
 * What the webhook effector reads of a receiver's answer, from either transport: the built-in
 * keep-alive POST (keep-alive-post.ts) or a caller's `fetch`.
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
  body(): Promise<string>;
}

/** A success answer's body is read up to this size to find a providerRef. */
export const MAX_ANSWER_BYTES = 64 * 1024;

export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** A fetch Response as a WebhookAnswer; the body of any other status than 2xx is discarded. */
export async function answerOf(response: Response): Promise<WebhookAnswer> {
  const { status, statusText } = response;
  const retryAfter = response.headers.get('retry-after');
  if (!isSuccess(status)) {
    await discard(response);
    return { status, statusText, retryAfter, body: () => Promise.resolve('') };
  }
  return { status, statusText, retryAfter, body: () => readBounded(response) };
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
