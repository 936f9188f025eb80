/**
 * The Store methods no tenant-bound API has, for subjects that hand over their Store (capability
 * `storeInProcess`): tokens, the audit of every tenant, the tenants with open intents and the
 * intent counts, and the jobs ledger's rows.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../store/store.js';
import type { TokenRecord } from '../../types.js';
import { OperationIds, acquire, auditAfter, expectCommitted } from './helpers.js';
import type { ConformanceGate, SubjectFixture } from './subject.js';

function token(id: string, tenant: string, role: TokenRecord['role'] = 'operator') {
  return { id, tenant, role, label: `label of ${id}`, hash: `hash-${id}` };
}

async function commitIntent(gate: ConformanceGate, scope: string, effectKey: string) {
  const grant = await acquire(gate, scope, 'w1');
  expectCommitted(
    await gate.commit({
      scope,
      fence: grant.fence,
      operationId: new OperationIds(effectKey).next(),
      intents: [{ effectKey, target: 'crm', payload: {} }],
    }),
  );
}

/** Every tenant's audit, read from the store in pages of `limit`. */
async function wholeAudit(store: Store, limit: number) {
  const entries = [];
  let afterSeq = 0;
  for (;;) {
    const page = await store.readAudit(undefined, { afterSeq, limit });
    entries.push(...page.items);
    if (page.nextAfterSeq === null) return entries;
    afterSeq = page.nextAfterSeq;
  }
}

export function inProcessCases(fx: SubjectFixture): void {
  describe.skipIf(!fx.capabilities.storeInProcess)('store in process', () => {
    it('tokens: created, found by hash, listed oldest first per tenant, deleted once', async () => {
      const { store } = fx.store;
      expect(await store.countTokens()).toBe(0);
      const first = await store.createToken(token('tok_1', 'alpha'));
      expect(first).toMatchObject(token('tok_1', 'alpha'));
      expect(typeof first.createdAt).toBe('number');
      await store.createToken(token('tok_2', 'beta', 'worker'));
      await store.createToken(token('tok_3', 'alpha', 'worker'));

      expect(await store.findToken('hash-tok_2')).toMatchObject(token('tok_2', 'beta', 'worker'));
      expect(await store.findToken('hash-none')).toBeNull();
      expect(await store.countTokens()).toBe(3);
      expect((await store.listTokens()).map((t) => t.id)).toEqual(['tok_1', 'tok_2', 'tok_3']);
      expect((await store.listTokens('alpha')).map((t) => t.id)).toEqual(['tok_1', 'tok_3']);

      expect(await store.deleteToken('tok_1')).toBe(true);
      expect(await store.deleteToken('tok_1')).toBe(false);
      expect(await store.findToken('hash-tok_1')).toBeNull();
      expect(await store.countTokens()).toBe(2);
    });

    it('tokens: of several bootstraps of an empty store at once, exactly one stores its tokens', async () => {
      const { store } = fx.store;
      const answers = await Promise.all(
        ['a', 'b', 'c'].map((who) =>
          store.createTokensIfNone([
            token(`tok_${who}_worker`, 'dev', 'worker'),
            token(`tok_${who}_op`, 'dev'),
          ]),
        ),
      );
      const winners = answers.filter((answer) => answer !== null);
      expect(winners).toHaveLength(1);
      const ids = winners[0]!.map((t) => t.id);
      expect((await store.listTokens()).map((t) => t.id).sort()).toEqual([...ids].sort());
      expect(await store.createTokensIfNone([token('tok_late', 'dev')])).toBeNull();
      expect(await store.countTokens()).toBe(2);
    });

    it("every tenant's audit reads in one strictly increasing seq order, each tenant's a part of it", async () => {
      const { store, tenant, otherTenant } = fx.store;
      const { gate, other } = fx.subject;
      await Promise.all([
        commitIntent(gate, 'a/memory', 'fx-a'),
        commitIntent(other, 'b/memory', 'fx-b'),
        commitIntent(gate, 'c/memory', 'fx-c'),
      ]);
      const all = await wholeAudit(store, 2);
      const seqs = all.map((entry) => entry.seq);
      for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1]!);
      expect(all.filter((entry) => entry.tenant === tenant)).toEqual(await auditAfter(gate));
      expect(all.filter((entry) => entry.tenant === otherTenant)).toEqual(await auditAfter(other));
      expect(new Set(all.map((entry) => entry.tenant))).toEqual(new Set([tenant, otherTenant]));
    });

    it('lists the tenants with open intents in name order and counts intents by status', async () => {
      const { store, tenant, otherTenant } = fx.store;
      const { gate, other } = fx.subject;
      expect(await store.listTenantsWithOpenIntents()).toEqual([]);
      await commitIntent(gate, 'a/memory', 'fx-a1');
      await commitIntent(gate, 'b/memory', 'fx-a2');
      await commitIntent(other, 'a/memory', 'fx-b1');
      expect(await store.listTenantsWithOpenIntents()).toEqual([tenant, otherTenant].sort());
      expect(await store.countIntents(tenant)).toMatchObject({ pending: 2 });
      expect(await store.countIntents(undefined)).toMatchObject({ pending: 3 });

      const [claimed] = await other.claimIntents({ dispatcher: 'd1', ttlMs: 10_000, limit: 10 });
      // A claimed intent is still open: its delivery is not recorded yet.
      expect(await store.listTenantsWithOpenIntents()).toEqual([tenant, otherTenant].sort());
      await other.completeIntent(claimed!.effectKey, {
        claimFence: claimed!.claimFence,
        outcome: 'delivered',
      });
      expect(await store.listTenantsWithOpenIntents()).toEqual([tenant]);
      expect(await store.countIntents(otherTenant)).toMatchObject({ delivered: 1 });
      expect((await store.countIntents(otherTenant)).pending ?? 0).toBe(0);
      expect(await store.countIntents(undefined)).toMatchObject({ pending: 2, delivered: 1 });
    });

    it("the jobs ledger keeps each job's latest state, per scope and per tenant", async () => {
      const { store, tenant, otherTenant } = fx.store;
      const event = (jobId: string, scope: string, state: 'queued' | 'running' | 'succeeded') => ({
        jobId,
        scope,
        policyVersion: 'v7',
        fence: 1,
        state,
        attempt: 1,
      });
      await store.recordJobEvents(tenant, [event('j1', 'a/memory', 'queued')]);
      await store.recordJobEvents(tenant, [
        event('j1', 'a/memory', 'running'),
        event('j2', 'b/memory', 'queued'),
      ]);
      await store.recordJobEvents(tenant, [event('j1', 'a/memory', 'succeeded')]);
      await store.recordJobEvents(otherTenant, [event('j1', 'a/memory', 'queued')]);

      const jobs = await store.listJobs(tenant);
      expect(jobs.map((job) => [job.jobId, job.scope, job.state]).sort()).toEqual([
        ['j1', 'a/memory', 'succeeded'],
        ['j2', 'b/memory', 'queued'],
      ]);
      expect((await store.listJobs(tenant, ['b/memory'])).map((job) => job.jobId)).toEqual(['j2']);
      expect((await store.listJobs(otherTenant)).map((job) => job.state)).toEqual(['queued']);
    });
  });
}
