/**
 * Who may act on a grant as its holder. A grant records the worker token that made it
 * (`grantTokenId` of the scope row); its renew, release and same-holder acquire are then open only
 * to that token, to an operator, and to a worker token whose take-over right covers the scope. A
 * holder name is read by anyone of the tenant, so it cannot be what admits them.
 *
 * A grant made by an operator (a takeover, a cutover) or in process binds no token: a controller
 * renewing a cutover's grant, or a run releasing a thread an operator took over, names its holder
 * with a worker token of its own. Grants made before tokens were recorded bind none either, until
 * the scope's next grant. An in-process caller (no token) is the store's owner and may act on any.
 */
import type { TokenRole } from '../types.js';
import { takeOverAllowed } from './take-over-right.js';

/** The token a request to the store was made with; absent for a request made in process. */
export interface Caller {
  tokenId: string;
  role: TokenRole;
  /** Scope prefixes of a worker token's take-over right (take-over-right.ts); empty for none. */
  mayTakeOver: readonly string[];
}

/** The token a grant made by this caller binds: a worker's own; none for an operator or in process. */
export function boundToken(caller: Caller | undefined): string | null {
  return caller?.role === 'worker' ? caller.tokenId : null;
}

/** Whether the caller may act as the holder of a grant bound to `grantTokenId` on `scope`. */
export function mayActOnGrant(
  caller: Caller | undefined,
  scope: string,
  grantTokenId: string | null | undefined,
): boolean {
  const unbound = grantTokenId === null || grantTokenId === undefined;
  if (unbound || caller === undefined || caller.role === 'operator') return true;
  return caller.tokenId === grantTokenId || takeOverAllowed(caller.mayTakeOver, scope);
}

/** Whether the caller is a worker token: a deleted scope is re-created only by an operator. */
export function isWorker(caller: Caller | undefined): boolean {
  return caller?.role === 'worker';
}

/** The audit field that names the caller's token: absent for a request made in process. */
export function tokenField(caller: Caller | undefined): { tokenId?: string } {
  return caller === undefined ? {} : { tokenId: caller.tokenId };
}
