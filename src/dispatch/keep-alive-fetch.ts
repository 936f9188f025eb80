/**
 * The webhook effector's default transport: a `fetch` over node:http/https with keep-alive
 * agents, so deliveries to one receiver reuse a few open connections. Measured on Node 20 against
 * a local receiver, the built-in fetch managed about a tenth of node:http's POST rate at 16 in
 * flight (see BENCHMARKS.md, dispatch). Only what the effector uses is supported: a string body,
 * headers, an abort signal; redirects are never followed (node:http does not follow them).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** Idle connections kept per receiver: enough for a dispatcher's batch in flight. */
const MAX_FREE_SOCKETS = 64;
const httpAgent = new HttpAgent({ keepAlive: true, maxFreeSockets: MAX_FREE_SOCKETS });
const httpsAgent = new HttpsAgent({ keepAlive: true, maxFreeSockets: MAX_FREE_SOCKETS });

/** An answer is read up to this size; the effector itself looks at 64 KiB at most. */
const MAX_ANSWER_BYTES = 1024 * 1024;
/** Statuses whose answers have no body (a Response refuses one). */
const NULL_BODY = new Set([101, 204, 205, 304]);

export function keepAliveFetch(
  input: string | URL | Request,
  init: RequestInit = {},
): Promise<Response> {
  const url = new URL(input instanceof Request ? input.url : input);
  const secure = url.protocol === 'https:';
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, name) => (headers[name] = value));
  const body = typeof init.body === 'string' ? init.body : undefined;
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  const signal = init.signal ?? undefined;
  return new Promise<Response>((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      return;
    }
    const options = {
      method: init.method ?? 'GET',
      headers,
      ...(signal === undefined ? {} : { signal }),
    };
    const onAnswer = (answer: IncomingMessage): void => {
      const status = answer.statusCode ?? 0;
      if (status < 200 || status > 599) {
        answer.destroy();
        reject(new Error(`unexpected status ${status}`));
        return;
      }
      const answerHeaders = new Headers();
      for (const [name, value] of Object.entries(answer.headers)) {
        if (typeof value === 'string') answerHeaders.set(name, value);
        else if (Array.isArray(value)) for (const item of value) answerHeaders.append(name, item);
      }
      // Read here, not through a web stream: converting the socket to one cost most of the rate.
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = (): void =>
        resolve(
          new Response(NULL_BODY.has(status) ? null : Buffer.concat(chunks), {
            status,
            statusText: answer.statusMessage ?? '',
            headers: answerHeaders,
          }),
        );
      answer.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_ANSWER_BYTES) chunks.push(chunk);
        else {
          // Too long to matter: the connection is dropped rather than drained.
          answer.destroy();
          finish();
        }
      });
      answer.on('end', finish);
      answer.on('error', reject);
    };
    const sent = secure
      ? httpsRequest(url, { ...options, agent: httpsAgent }, onAnswer)
      : httpRequest(url, { ...options, agent: httpAgent }, onAnswer);
    sent.on('error', reject);
    sent.end(body);
  });
}
