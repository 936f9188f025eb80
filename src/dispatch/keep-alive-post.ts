/**
 * The webhook effector's default transport: a POST over node:http/https with keep-alive agents,
 * so deliveries to one receiver reuse a few open connections, and the answer read from the socket
 * into a buffer. No fetch Response, Headers or web stream is made per delivery: on Node 20 the
 * built-in fetch managed about a tenth of node:http's POST rate at 16 in flight, and wrapping
 * node:http's answer in a Response still cost a good part of it (see BENCHMARKS.md, dispatch).
 * Redirects are never followed (node:http does not follow them).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isSuccess, MAX_ANSWER_BYTES, type WebhookAnswer } from './webhook-answer.js';

/** Idle connections kept per receiver: enough for a dispatcher's batch in flight. */
const MAX_FREE_SOCKETS = 64;
const httpAgent = new HttpAgent({ keepAlive: true, maxFreeSockets: MAX_FREE_SOCKETS });
const httpsAgent = new HttpsAgent({ keepAlive: true, maxFreeSockets: MAX_FREE_SOCKETS });

/**
 * POSTs `body` to `url`; answers once the whole answer is read (a success's body up to
 * MAX_ANSWER_BYTES; a longer one drops the connection rather than draining it). `signal` aborts
 * the request at any point before that.
 */
export function keepAlivePost(
  url: URL,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<WebhookAnswer> {
  return new Promise<WebhookAnswer>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      return;
    }
    const onAnswer = (answer: IncomingMessage): void => {
      const status = answer.statusCode ?? 0;
      if (status < 200 || status > 599) {
        answer.destroy();
        reject(new Error(`unexpected status ${status}`));
        return;
      }
      const retryAfter = answer.headers['retry-after'];
      const finish = (text: string): void =>
        resolve({
          status,
          statusText: answer.statusMessage ?? '',
          retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
          body: () => Promise.resolve(text),
        });
      if (!isSuccess(status)) {
        // Read to the end so the connection is reused; nobody looks at it.
        answer.resume();
        answer.on('end', () => finish(''));
        answer.on('error', reject);
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
      answer.on('end', () => finish(Buffer.concat(chunks).toString('utf8')));
      answer.on('error', reject);
    };
    const options = {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      signal,
    };
    const sent =
      url.protocol === 'https:'
        ? httpsRequest(url, { ...options, agent: httpsAgent }, onAnswer)
        : httpRequest(url, { ...options, agent: httpAgent }, onAnswer);
    sent.on('error', reject);
    sent.end(body);
  });
}
