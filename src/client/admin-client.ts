/**
 * FencegateAdminClient: token management over HTTP with the admin token (`/v1/admin/tokens`).
 * Creating a token is not resent after a lost reply (a second token would be made); listing and
 * deleting are, since a deletion that already happened answers `not_found` and changes nothing.
 */
import { serverBaseUrl } from './server-url.js';
import { FencegateError } from '../errors.js';
import { routeRequest, type ResolvedRequest } from './route-request.js';
import {
  errorFromReply,
  exchange,
  isSuccess,
  TransportError,
  unreachable,
  type Reply,
} from './transport.js';
import type { CreateTokenBody, TokenCreatedAnswer, TokenListAnswer } from './wire.js';

export interface FencegateAdminClientOptions {
  /** The server's base URL, e.g. http://127.0.0.1:7420. */
  url: string;
  /** The admin token (FENCEGATE_ADMIN_TOKEN, or one printed by a first run). */
  adminToken: string;
  /** Per request; default 10,000 ms. */
  timeoutMs?: number;
}

/** A new token's request: a worker may get `mayTakeOver`, the scope prefixes it may take over. */
export type CreateTokenRequest = CreateTokenBody;
/** The new token: `token` is shown only in this answer. */
export type CreatedToken = TokenCreatedAnswer;
export type TokenSummary = TokenListAnswer['items'][number];

export class FencegateAdminClient {
  readonly url: string;
  readonly #token: string;
  readonly #timeoutMs: number;

  constructor(options: FencegateAdminClientOptions) {
    this.url = serverBaseUrl(options.url);
    this.#token = options.adminToken;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** Creates a token of one tenant and one role; a worker's `mayTakeOver` lists its prefixes. */
  async createToken(request: CreateTokenRequest): Promise<CreatedToken> {
    return (await this.#send(routeRequest('createToken', { body: request }))) as CreatedToken;
  }

  /** Every token (one tenant's with `tenant`), oldest first; never a token or its hash. */
  async listTokens(tenant?: string): Promise<TokenSummary[]> {
    const answer = (await this.#send(
      routeRequest('listTokens', { query: { tenant } }),
    )) as TokenListAnswer;
    return answer.items;
  }

  /** Deletes a token; it stops working at once. `not_found` when no token has this id. */
  async deleteToken(id: string): Promise<void> {
    await this.#send(routeRequest('deleteToken', { params: { id } }));
  }

  /** Sent once more after a lost reply when its retry class allows a resend. */
  async #send({ method, path, kind, body }: ResolvedRequest): Promise<unknown> {
    const resend = kind !== 'write';
    const lostAnswer = (error: TransportError) =>
      new FencegateError(
        'outcome_unknown',
        `the answer of ${method} ${path} was lost (${error.message}); list the tokens to see whether it took effect`,
        {},
        { cause: error },
      );
    let reply: Reply;
    // The first attempt may have taken effect: its reply was lost.
    let lost = false;
    try {
      reply = await this.#exchange(method, path, body);
    } catch (error) {
      if (!(error instanceof TransportError)) throw error;
      lost = error.failure === 'lost';
      if (lost && !resend) throw lostAnswer(error);
      reply = await this.#exchange(method, path, body).catch((again: unknown) => {
        if (!(again instanceof TransportError)) throw again;
        throw lost ? lostAnswer(error) : unreachable(this.url, again);
      });
    }
    if (!isSuccess(reply)) {
      const refused = errorFromReply(reply);
      if (!lost) throw refused;
      // A refusal of the resend (not_found) may only say that the lost attempt did it.
      throw new FencegateError(refused.code, refused.message, {
        ...refused.details,
        afterLostReply: true,
      });
    }
    return reply.body;
  }

  #exchange(method: string, path: string, body: unknown): Promise<Reply> {
    return exchange(`${this.url}${path}`, {
      method,
      token: this.#token,
      timeoutMs: this.#timeoutMs,
      ...(body === undefined ? {} : { body }),
    });
  }
}
