/**
 * Grants bound to the token that made them (core/grant-token.ts), for subjects that hand over
 * their Store (capability `storeInProcess`): the store keeps a worker's token with its grant, so
 * another worker token naming the holder cannot renew, release, acquire it again or end it with a
 * commit, while an operator's grant stays open to every worker; audit entries name the token.
 */
import { describe, expect, it } from 'vitest';
import type { Caller } from '../../core/grant-token.js';
import { grantOfAnotherToken } from '../../core/refusal-messages.js';
import { validateCommit } from '../../core/validate.js';
import { LONG_TTL, expectCommitted, expectFailure } from './helpers.js';
import type { SubjectFixture } from './subject.js';

const SCOPE = 'bound/scope';
const owner: Caller = { tokenId: 'tok_owner', role: 'worker', mayTakeOver: [] };
const other: Caller = { tokenId: 'tok_other', role: 'worker', mayTakeOver: [] };
const covering: Caller = { tokenId: 'tok_cover', role: 'worker', mayTakeOver: ['bound/'] };
const operator: Caller = { tokenId: 'tok_operator', role: 'operator', mayTakeOver: [] };

export function grantTokenCases(fx: SubjectFixture): void {
  describe.skipIf(!fx.capabilities.storeInProcess)('grants bound to their token', () => {
    it('refuses another worker token naming the holder, and changes nothing', async () => {
      const { store, tenant } = fx.store;
      const request = { scope: SCOPE, holder: 'w1', ttlMs: LONG_TTL };
      const grant = await store.acquire(tenant, request, owner);
      const held = { scope: SCOPE, holder: 'w1', fence: grant.fence };
      const refusal = grantOfAnotherToken(SCOPE, 'w1', grant.fence, owner.tokenId);
      await expectFailure(store.release(tenant, held, other), refusal);
      await expectFailure(store.renew(tenant, { ...held, ttlMs: LONG_TTL }, other), refusal);
      await expectFailure(store.acquire(tenant, request, other), refusal);
      const commit = validateCommit({
        scope: SCOPE,
        fence: grant.fence,
        operationId: 'bound-release',
        writes: [{ name: 'result', expectRevision: 0, value: 1 }],
        release: true,
      });
      await expectFailure(store.commit(tenant, commit, other), refusal);
      expect(await store.getScope(tenant, SCOPE)).toMatchObject({
        holder: 'w1',
        fence: grant.fence,
        leaseExpiresAt: grant.leaseExpiresAt,
      });
      expect(await store.getOperation(tenant, 'bound-release')).toBeNull();

      // The grant's token, an operator, a covering take-over right and the process may act.
      await store.renew(tenant, { ...held, ttlMs: LONG_TTL }, owner);
      await store.renew(tenant, { ...held, ttlMs: LONG_TTL }, operator);
      await store.renew(tenant, { ...held, ttlMs: LONG_TTL }, covering);
      expect((await store.acquire(tenant, request)).reacquired).toBe(true);
      expectCommitted(await store.commit(tenant, commit, owner));
      const audit = await store.readAudit(tenant, { scope: SCOPE });
      expect(audit.items.map((entry) => [entry.kind, entry.outcome, entry.tokenId])).toEqual([
        ['acquire', 'granted', 'tok_owner'],
        ['release', 'rejected', 'tok_other'],
        ['renew', 'rejected', 'tok_other'],
        ['acquire', 'rejected', 'tok_other'],
        ['commit', 'rejected', 'tok_other'],
        ['renew', 'ok', 'tok_owner'],
        ['renew', 'ok', 'tok_operator'],
        ['renew', 'ok', 'tok_cover'],
        ['acquire', 'ok', undefined],
        ['commit', 'committed', 'tok_owner'],
        ['release', 'ok', 'tok_owner'],
      ]);
    });

    it("leaves an operator's grant open to every worker token of the tenant", async () => {
      const { store, tenant } = fx.store;
      const grant = await store.takeover(tenant, SCOPE, { holder: 'controller' }, operator);
      const held = { scope: SCOPE, holder: 'controller', fence: grant.fence };
      await store.renew(tenant, { ...held, ttlMs: LONG_TTL }, other);
      await store.release(tenant, held, owner);
      expect(await store.getScope(tenant, SCOPE)).toMatchObject({ holder: null });
    });
  });
}
