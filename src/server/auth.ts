/**
 * Who is calling: the bearer token is looked up by its hash (through the server's TokenCache,
 * which honours revocation) and checked against the route's requirement. The tenant always comes
 * from the token, never from the request.
 */
import { takeOverAllowed } from '../core/take-over-right.js';
import { FencegateError } from '../errors.js';
import type { TokenRecord, TokenRole } from '../types.js';
import type { RouteAuth } from './route.js';
import type { TokenCache } from './token-cache.js';
import { ADMIN_TENANT, hashToken, sameHash, UNKNOWN_TOKEN_MESSAGE } from './tokens.js';

export type Principal =
  | { kind: 'admin'; tokenId: string | null }
  | {
      kind: 'tenant';
      tenant: string;
      role: TokenRole;
      tokenId: string;
      /** Scope prefixes a worker token may take over; empty for none. */
      mayTakeOver: readonly string[];
    };

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

/**
 * Turns the Authorization header into the caller. The admin token is compared by its digest (the
 * one every request computes anyway), in constant time.
 */
export class Authenticator {
  readonly #tokens: TokenCache;
  readonly #adminTokenHash: string | undefined;

  constructor(tokens: TokenCache, adminToken: string | undefined) {
    this.#tokens = tokens;
    this.#adminTokenHash = adminToken === undefined ? undefined : hashToken(adminToken);
  }

  /**
   * The caller: at once when the token's lookup is still remembered (most requests), otherwise
   * once the store has answered.
   */
  authenticate(authorization: string | undefined): Principal | Promise<Principal> {
    const hash = hashToken(bearerToken(authorization));
    if (this.#adminTokenHash !== undefined && sameHash(hash, this.#adminTokenHash))
      return { kind: 'admin', tokenId: null };
    const cached = this.#tokens.cached(hash);
    if (cached !== undefined) return principalOf(cached);
    return this.#tokens.findToken(hash).then((record) => {
      if (record === null) throw new FencegateError('unauthorized', UNKNOWN_TOKEN_MESSAGE);
      return principalOf(record);
    });
  }
}

function bearerToken(authorization: string | undefined): string {
  if (authorization === undefined || authorization === '') {
    throw new FencegateError(
      'unauthorized',
      'missing Authorization header; send Authorization: Bearer <token>',
    );
  }
  const token = BEARER.exec(authorization)?.[1];
  if (token === undefined) {
    throw new FencegateError('unauthorized', 'the Authorization header must be Bearer <token>');
  }
  return token;
}

function principalOf(record: TokenRecord): Principal {
  if (record.tenant === ADMIN_TENANT) return { kind: 'admin', tokenId: record.id };
  return {
    kind: 'tenant',
    tenant: record.tenant,
    role: record.role,
    tokenId: record.id,
    mayTakeOver: record.mayTakeOver ?? [],
  };
}

/**
 * Whether the caller may call a route that needs `required`. A route open to the take-over right
 * (`takeOverRight`) also admits a worker token that has one; the handler then checks the scope
 * with authorizeTakeover.
 */
export function authorize(required: RouteAuth, principal: Principal, takeOverRight = false): void {
  if (required === 'public') return;
  if (required === 'admin') {
    if (principal.kind !== 'admin') {
      throw new FencegateError('forbidden', 'this endpoint needs the admin token');
    }
    return;
  }
  if (principal.kind !== 'tenant') {
    throw new FencegateError(
      'forbidden',
      'the admin token only manages tokens; use a worker or operator token of a tenant',
    );
  }
  if (required === 'operator' && principal.role !== 'operator') {
    if (takeOverRight && principal.mayTakeOver.length > 0) return;
    throw new FencegateError(
      'forbidden',
      takeOverRight
        ? 'a takeover needs an operator token, or a worker token created with mayTakeOver covering the scope; this worker token has no take-over right'
        : 'this endpoint needs an operator token; this is a worker token',
    );
  }
}

/**
 * A takeover of `scope` by this caller: an operator may take over any scope of its tenant; a
 * worker only a scope under one of its take-over prefixes. Answers the worker token's id (for the
 * audit entry), or null for an operator.
 */
export function authorizeTakeover(principal: Principal | null, scope: string): string | null {
  if (principal?.kind !== 'tenant') throw new Error('a takeover needs a tenant token');
  if (principal.role === 'operator') return null;
  if (!takeOverAllowed(principal.mayTakeOver, scope)) {
    throw new FencegateError(
      'forbidden',
      `this worker token may take over only scopes starting with ${principal.mayTakeOver.map((p) => JSON.stringify(p)).join(', ') || 'nothing'}; taking over ${scope} needs an operator token or a worker token whose mayTakeOver covers it`,
      { scope },
    );
  }
  return principal.tokenId;
}
