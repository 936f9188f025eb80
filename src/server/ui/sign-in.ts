/**
 * Who may open the dashboard: an operator token of a tenant, looked up by its hash like any bearer
 * token. The admin token only manages tokens, and a worker token does not see operator panels.
 */
import { FencegateError } from '../../errors.js';
import type { Store } from '../../store/store.js';
import { ADMIN_TENANT, hashToken, sameSecret, UNKNOWN_TOKEN_MESSAGE } from '../tokens.js';
import type { Session } from './sessions.js';

const MAX_TOKEN_LENGTH = 512;

export async function operatorSession(
  pasted: unknown,
  store: Store,
  adminToken: string | undefined,
): Promise<Omit<Session, 'expiresAt'>> {
  const token = typeof pasted === 'string' ? pasted.trim() : '';
  if (token === '' || token.length > MAX_TOKEN_LENGTH || /\s/.test(token)) {
    throw new FencegateError('unauthorized', 'paste an operator token (fg_…) to sign in');
  }
  if (adminToken !== undefined && sameSecret(token, adminToken)) {
    throw new FencegateError(
      'forbidden',
      'the admin token only manages tokens; use an operator token',
    );
  }
  const tokenHash = hashToken(token);
  const record = await store.findToken(tokenHash);
  if (record === null) throw new FencegateError('unauthorized', UNKNOWN_TOKEN_MESSAGE);
  if (record.tenant === ADMIN_TENANT) {
    throw new FencegateError(
      'forbidden',
      'the admin token only manages tokens; use an operator token',
    );
  }
  if (record.role !== 'operator') {
    throw new FencegateError(
      'forbidden',
      'the dashboard needs an operator token; this is a worker token',
    );
  }
  return { tenant: record.tenant, tokenId: record.id, tokenHash };
}
