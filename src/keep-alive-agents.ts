/**
 * The keep-alive agents every outgoing HTTP request of the library shares: the client's exchanges
 * with a fencegate server and the dispatcher's webhook POSTs. A request sent on an idle connection
 * just as its server closes it is lost, and a lost write is an unknown outcome (a commit without an
 * operationId, a delivery to reconcile). Servers close idle connections after their keep-alive
 * timeout (Node's 5 s, Fastify's 72 s); Node's agent applies a server's `Keep-Alive: timeout` hint
 * only below its own `timeout`, so the agents close idle connections themselves before either.
 */
import {
  Agent as HttpAgent,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
  type RequestOptions,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** How long an idle connection is kept. */
export const IDLE_CONNECTION_MS = 4_000;
/** Idle connections kept per origin: enough for a client's or a dispatcher's batch in flight. */
const MAX_FREE_SOCKETS = 64;

const OPTIONS = { keepAlive: true, maxFreeSockets: MAX_FREE_SOCKETS, timeout: IDLE_CONNECTION_MS };
const httpAgent = new HttpAgent(OPTIONS);
const httpsAgent = new HttpsAgent(OPTIONS);

/** A request to `url` on the shared agent of its protocol. */
export function keepAliveRequest(
  url: URL,
  options: Omit<RequestOptions, 'agent'>,
  onAnswer: (answer: IncomingMessage) => void,
): ClientRequest {
  return url.protocol === 'https:'
    ? httpsRequest(url, { ...options, agent: httpsAgent }, onAnswer)
    : httpRequest(url, { ...options, agent: httpAgent }, onAnswer);
}
