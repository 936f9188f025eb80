/**
 * Who is calling: the bearer token is looked up by its hash (through the server's TokenCache,
 * which honours revocation) and checked against the route's requirement. The tenant always comes
 * from the token, never from the request.
 */
import { FencegateError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { TokenRole } from '../types.js';
import type { RouteAuth } from './route.js';
import { ADMIN_TENANT, hashToken, sameSecret } from './tokens.js';

export type Principal =
  | { kind: 'admin'; tokenId: string | null }
  | { kind: 'tenant'; tenant: string; role: TokenRole; tokenId: string };

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

export async function authenticate(
  authorization: string | undefined,
  store: Pick<Store, 'findToken'>,
  adminToken: string | undefined,
): Promise<Principal> {
  if (authorization === undefined || authorization === '') {
    throw new FencegateError(
      'unauthorized',
      'missing Authorization header; send Authorization: Bearer <token>',
    );
  }
  const match = BEARER.exec(authorization);
  const token = match?.[1];
  if (token === undefined) {
    throw new FencegateError('unauthorized', 'the Authorization header must be Bearer <token>');
  }
  if (adminToken !== undefined && sameSecret(token, adminToken))
    return { kind: 'admin', tokenId: null };
  const record = await store.findToken(hashToken(token));
  if (record === null) throw new FencegateError('unauthorized', 'unknown token');
  if (record.tenant === ADMIN_TENANT) return { kind: 'admin', tokenId: record.id };
  return { kind: 'tenant', tenant: record.tenant, role: record.role, tokenId: record.id };
}

export function authorize(required: RouteAuth, principal: Principal): void {
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
    throw new FencegateError(
      'forbidden',
      'this endpoint needs an operator token; this is a worker token',
    );
  }
}
