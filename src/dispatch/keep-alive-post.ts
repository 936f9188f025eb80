/**
 * The webhook effector's default transport: a POST over node:http/https with the library's
 * keep-alive agents (keep-alive-agents.ts), so deliveries to one receiver reuse a few open
 * connections, and the answer read from the socket into a buffer. No fetch Response, Headers or web stream is made per delivery: on Node 20 the
 * built-in fetch managed about a tenth of node:http's POST rate at 16 in flight, and wrapping
 * node:http's answer in a Response still cost a good part of it (see BENCHMARKS.md, dispatch).
 * Neither is an AbortController: the request is destroyed by its own timer or by the caller's
 * signal directly, which saves a signal and node:http's listeners on it per delivery.
 * Redirects are never followed (node:http does not follow them).
 */
import type { IncomingMessage } from 'node:http';
import { keepAliveRequest } from '../keep-alive-agents.js';
import {
  isSuccess,
  MAX_ANSWER_BYTES,
  PostTimedOut,
  type PostLimits,
  type WebhookAnswer,
} from './webhook-answer.js';

/**
 * POSTs `body` to `url` with `headers`, a fresh object content-length is added to; answers once the whole
 * answer is read (a success's body up to MAX_ANSWER_BYTES; a longer one drops the connection
 * rather than draining it). Rejects with PostTimedOut after `limits.timeoutMs`, or with the
 * signal's reason once `limits.signal` aborts, at any point before that.
 */
export function keepAlivePost(
  url: URL,
  headers: Record<string, string>,
  body: string,
  limits: PostLimits,
): Promise<WebhookAnswer> {
  return new Promise<WebhookAnswer>((resolve, reject) => {
    const { signal, timeoutMs } = limits;
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    headers['content-length'] = String(Buffer.byteLength(body));
    const onAnswer = (answer: IncomingMessage): void => {
      const status = answer.statusCode ?? 0;
      if (status < 200 || status > 599) {
        answer.destroy();
        fail(new Error(`unexpected status ${status}`));
        return;
      }
      const retryAfter = answer.headers['retry-after'];
      const finish = (text: string): void => {
        done();
        resolve({
          status,
          statusText: answer.statusMessage ?? '',
          retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
          body: text,
        });
      };
      answer.on('error', fail);
      if (!isSuccess(status)) {
        // Read to the end so the connection is reused; nobody looks at it.
        answer.resume();
        answer.on('end', () => finish(''));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      answer.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_ANSWER_BYTES) chunks.push(chunk);
        else {
          // Too long to matter: the connection is dropped rather than drained.
          answer.destroy();
          finish('');
        }
      });
      answer.on('end', () =>
        finish(
          chunks.length === 1
            ? chunks[0]!.toString('utf8')
            : Buffer.concat(chunks).toString('utf8'),
        ),
      );
    };
    const options = { method: 'POST', headers };
    const sent = keepAliveRequest(url, options, onAnswer);
    const stop = (reason: Error): void => {
      sent.destroy(reason);
      fail(reason);
    };
    const timer = setTimeout(() => stop(new PostTimedOut(timeoutMs)), timeoutMs);
    const onAbort = (): void => stop(abortReason(signal));
    signal.addEventListener('abort', onAbort);
    // Whichever settles first wins; the timer and the listener go with it.
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
    function fail(error: Error): void {
      done();
      reject(error);
    }
    sent.on('error', fail);
    sent.end(body);
  });
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('aborted');
}
