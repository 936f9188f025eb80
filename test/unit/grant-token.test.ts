/**
 * Who may act on a grant as its holder, as core decides it with no store: the worker token the
 * grant is bound to, an operator, a worker whose take-over right covers the scope, and a request
 * made in process; a grant bound to no token (an operator's, a cutover's, one made in process, or
 * a row written before grants recorded a token, which has no field at all) is open to every
 * worker. The same rules over HTTP on every store are in test/server/take-over-right.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { mayActOnGrant, type Caller } from '../../src/core/grant-token.js';
import { decideAcquire, decideRelease, decideRenew } from '../../src/core/lease-rules.js';

const owner: Caller = { tokenId: 'tok_owner', role: 'worker', mayTakeOver: [] };
const other: Caller = { tokenId: 'tok_other', role: 'worker', mayTakeOver: [] };
const covering: Caller = { tokenId: 'tok_right', role: 'worker', mayTakeOver: ['jobs/'] };
const operator: Caller = { tokenId: 'tok_op', role: 'operator', mayTakeOver: [] };

const live = {
  fence: 3,
  holder: 'replica-1',
  leaseExpiresAt: 2_000,
  policyVersion: null,
  status: 'active' as const,
};

describe('who may act on a grant', () => {
  it('admits the bound token, an operator, a covering take-over right and the process; no one else', () => {
    for (const caller of [owner, operator, covering, undefined]) {
      expect(mayActOnGrant(caller, 'jobs/1', 'tok_owner')).toBe(true);
    }
    expect(mayActOnGrant(other, 'jobs/1', 'tok_owner')).toBe(false);
    expect(mayActOnGrant(covering, 'orders/1', 'tok_owner')).toBe(false);
  });

  it('leaves a grant bound to no token, or from a row without the field, open to every worker', () => {
    expect(mayActOnGrant(other, 'orders/1', null)).toBe(true);
    expect(mayActOnGrant(other, 'orders/1', undefined)).toBe(true);
    const request = { holder: 'replica-1', fence: 3, ttlMs: 1_000 };
    expect(decideRenew('orders/1', live, request, 1_000, other).ok).toBe(true);
    expect(decideRelease('orders/1', live, request, other).ok).toBe(true);
  });

  it('refuses renew, release and a same-holder acquire of a bound grant as not_holder naming its token', () => {
    const bound = { ...live, grantTokenId: 'tok_owner' };
    const request = { holder: 'replica-1', fence: 3, ttlMs: 1_000 };
    for (const decision of [
      decideRenew('orders/1', bound, request, 1_000, other),
      decideRelease('orders/1', bound, request, other),
      decideAcquire('orders/1', bound, request, 1_000, other),
    ]) {
      expect(decision.ok).toBe(false);
      if (decision.ok) continue;
      expect(decision.error).toMatchObject({
        code: 'not_holder',
        details: { grantTokenId: 'tok_owner', holder: 'replica-1', currentFence: 3 },
      });
    }
    // Another holder is still answered as before: lease_held, not_holder without a token.
    const elsewhere = { ...request, holder: 'replica-2' };
    expect(decideAcquire('orders/1', bound, elsewhere, 1_000, other)).toMatchObject({
      ok: false,
      error: { code: 'lease_held' },
    });
    expect(decideRelease('orders/1', bound, elsewhere, other)).toMatchObject({
      ok: false,
      error: { code: 'not_holder', details: { holder: 'replica-1', currentFence: 3 } },
    });
  });
});
